/*
 * The agent's file ops on a sandbox's workspace, <data>/workspaces/<id>
 * on this node: paths are relative to the workspace root, cleaned by
 * wsfs_clean, and resolved beneath the root's descriptor by wsfs
 * (openat2: no link, "..", or mount leads out), as the control plane
 * does for the sandboxes it holds itself.  Bytes travel base64 in the
 * JSON: a read answers at most NL_WS_CHUNK bytes, a write takes what
 * fits the request header.  A write at offset 0 with truncate replaces
 * the file atomically; a later piece appends to it where it ends.  A
 * rename's two paths are relative to a directory it names, so they are
 * cleaned, bounded and reported as the local files API's are.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/b64.h"
#include "nodeagent/internal.h"
#include "ws/usage.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"

bool
agent_id_ok(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	return n > 0 && n <= 64 &&
	       strspn(id, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                  "abcdefghijklmnopqrstuvwxyz") == n;
}

void
agent_ws_path(const struct agent *a, const char *id, char *out, size_t len)
{
	workspace_path(a->cfg->data_dir, id, out, len);
}

int
agent_ws_find(const struct agent *a, const char *id, char *out, size_t len,
              struct err *e)
{
	struct stat st;

	if (!agent_id_ok(id))
		return ERR_BAD(e, "not a sandbox id");
	agent_ws_path(a, id, out, len);
	if (lstat(out, &st) < 0 || !S_ISDIR(st.st_mode))
		return ERR_NOTFOUND(e, "no workspace of %s on this node", id);
	return 0;
}

/* The sandbox's workspace root open (its id checked), and the request's
 * path cleaned into rel; the root's fd or -1 with e. */
static int
open_req(struct agent *a, const struct jv *req, char rel[WSFS_MAX_PATH + 1],
         bool allow_root, struct err *e)
{
	const char *id = jv_str(jv_get(req, "sandbox"));
	const struct jv *p = jv_get(req, "path");
	char ws[PATH_MAX];

	if (!agent_id_ok(id))
		return ERR_BAD(e, "not a sandbox id");
	if (rel != NULL && (jv_str(p) == NULL ||
	                    wsfs_clean(jv_str(p), jv_str_len(p), rel,
	                               WSFS_MAX_PATH + 1, allow_root, e) < 0))
		return e->status ? -1 : ERR_BAD(e, "path: a string");
	agent_ws_path(a, id, ws, sizeof(ws));
	return wsfs_open_dir(ws, ".", e);
}

static const char *
type_of(mode_t m)
{
	return S_ISREG(m)   ? "file"
	       : S_ISDIR(m) ? "dir"
	       : S_ISLNK(m) ? "link"
	                    : "other";
}

/* rel opened O_PATH without following anything ("" the root itself). */
static int
open_path(int root, const char *rel, struct err *e)
{
	int fd =
	    rel[0] ? wsfs_openat(root, rel, O_PATH | O_NOFOLLOW, 0) : dup(root);

	if (fd < 0)
		return errno == ENOENT
		           ? ERR_NOTFOUND(e, "%s does not exist", rel)
		           : ERR_BAD(e, "%s cannot be opened: %s", rel,
		                     strerror(errno));
	return fd;
}

int
agent_op_ws_stat(void *arg, const struct nl_peer *p, const struct jv *req,
                 struct jv **ans, struct err *e)
{
	char rel[WSFS_MAX_PATH + 1];
	struct stat st;
	int root, fd, rc = -1;

	(void)p;
	if ((root = open_req(arg, req, rel, true, e)) < 0)
		return -1;
	if ((fd = open_path(root, rel, e)) >= 0) {
		if (fstat(fd, &st) == 0) {
			*ans = jv_obj();
			jv_set_str(*ans, "type", type_of(st.st_mode));
			jv_set_int(*ans, "size", st.st_size);
			jv_set_int(*ans, "mode", st.st_mode & 07777);
			jv_set_int(*ans, "mtime", st.st_mtim.tv_sec);
			rc = 0;
		} else {
			ERR_INTERNAL(e, "%s: %s", rel, strerror(errno));
		}
		close(fd);
	}
	close(root);
	return rc;
}

/* Up to max bytes of fd from off into out; the count, -1 on error. */
static ssize_t
read_at(int fd, unsigned char *out, size_t max, int64_t off)
{
	size_t got = 0;

	while (got < max) {
		ssize_t n = pread(fd, out + got, max - got, off + (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int
agent_op_ws_read(void *arg, const struct nl_peer *p, const struct jv *req,
                 struct jv **ans, struct err *e)
{
	int64_t off = jv_int(jv_get(req, "off")),
	        max = jv_int(jv_get(req, "max"));
	char rel[WSFS_MAX_PATH + 1], *text = NULL;
	unsigned char *raw = NULL;
	struct stat st;
	ssize_t n = -1;
	int root, fd;

	(void)p;
	if (off < 0 || max < 0 || max > (int64_t)NL_WS_CHUNK)
		return ERR_BAD(e, "off >= 0, 0 <= max <= %u", NL_WS_CHUNK);
	if ((root = open_req(arg, req, rel, false, e)) < 0)
		return -1;
	fd = wsfs_open_file(root, rel, e);
	close(root);
	if (fd < 0)
		return -1;
	raw = malloc((size_t)max + 1);
	text = malloc(B64_ENC_LEN((size_t)max) + 1);
	if (raw && text && fstat(fd, &st) == 0)
		n = read_at(fd, raw, (size_t)max, off);
	close(fd);
	if (n >= 0) {
		b64_encode(raw, (size_t)n, text);
		*ans = jv_obj();
		jv_set_str(*ans, "data", text);
		jv_set_bool(*ans, "eof", off + n >= st.st_size);
		jv_set_int(*ans, "size", st.st_size);
	} else {
		ERR_INTERNAL(e, "%s: %s", rel, strerror(errno));
	}
	free(raw);
	free(text);
	return n >= 0 ? 0 : -1;
}

/* A later piece of a write: appended where the file ends, which must be
 * off (the pieces come in order). */
static int
append_at(int root, const char *rel, const unsigned char *data, size_t n,
          int64_t off, struct err *e)
{
	int fd = wsfs_openat(root, rel, O_WRONLY | O_NOFOLLOW | O_NONBLOCK, 0);
	struct stat st;
	int rc = -1;

	if (fd < 0)
		return ERR_NOTFOUND(e, "%s: %s", rel, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		ERR_BAD(e, "%s is not a regular file", rel);
	else if (st.st_size != off)
		ERR_CONFLICT(e, "%s: a piece at %lld, the file is %lld bytes",
		             rel, (long long)off, (long long)st.st_size);
	else if (pwrite(fd, data, n, off) != (ssize_t)n)
		ERR_INTERNAL(e, "%s: %s", rel, strerror(errno));
	else
		rc = 0;
	close(fd);
	return rc;
}

int
agent_op_ws_write(void *arg, const struct nl_peer *p, const struct jv *req,
                  struct jv **ans, struct err *e)
{
	const struct jv *d = jv_get(req, "data");
	int64_t off = jv_int(jv_get(req, "off"));
	int64_t mode = jv_int(jv_get(req, "mode"));
	char rel[WSFS_MAX_PATH + 1];
	unsigned char *raw;
	long n;
	int root, rc;

	(void)p;
	if (jv_str(d) == NULL || off < 0 || off > WSFS_MAX_WRITE)
		return ERR_BAD(e, "data: base64, off >= 0");
	if ((raw = malloc(B64_DEC_MAX(jv_str_len(d)) + 1)) == NULL)
		return ERR_INTERNAL(e, "out of memory");
	n = b64_decode(jv_str(d), jv_str_len(d), raw);
	if (n < 0 || off + n > WSFS_MAX_WRITE) {
		free(raw);
		return n < 0 ? ERR_BAD(e, "data is not base64")
		             : err_set(e, 413, "too_large", "over %u bytes",
		                       WSFS_MAX_WRITE);
	}
	if ((root = open_req(arg, req, rel, false, e)) < 0) {
		free(raw);
		return -1;
	}
	if (off > 0 || !jv_is_true(jv_get(req, "truncate")))
		rc = append_at(root, rel, raw, (size_t)n, off, e);
	else if ((mode & 0077) == 0 && mode != 0)
		rc = wsfs_write_secret(root, rel, raw, (size_t)n, WORKSPACE_UID,
		                       WORKSPACE_GID, e);
	else
		rc = wsfs_write(root, rel, raw, (size_t)n, WORKSPACE_UID,
		                WORKSPACE_GID, e);
	close(root);
	free(raw);
	if (rc == 0)
		*ans = jv_obj();
	return rc;
}

static struct jv *
entry_json(const char *name, const struct stat *st)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "name", name);
	jv_set_str(o, "type", type_of(st->st_mode));
	jv_set_int(o, "size", st->st_size);
	jv_set_int(o, "mtime", st->st_mtim.tv_sec);
	return o;
}

int
agent_op_ws_list(void *arg, const struct nl_peer *p, const struct jv *req,
                 struct jv **ans, struct err *e)
{
	char rel[WSFS_MAX_PATH + 1];
	struct jv *entries;
	struct dirent *de;
	struct stat st;
	int root, fd;
	DIR *d;

	(void)p;
	if ((root = open_req(arg, req, rel, true, e)) < 0)
		return -1;
	fd = rel[0] ? wsfs_openat(root, rel, O_RDONLY | O_DIRECTORY, 0)
	            : dup(root);
	close(root);
	if (fd < 0 || (d = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		return errno == ENOENT
		           ? ERR_NOTFOUND(e, "%s does not exist", rel)
		           : ERR_BAD(e, "%s is not a directory", rel);
	}
	entries = jv_arr();
	while ((de = readdir(d)) != NULL && jv_len(entries) < WSFS_MAX_LIST) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
		    0)
			jv_push(entries, entry_json(de->d_name, &st));
	}
	closedir(d);
	*ans = jv_obj();
	jv_set(*ans, "entries", entries);
	return 0;
}

int
agent_op_ws_delete(void *arg, const struct nl_peer *p, const struct jv *req,
                   struct jv **ans, struct err *e)
{
	char rel[WSFS_MAX_PATH + 1];
	int root, rc;

	(void)p;
	if ((root = open_req(arg, req, rel, false, e)) < 0)
		return -1;
	rc = wsfs_remove(root, rel, true, e);
	close(root);
	if (rc == 0)
		*ans = jv_obj();
	return rc;
}

int
agent_op_ws_mkdir(void *arg, const struct nl_peer *p, const struct jv *req,
                  struct jv **ans, struct err *e)
{
	char rel[WSFS_MAX_PATH + 1];
	int root, rc;

	(void)p;
	if ((root = open_req(arg, req, rel, false, e)) < 0)
		return -1;
	rc = wsfs_mkdirs(root, rel, WORKSPACE_UID, WORKSPACE_GID, e);
	close(root);
	if (rc == 0)
		*ans = jv_obj();
	return rc;
}

/* A path field of req cleaned into out; a missing one is "" when
 * allow_root (the root itself). */
static int
clean_field(const struct jv *req, const char *name, bool allow_root,
            char out[WSFS_MAX_PATH + 1], struct err *e)
{
	const struct jv *v = jv_get(req, name);

	if (v == NULL && allow_root) {
		out[0] = '\0';
		return 0;
	}
	if (jv_str(v) == NULL)
		return ERR_BAD(e, "%s: a string", name);
	return wsfs_clean(jv_str(v), jv_str_len(v), out, WSFS_MAX_PATH + 1,
	                  allow_root, e);
}

/* from to to, both beneath dir ("workspace/app" for the files API, so
 * its answers name the paths as the local move does): wsfs_move, which
 * never replaces anything and follows no link. */
int
agent_op_ws_rename(void *arg, const struct nl_peer *p, const struct jv *req,
                   struct jv **ans, struct err *e)
{
	char dir[WSFS_MAX_PATH + 1], from[WSFS_MAX_PATH + 1],
	    to[WSFS_MAX_PATH + 1];
	int root, rc;

	(void)p;
	if (clean_field(req, "dir", true, dir, e) < 0 ||
	    clean_field(req, "from", false, from, e) < 0 ||
	    clean_field(req, "to", false, to, e) < 0)
		return -1;
	if ((root = open_req(arg, req, NULL, false, e)) < 0)
		return -1;
	rc = wsfs_move_in(root, dir, from, to, WORKSPACE_UID, WORKSPACE_GID, e);
	close(root);
	if (rc == 0)
		*ans = jv_obj();
	return rc;
}

int
agent_op_ws_usage(void *arg, const struct nl_peer *p, const struct jv *req,
                  struct jv **ans, struct err *e)
{
	struct agent *a = arg;
	const char *id = jv_str(jv_get(req, "sandbox"));
	char ws[PATH_MAX];
	int64_t bytes;

	(void)p;
	if (!agent_id_ok(id))
		return ERR_BAD(e, "not a sandbox id");
	agent_ws_path(a, id, ws, sizeof(ws));
	if ((bytes = ws_usage(id, ws)) < 0)
		return ERR_NOTFOUND(e, "no workspace of %s on this node", id);
	*ans = jv_obj();
	jv_set_int(*ans, "bytes", bytes);
	return 0;
}

/* The workspace to <data>/trash/nodes/<id>-<ms>: kept there until the
 * agent next starts (it empties the trash then). */
int
agent_op_ws_trash(void *arg, const struct nl_peer *p, const struct jv *req,
                  struct jv **ans, struct err *e)
{
	struct agent *a = arg;
	const char *id = jv_str(jv_get(req, "sandbox"));
	char ws[PATH_MAX], dst[PATH_MAX + 96];
	struct timespec ts;

	(void)p;
	if (!agent_id_ok(id))
		return ERR_BAD(e, "not a sandbox id");
	agent_ws_path(a, id, ws, sizeof(ws));
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(dst, sizeof(dst), "%s/trash/nodes", a->cfg->data_dir);
	if (mkdir(dst, 0700) < 0 && errno != EEXIST)
		return ERR_INTERNAL(e, "%s: %s", dst, strerror(errno));
	snprintf(dst, sizeof(dst), "%s/trash/nodes/%s-%lld", a->cfg->data_dir,
	         id, (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	if (rename(ws, dst) < 0 && errno != ENOENT)
		return ERR_INTERNAL(e, "cannot move %s to the trash: %s", ws,
		                    strerror(errno));
	ws_usage_forget(id);
	*ans = jv_obj();
	return 0;
}
