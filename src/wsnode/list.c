/*
 * wsnode listing and mirroring.  A directory's entries, local (readdir
 * beneath the workspace, stat without following) or from the node's
 * agent (ws_list, each entry checked: a plain name, a known type), at
 * most WSFS_MAX_LIST either way.  wsnode_mirror keeps a local copy of a
 * remote file that only grows (a task's event files), read by ws_read
 * from the copy's size on, so the follower derives from local files as
 * it does for a local sandbox.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/b64.h"
#include "nodelink/nodelink.h"
#include "wsnode/internal.h"
#include "ws/wsfs.h"

static const char *
entry_type(mode_t m)
{
	if (S_ISREG(m))
		return "file";
	if (S_ISDIR(m))
		return "dir";
	if (S_ISLNK(m))
		return "link";
	return "other";
}

static struct jv *
entry_new(const char *name, const char *type, int64_t size, int64_t mtime)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "name", name);
	jv_set_str(o, "type", type);
	jv_set_int(o, "size", size);
	jv_set_int(o, "mtime", mtime);
	return o;
}

static int
local_list(int wsfd, const char *path, struct jv **out, struct err *e)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd = wsfs_openat(wsfd, path, O_RDONLY | O_DIRECTORY, 0);

	if (fd < 0)
		return errno == ENOENT ? ERR_NOTFOUND(e, "%s does not exist",
		                                      path[0] ? path : ".")
		                       : ERR_BAD(e, "%s is not a directory",
		                                 path[0] ? path : ".");
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return ERR_INTERNAL(e, "%s: %s", path, strerror(errno));
	}
	*out = jv_arr();
	while ((de = readdir(d)) != NULL && jv_len(*out) < WSFS_MAX_LIST) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* gone meanwhile */
		jv_push(*out, entry_new(de->d_name, entry_type(st.st_mode),
		                        st.st_size, st.st_mtim.tv_sec));
	}
	closedir(d);
	return 0;
}

/* Whether an agent's entry is one we can show: a plain name, a type. */
static bool
entry_ok(const struct jv *o)
{
	const char *name = jv_str(jv_get(o, "name"));
	const char *type = jv_str(jv_get(o, "type"));

	return name && name[0] && strlen(name) <= 255 &&
	       strchr(name, '/') == NULL && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0 && type &&
	       (strcmp(type, "file") == 0 || strcmp(type, "dir") == 0 ||
	        strcmp(type, "link") == 0 || strcmp(type, "other") == 0);
}

static int
remote_list(struct wsnode *w, const struct sandbox *sb, const char *path,
            struct jv **out, struct err *e)
{
	struct jv *req = jv_obj(), *ans;
	const struct jv *entries;

	jv_set_str(req, "sandbox", sb->id);
	jv_set_str(req, "path", path);
	if (wsnode_call(w, sb->node, "ws_list", req, &ans, e) < 0)
		return -1;
	entries = jv_get(ans, "entries");
	if (entries == NULL || jv_type(entries) != JV_ARRAY) {
		jv_free(ans);
		return err_set(
		    e, 502, "sandbox_unavailable",
		    "the node's agent sent a malformed ws_list answer");
	}
	*out = jv_arr();
	for (size_t i = 0; i < jv_len(entries) && i < WSFS_MAX_LIST; i++) {
		const struct jv *o = jv_at(entries, i);
		if (!entry_ok(o))
			continue;
		jv_push(*out, entry_new(jv_str(jv_get(o, "name")),
		                        jv_str(jv_get(o, "type")),
		                        jv_int(jv_get(o, "size")),
		                        jv_int(jv_get(o, "mtime"))));
	}
	jv_free(ans);
	return 0;
}

int
wsnode_list(struct wsnode *w, const struct sandbox *sb, const char *path,
            struct jv **out, struct err *e)
{
	int dirfd, rc;

	*out = NULL;
	if (wsnode_remote(sb))
		return remote_list(w, sb, path, out, e);
	if ((dirfd = wsnode_open_local(w, sb->id, e)) < 0)
		return -1;
	rc = local_list(dirfd, path, out, e);
	close(dirfd);
	return rc;
}

/* One ws_read past off; a file now shorter than off (rewritten) gives
 * *shrunk. */
static int
mirror_read(struct wsnode *w, const struct sandbox *sb, const char *path,
            int64_t off, size_t max, struct buf *out, bool *shrunk,
            struct err *e)
{
	struct jv *req = jv_obj(), *ans;
	const struct jv *d;
	unsigned char *raw;
	long n;

	*shrunk = false;
	jv_set_str(req, "sandbox", sb->id);
	jv_set_str(req, "path", path);
	jv_set_int(req, "off", off);
	jv_set_int(req, "max",
	           (int64_t)(max < NL_WS_CHUNK ? max : NL_WS_CHUNK));
	if (wsnode_call(w, sb->node, "ws_read", req, &ans, e) < 0)
		return -1;
	d = jv_get(ans, "data");
	if (jv_get(ans, "size") && jv_int(jv_get(ans, "size")) < off) {
		*shrunk = true;
		jv_free(ans);
		return 0;
	}
	if (d == NULL || jv_type(d) != JV_STRING ||
	    (raw = malloc(B64_DEC_MAX(jv_str_len(d)) + 1)) == NULL) {
		jv_free(ans);
		return err_set(
		    e, 502, "sandbox_unavailable",
		    "the node's agent sent a malformed ws_read answer");
	}
	n = b64_decode(jv_str(d), jv_str_len(d), raw);
	if (n < 0 || (size_t)n > max || buf_append(out, raw, (size_t)n) < 0)
		n = -1;
	free(raw);
	jv_free(ans);
	if (n < 0)
		return err_set(e, 502, "sandbox_unavailable",
		               "the node's agent sent bad data");
	return 0;
}

int
wsnode_mirror(struct wsnode *w, const struct sandbox *sb, const char *path,
              int dirfd, const char *name, size_t max, struct err *e)
{
	struct buf data;
	struct stat st;
	bool eof = false, shrunk = false;
	int fd, rc = -1;

	/* made once the file is there to copy, as the original appears */
	fd = openat(dirfd, name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		st.st_size = 0;
	else if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return ERR_INTERNAL(e, "mirror %s: %s", name, strerror(errno));
	}
	buf_init(&data, max + 1);
	if ((wsnode_remote(sb)
	         ? mirror_read(w, sb, path, st.st_size, max, &data, &shrunk, e)
	         : wsnode_read(w, sb, path, st.st_size, max, &data, &eof, e)) <
	    0)
		goto out;
	if (shrunk) { /* rewritten there: read again from its start */
		rc = fd < 0 || ftruncate(fd, 0) == 0 ? 1 : -1;
		goto out;
	}
	if (fd < 0 && (fd = openat(dirfd, name,
	                           O_WRONLY | O_CREAT | O_EXCL | O_APPEND |
	                               O_NOFOLLOW | O_CLOEXEC,
	                           0600)) < 0) {
		ERR_INTERNAL(e, "mirror %s: %s", name, strerror(errno));
		goto out;
	}
	for (size_t off = 0; off < data.len;) {
		ssize_t n = write(fd, data.data + off, data.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ERR_INTERNAL(e, "mirror %s: %s", name, strerror(errno));
			goto out;
		}
		off += (size_t)n;
	}
	rc = data.len > 0 ? 1 : 0;
out:
	buf_release(&data);
	if (fd >= 0)
		close(fd);
	return rc;
}
