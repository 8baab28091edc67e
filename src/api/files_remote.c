/*
 * The files API for a sandbox whose workspace is on another node: the
 * same answers as files.c gives for a local one, built from wsnode's
 * calls to that node's agent (which confines every path with wsfs on its
 * side).  A recursive listing is one ws_list per directory, so it is
 * bounded twice: WSFS_MAX_LIST entries, FILES_REMOTE_DIRS directories
 * (past either, truncated).  Symbolic links and the heavy directories
 * are left out as wsfs_list leaves them out.  A move is one rename on
 * the node (ws_rename: wsfs_move there, beneath the app directory).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/files_remote.h"
#include "lib/limits.h"
#include "ws/wsfs.h"

/* Directories a recursive remote listing opens, at most. */
#define FILES_REMOTE_DIRS 500

void
files_remote_path(const char *app_rel, char *out, size_t len)
{
	snprintf(out, len, "workspace/app%s%s", app_rel[0] ? "/" : "", app_rel);
}

static bool
heavy(const char *name)
{
	static const char *const dirs[] = {
	    "node_modules", ".git", "dist", ".vite", "__pycache__", ".venv"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (strcmp(name, dirs[i]) == 0)
			return true;
	return false;
}

struct walk {
	struct jv *out; /* [{path, type, size}] */
	char **todo;    /* directories still to list (app-relative) */
	size_t ntodo, listed;
	bool truncated;
};

/* Adds one directory's entries; queues its subdirectories. */
static int
walk_dir(struct core *c, const struct sandbox *sb, struct walk *k,
         const char *dir, bool recursive, struct err *e)
{
	char rel[WSFS_MAX_PATH + 32], path[WSFS_MAX_PATH + 300];
	struct jv *list;

	files_remote_path(dir, rel, sizeof(rel));
	if (wsnode_list(c->wn, sb, rel, &list, e) < 0)
		return -1;
	k->listed++;
	for (size_t i = 0; i < jv_len(list); i++) {
		const struct jv *o = jv_at(list, i);
		const char *name = jv_str(jv_get(o, "name"));
		const char *type = jv_str(jv_get(o, "type"));
		bool isdir = strcmp(type, "dir") == 0;
		struct jv *x;

		if ((!isdir && strcmp(type, "file") != 0) ||
		    (isdir && heavy(name)))
			continue;
		if (jv_len(k->out) >= WSFS_MAX_LIST) {
			k->truncated = true;
			break;
		}
		snprintf(path, sizeof(path), "%s%s%s", dir, dir[0] ? "/" : "",
		         name);
		if (strlen(path) > WSFS_MAX_PATH)
			continue;
		x = jv_obj();
		jv_set_str(x, "path", path);
		jv_set_str(x, "type", isdir ? "dir" : "file");
		if (!isdir)
			jv_set_int(x, "size", jv_int(jv_get(o, "size")));
		jv_push(k->out, x);
		if (isdir && recursive && k->ntodo < FILES_REMOTE_DIRS)
			k->todo[k->ntodo++] = strdup(path);
		else if (isdir && recursive)
			k->truncated = true;
	}
	jv_free(list);
	return 0;
}

static int
by_path(const void *a, const void *b)
{
	return strcmp(jv_str(jv_get(*(struct jv *const *)a, "path")),
	              jv_str(jv_get(*(struct jv *const *)b, "path")));
}

/* k->out sorted by path (a new array: jv has no sort of its own). */
static struct jv *
sorted(struct jv *arr)
{
	size_t n = jv_len(arr);
	struct jv **v = calloc(n ? n : 1, sizeof(*v));
	struct jv *out = jv_arr();

	if (v == NULL)
		return arr;
	for (size_t i = 0; i < n; i++)
		v[i] = jv_copy(jv_at(arr, i));
	qsort(v, n, sizeof(*v), by_path);
	for (size_t i = 0; i < n; i++)
		jv_push(out, v[i]);
	free(v);
	jv_free(arr);
	return out;
}

int
files_remote_list(struct core *c, const struct sandbox *sb, const char *path,
                  bool recursive, struct jv **out, bool *truncated,
                  struct err *e)
{
	struct walk k = {.out = jv_arr()};
	int rc = 0;

	*out = NULL;
	k.todo = calloc(FILES_REMOTE_DIRS, sizeof(*k.todo));
	if (k.todo == NULL) {
		jv_free(k.out);
		return ERR_INTERNAL(e, "out of memory");
	}
	rc = walk_dir(c, sb, &k, path, recursive, e);
	/* the deeper directories: a failure there (gone meanwhile) is
	 * only a hole in the listing, as a local walk skips it */
	for (size_t i = 0; rc == 0 && i < k.ntodo; i++) {
		struct err ignored = {0};
		if (!k.truncated && k.todo[i])
			walk_dir(c, sb, &k, k.todo[i], true, &ignored);
	}
	for (size_t i = 0; i < k.ntodo; i++)
		free(k.todo[i]);
	free(k.todo);
	if (rc < 0) {
		jv_free(k.out);
		return -1;
	}
	*truncated = k.truncated;
	*out = sorted(k.out);
	return 0;
}

static int
read_whole(struct core *c, const struct sandbox *sb, const char *path,
           size_t max, struct buf *out, struct err *e)
{
	char rel[WSFS_MAX_PATH + 32], type[8];
	int64_t size, mtime;
	bool eof = false;

	files_remote_path(path, rel, sizeof(rel));
	if (wsnode_stat(c->wn, sb, rel, type, &size, &mtime, e) < 0)
		return -1;
	if (strcmp(type, "file") != 0)
		return ERR_BAD(e, "%s is not a regular file", path);
	if (size > (int64_t)max)
		return err_set(e, 413, "payload_too_large",
		               "%s is larger than %zu bytes", path, max);
	if (wsnode_read(c->wn, sb, rel, 0, max + 1, out, &eof, e) < 0)
		return -1;
	if (out->len > max)
		return err_set(e, 413, "payload_too_large",
		               "%s is larger than %zu bytes", path, max);
	return 0;
}

int
files_remote_read(struct core *c, const struct sandbox *sb, const char *path,
                  size_t max, struct buf *out, struct err *e)
{
	buf_init(out, max + 1);
	if (read_whole(c, sb, path, max, out, e) == 0)
		return 0;
	buf_release(out);
	buf_init(out, max + 1);
	return -1;
}

int
files_remote_delete(struct core *c, const struct sandbox *sb, const char *path,
                    bool recursive, struct err *e)
{
	char rel[WSFS_MAX_PATH + 32], type[8];
	int64_t size, mtime;
	struct jv *list;
	bool empty;

	if (path[0] == '\0')
		return ERR_BAD(e, "the app directory itself cannot be removed");
	files_remote_path(path, rel, sizeof(rel));
	if (!recursive) {
		if (wsnode_stat(c->wn, sb, rel, type, &size, &mtime, e) < 0)
			return -1;
		if (strcmp(type, "dir") == 0) {
			if (wsnode_list(c->wn, sb, rel, &list, e) < 0)
				return -1;
			empty = jv_len(list) == 0;
			jv_free(list);
			if (!empty)
				return ERR_CONFLICT(
				    e,
				    "%s is a directory that is not empty "
				    "(recursive=true removes it all)",
				    path);
		}
	}
	return wsnode_delete(c->wn, sb, rel, e);
}

int
files_remote_move(struct core *c, const struct sandbox *sb, const char *from,
                  const char *to, struct err *e)
{
	return wsnode_rename(c->wn, sb, "workspace/app", from, to, e);
}
