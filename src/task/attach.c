/*
 * A task's attached images (attach.h).  The names are the client's, so
 * they are made safe before they name a file, and prefixed by their
 * index so two of the same name do not collide.  The type is the first
 * bytes' alone: a name's extension says nothing.  Rejected: a column of
 * the task's row (a migration for what the directory already holds),
 * and the app directory (the agent's commits and the export would carry
 * the images).
 */
#include "task/attach.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ws/workspace.h"
#include "ws/wsfs.h"

const char *
task_image_type(const unsigned char *p, size_t n)
{
	if (n >= 8 && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0)
		return "image/png";
	if (n >= 3 && memcmp(p, "\xff\xd8\xff", 3) == 0)
		return "image/jpeg";
	if (n >= 6 &&
	    (memcmp(p, "GIF87a", 6) == 0 || memcmp(p, "GIF89a", 6) == 0))
		return "image/gif";
	if (n >= 12 && memcmp(p, "RIFF", 4) == 0 &&
	    memcmp(p + 8, "WEBP", 4) == 0)
		return "image/webp";
	return NULL;
}

static void
safe_name(size_t index, const char *name, char *out, size_t len)
{
	size_t n = (size_t)snprintf(out, len, "%zu-", index + 1);

	while (*name == '.')
		name++;
	for (; *name && n + 1 < len && n < TASK_IMAGE_NAME_MAX; name++) {
		unsigned char c = (unsigned char)*name;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		          (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		          c == '-';
		out[n++] = ok ? (char)c : '_';
	}
	out[n] = '\0';
	if (n <= 2) /* nothing but the index */
		snprintf(out, len, "%zu-image", index + 1);
}

int
task_attach_write(const struct wsnode_ref *at, const char *id,
                  const struct task_image *im, size_t n, struct err *e)
{
	char rel[96 + TASK_IMAGE_NAME_MAX], name[TASK_IMAGE_NAME_MAX + 8];
	bool remote = wsnode_remote(at->sb);
	int fd = remote ? -1 : wsfs_open_dir(at->ws, ".", e), rc = 0;

	if (fd < 0 && !remote)
		return -1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		safe_name(i, im[i].name ? im[i].name : "", name, sizeof(name));
		snprintf(rel, sizeof(rel), "%s/%s/%s", TASK_ATTACH_DIR, id,
		         name);
		rc = remote ? wsnode_write(at->wn, at->sb, rel, im[i].data,
		                           im[i].len, 0644, e)
		            : wsfs_write(fd, rel, im[i].data, im[i].len,
		                         WORKSPACE_UID, WORKSPACE_GID, e);
	}
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		task_attach_remove(at, id);
	return rc;
}

void
task_attach_remove(const struct wsnode_ref *at, const char *id)
{
	char rel[96];
	struct err e = {0};
	int fd;

	snprintf(rel, sizeof(rel), "%s/%s", TASK_ATTACH_DIR, id);
	if (wsnode_remote(at->sb)) {
		wsnode_delete(at->wn, at->sb, rel, &e);
		return;
	}
	if ((fd = wsfs_open_dir(at->ws, ".", &e)) < 0)
		return;
	wsfs_remove(fd, rel, true, &e);
	close(fd);
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(jv_str(jv_get(*(struct jv *const *)a, "name")),
	              jv_str(jv_get(*(struct jv *const *)b, "name")));
}

/* A remote task's attachments as wsfs_list gives them: [{path, type,
 * size}] of the files (at most TASK_IMAGES_MAX), sorted by name. */
static int
remote_list(const struct wsnode_ref *at, const char *rel, struct jv **out,
            struct err *e)
{
	const struct jv *files[TASK_IMAGES_MAX];
	size_t n = 0;
	char path[256];
	struct jv *ls;

	if (wsnode_list(at->wn, at->sb, rel, &ls, e) < 0)
		return -1;
	for (size_t i = 0; i < jv_len(ls) && n < TASK_IMAGES_MAX; i++)
		if (strcmp(jv_str(jv_get(jv_at(ls, i), "type")), "file") == 0)
			files[n++] = jv_at(ls, i);
	qsort(files, n, sizeof(files[0]), by_name);
	*out = jv_arr();
	for (size_t i = 0; i < n; i++) {
		struct jv *o = jv_obj();
		snprintf(path, sizeof(path), "%s/%s", rel,
		         jv_str(jv_get(files[i], "name")));
		jv_set_str(o, "path", path);
		jv_set_str(o, "type", "file");
		jv_set_int(o, "size", jv_int(jv_get(files[i], "size")));
		jv_push(*out, o);
	}
	jv_free(ls);
	return 0;
}

struct jv *
task_attach_list(const struct wsnode_ref *at, const char *id)
{
	struct jv *out = jv_arr(), *ls = NULL;
	char rel[96], path[256];
	struct err e = {0};
	bool truncated;
	int fd = -1;

	snprintf(rel, sizeof(rel), "%s/%s", TASK_ATTACH_DIR, id);
	if (wsnode_remote(at->sb)) {
		if (remote_list(at, rel, &ls, &e) < 0)
			goto out;
	} else if ((fd = wsfs_open_dir(at->ws, ".", &e)) < 0 ||
	           wsfs_list(fd, rel, false, &ls, &truncated, &e) < 0)
		goto out;
	for (size_t i = 0; i < jv_len(ls) && i < TASK_IMAGES_MAX; i++) {
		const struct jv *f = jv_at(ls, i);
		const char *p = jv_str(jv_get(f, "path"));
		const char *name =
		    p && strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
		const char *type = jv_str(jv_get(f, "type"));
		struct jv *o;
		if (name == NULL || type == NULL || strcmp(type, "file") != 0)
			continue;
		o = jv_obj();
		snprintf(path, sizeof(path), "%s/%s/%s", TASK_ATTACH_HOME, rel,
		         name);
		jv_set_str(o, "name", name);
		jv_set_str(o, "path", path);
		jv_set_int(o, "bytes", jv_int(jv_get(f, "size")));
		jv_push(out, o);
	}
out:
	jv_free(ls);
	if (fd >= 0)
		close(fd);
	return out;
}
