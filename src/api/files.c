/*
 * /v1/sandboxes/{id}/files: the app's files, read and written on the host
 * (so they work while the sandbox sleeps) through wsfs, which refuses
 * every path that would leave the app directory.  Paths are relative to
 * the app directory (/home/sandbox/workspace/app in the sandbox).
 *
 * Preconditions: a file's entity tag is the SHA-256 of its bytes (a
 * strong tag: equal tags, equal bytes), given on every read and write.
 * A PUT with If-Match or If-None-Match is checked against the file as it
 * is just before the rename that replaces it, with the sandbox's write
 * lock held (wsfs_write_cond), and every write of this API holds that
 * lock, so a save never silently replaces what another API call wrote
 * after the client read the file.  The sandbox's own processes write
 * without it; wsfs narrows that window to the moment between its last
 * look at the file and the rename (docs/api.md, "Files").  Rejected: an
 * mtime-based tag (two writes within the filesystem's clock tick look
 * the same) and a tag from the inode (an in-place write keeps it).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "api/files_remote.h"
#include "sandbox/installkey.h"
#include "sandbox/runtime.h"
#include "lib/hash.h"
#include "lib/limits.h"
#include "vault/vault.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"

/* Every write of this API to a sandbox's files holds its stripe. */
#define L PTHREAD_MUTEX_INITIALIZER
static pthread_mutex_t write_locks[8] = {L, L, L, L, L, L, L, L};
#undef L

static pthread_mutex_t *
write_lock(const char *sandbox_id)
{
	return &write_locks[hash_fnv1a(sandbox_id) %
	                    (sizeof(write_locks) / sizeof(write_locks[0]))];
}

static void
etag_header(struct resp *w, const char *hex)
{
	snprintf(w->etag, sizeof(w->etag), "\"%s\"", hex);
}

/* One entity tag of a list at *p ("W/" and quotes included); -1 bad. */
static int
etag_next(const char **p, bool *weak, const char **tag, size_t *len)
{
	const char *s = *p;

	*weak = false;
	if (s[0] == 'W' && s[1] == '/') {
		*weak = true;
		s += 2;
	}
	if (*s++ != '"')
		return -1;
	*tag = s;
	/* etagc: %x21 / %x23-7E / obs-text */
	while (*s == 0x21 || ((unsigned char)*s >= 0x23 && *s != 0x7f))
		s++;
	if (*s != '"')
		return -1;
	*len = (size_t)(s - *tag);
	*p = s + 1;
	return 0;
}

int
api_etag_listed(const char *value, const char *etag, bool weak)
{
	const char *p = value;
	size_t n = strlen(etag), len;
	const char *tag;
	bool w, found = false, any = false;

	while (*p == ' ' || *p == '\t')
		p++;
	if (p[0] == '*') {
		for (p++; *p == ' ' || *p == '\t'; p++)
			;
		return *p == '\0' ? 1 : -1;
	}
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '\0')
			return any ? (found ? 1 : 0) : -1;
		if (etag_next(&p, &w, &tag, &len) < 0)
			return -1;
		any = true;
		if ((weak || !w) && len == n && memcmp(tag, etag, n) == 0)
			found = true;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != ',' && *p != '\0')
			return -1;
	}
}

struct target {
	struct sandbox sb;
	char path[WSFS_MAX_PATH + 1];
	int appfd;
	bool recursive;
	bool remote; /* on another node: wsnode, no appfd */
};

static int
flag_param(struct req *r, struct resp *w, const char *key, bool *out)
{
	bool bad;
	const char *v = api_query(r, w, key, &bad);

	if (bad)
		return -1;
	*out = v && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);
	if (v && !*out && strcmp(v, "false") != 0 && strcmp(v, "0") != 0) {
		api_fail(w, 400, "invalid_request", "%s must be true or false",
		         key);
		return -1;
	}
	return 0;
}

/* Opens the app directory of t's sandbox (t->appfd). */
static int
target_dir(struct req *r, struct resp *w, struct target *t)
{
	char ws[WORKSPACE_PATH_MAX];
	struct err e = {0};

	t->remote = wsnode_remote(&t->sb);
	if (t->remote)
		return 0;
	workspace_path(r->core->cfg->data_dir, t->sb.id, ws, sizeof(ws));
	t->appfd = wsfs_open_dir(ws, "workspace/app", &e);
	if (t->appfd < 0) {
		api_reply_err(w, &e);
		return -1;
	}
	return 0;
}

/* Resolves the sandbox, the path parameter and the app directory. */
static int
target_open(struct req *r, struct resp *w, bool allow_root, struct target *t)
{
	struct err e = {0};
	const char *path;
	bool bad;

	t->appfd = -1;
	if (api_load_sandbox(r, w, &t->sb) < 0)
		return -1;
	path = api_query(r, w, "path", &bad);
	if (bad || flag_param(r, w, "recursive", &t->recursive) < 0)
		return -1;
	if (path == NULL)
		path = "";
	if (wsfs_clean(path, strlen(path), t->path, sizeof(t->path), allow_root,
	               &e) < 0) {
		api_reply_err(w, &e);
		return -1;
	}
	return target_dir(r, w, t);
}

void
files_list(struct req *r, struct resp *w)
{
	struct err e = {0};
	struct target t;
	struct jv *entries, *o;
	bool truncated = false;

	if (target_open(r, w, true, &t) < 0)
		goto out;
	if ((t.remote ? files_remote_list(r->core, &t.sb, t.path, t.recursive,
	                                  &entries, &truncated, &e)
	              : wsfs_list(t.appfd, t.path, t.recursive, &entries,
	                          &truncated, &e)) < 0) {
		api_reply_err(w, &e);
		goto out;
	}
	o = jv_obj();
	jv_set_str(o, "path", t.path);
	jv_set_bool(o, "recursive", t.recursive);
	jv_set(o, "entries", entries);
	jv_set_bool(o, "truncated", truncated);
	api_reply_json(w, 200, o);
out:
	if (t.appfd >= 0)
		close(t.appfd);
}

void
files_content(struct req *r, struct resp *w)
{
	char hex[VAULT_HASH_HEX + 1];
	struct err e = {0};
	struct target t;
	struct buf data;

	if (target_open(r, w, false, &t) < 0)
		goto out;
	if ((t.remote
	         ? files_remote_read(r->core, &t.sb, t.path, WSFS_MAX_READ,
	                             &data, &e)
	         : wsfs_read(t.appfd, t.path, WSFS_MAX_READ, &data, &e)) < 0) {
		api_reply_err(w, &e);
		goto out;
	}
	vault_hash_hex(data.data, data.len, hex);
	api_reply_bytes(w, 200, "application/octet-stream", data.data,
	                data.len);
	if (w->status == 200)
		etag_header(w, hex);
	buf_release(&data);
out:
	if (t.appfd >= 0)
		close(t.appfd);
}

/* A PUT's If-Match / If-None-Match, and what the check found. */
struct precond {
	const char *if_match, *if_none_match; /* header values, or NULL */
	char current[VAULT_HASH_HEX + 1];     /* the file's tag; "" unknown */
	bool exists;
};

static void
hash_piece(const void *p, size_t n, void *arg)
{
	vault_sha256_update(arg, p, n);
}

/*
 * The tag of the file open at fd into out; "" for a file too large to
 * have been read or written through this API (no tag of ours names it).
 */
static int
file_etag(int fd, char out[VAULT_HASH_HEX + 1], struct err *e)
{
	struct vault_sha256 *h = vault_sha256_new();
	int rc;

	out[0] = '\0';
	if (h == NULL)
		return ERR_INTERNAL(e, "out of memory");
	rc = wsfs_fd_each(fd, WSFS_MAX_WRITE, WSFS_READ_MS, hash_piece, h, e);
	vault_sha256_end(h, out);
	if (rc < 0 && e->status == 413) {
		*e = (struct err){0};
		out[0] = '\0';
		return 0;
	}
	return rc;
}

/* The preconditions against the file as found (p->exists, p->current). */
static int
precond_eval(const struct precond *p, struct err *e)
{
	bool exists = p->exists;

	if (p->if_match &&
	    !(exists &&
	      (strcmp(p->if_match, "*") == 0 ||
	       (p->current[0] &&
	        api_etag_listed(p->if_match, p->current, false) == 1))))
		return err_set(e, 412, "precondition_failed",
		               exists ? "the file changed since it was opened "
		                        "(If-Match does not name its current "
		                        "ETag); nothing was written"
		                      : "the file was deleted since it was "
		                        "opened; nothing was written");
	if (p->if_none_match && exists &&
	    (p->current[0] == '\0' ||
	     api_etag_listed(p->if_none_match, p->current, true) == 1))
		return err_set(e, 412, "precondition_failed",
		               "the file exists (If-None-Match); nothing was "
		               "written");
	return 0;
}

/* wsfs_write_cond's check, under the sandbox's write lock. */
static int
precond_check(int fd, void *arg, struct err *e)
{
	struct precond *p = arg;

	p->exists = fd >= 0;
	p->current[0] = '\0';
	if (fd >= 0 && file_etag(fd, p->current, e) < 0)
		return -1;
	return precond_eval(p, e);
}

/*
 * A write to a remote sandbox's file, under its write lock: the
 * preconditions against the file as read from the node just before,
 * then the write (a sandbox's own writer between the two is not seen,
 * as it is not locally between check and rename).
 */
static int
remote_put(struct core *c, const struct target *t, struct precond *p,
           const void *data, size_t len, struct err *e)
{
	char rel[WSFS_MAX_PATH + 32];
	struct buf cur;
	int rc = 0;

	pthread_mutex_lock(write_lock(t->sb.id));
	if (p->if_match || p->if_none_match) {
		rc = files_remote_read(c, &t->sb, t->path, WSFS_MAX_WRITE, &cur,
		                       e);
		p->exists = rc == 0 || e->status == 413;
		p->current[0] = '\0';
		if (rc == 0)
			vault_hash_hex(cur.data ? cur.data : "", cur.len,
			               p->current);
		buf_release(&cur);
		if (rc < 0 && (e->status == 404 || e->status == 413))
			*e = (struct err){0}, rc = 0;
		if (rc == 0)
			rc = precond_eval(p, e);
	}
	files_remote_path(t->path, rel, sizeof(rel));
	if (rc == 0)
		rc = wsnode_write(c->wn, &t->sb, rel, data, len, 0644, e);
	pthread_mutex_unlock(write_lock(t->sb.id));
	return rc;
}

/* The request's preconditions; -1 answered (400) when one is malformed. */
static int
precond_parse(struct req *r, struct resp *w, struct precond *p)
{
	const char *names[2] = {"If-Match", "If-None-Match"};
	const char *vals[2];

	vals[0] = api_header(r, names[0]);
	vals[1] = api_header(r, names[1]);
	for (int i = 0; i < 2; i++)
		if (vals[i] && api_etag_listed(vals[i], "", false) < 0) {
			api_fail(w, 400, "invalid_request",
			         "%s must be * or a list of entity tags "
			         "(\"<etag>\")",
			         names[i]);
			return -1;
		}
	/* A valid value starting with '*' is "*" (white space around it) */
	for (int i = 0; i < 2; i++)
		if (vals[i] && vals[i][strspn(vals[i], " \t")] == '*')
			vals[i] = "*";
	p->if_match = vals[0];
	p->if_none_match = vals[1];
	return 0;
}

void
files_put(struct req *r, struct resp *w)
{
	char hex[VAULT_HASH_HEX + 1];
	struct precond p = {0};
	struct err e = {0};
	struct target t;
	struct wsfs_cond c = {.check = precond_check, .arg = &p};
	const char *data = r->body.data ? r->body.data : "";
	struct jv *o;

	if (target_open(r, w, false, &t) < 0 || precond_parse(r, w, &p) < 0)
		goto out;
	if (core_workspace_room(r->core, &t.sb, &e) < 0) {
		api_reply_err(w, &e);
		goto out;
	}
	c.mu = write_lock(t.sb.id);
	/* If-None-Match: * is a create: the rename never replaces a file */
	c.create_only = p.if_none_match && strcmp(p.if_none_match, "*") == 0;
	if (p.if_match == NULL && p.if_none_match == NULL)
		c.check = NULL;
	if ((t.remote
	         ? remote_put(r->core, &t, &p, data, r->body.len, &e)
	         : wsfs_write_cond(t.appfd, t.path, data, r->body.len,
	                           WORKSPACE_UID, WORKSPACE_GID, &c, &e)) < 0) {
		api_reply_err(w, &e);
		if (e.status == 412 && p.current[0])
			etag_header(w, p.current);
		goto out;
	}
	/* A new manifest takes effect at once in a running sandbox; so does
	 * a new lockfile (a new install key: the supervisor installs). */
	if ((strcmp(t.path, "sandbox.yaml") == 0 ||
	     runtime_install_default_input(t.path)) &&
	    t.sb.status == SANDBOX_RUNNING)
		core_sandbox_reload(r->core, t.sb.id);
	vault_hash_hex(data, r->body.len, hex);
	o = jv_obj();
	jv_set_str(o, "path", t.path);
	jv_set_int(o, "size", (int64_t)r->body.len);
	jv_set_str(o, "etag", hex);
	api_reply_json(w, 200, o);
	etag_header(w, hex);
out:
	if (t.appfd >= 0)
		close(t.appfd);
}

void
files_delete(struct req *r, struct resp *w)
{
	struct err e = {0};
	struct target t;

	if (target_open(r, w, false, &t) < 0)
		goto out;
	pthread_mutex_lock(write_lock(t.sb.id));
	if ((t.remote
	         ? files_remote_delete(r->core, &t.sb, t.path, t.recursive, &e)
	         : wsfs_remove(t.appfd, t.path, t.recursive, &e)) < 0)
		api_reply_err(w, &e);
	else
		api_reply_empty(w, 204);
	pthread_mutex_unlock(write_lock(t.sb.id));
out:
	if (t.appfd >= 0)
		close(t.appfd);
}

/* One path field of a move's body, checked as ?path= is. */
static int
move_path(const struct jv *body, const char *field, char *out, size_t len,
          struct err *e)
{
	const struct jv *v = jv_get(body, field);

	if (v == NULL || jv_type(v) != JV_STRING)
		return ERR_BAD(e, "%s is required: a path in the app directory",
		               field);
	if (wsfs_clean(jv_str(v), jv_str_len(v), out, len, false, e) < 0) {
		size_t n = strlen(e->msg);
		snprintf(e->msg + n, sizeof(e->msg) - n, " (%s)", field);
		return -1;
	}
	return 0;
}

void
files_move(struct req *r, struct resp *w)
{
	char from[WSFS_MAX_PATH + 1], to[WSFS_MAX_PATH + 1];
	struct err e = {0};
	struct target t;
	struct jv *body = NULL, *o;
	int moved;

	t.appfd = -1;
	if (api_load_sandbox(r, w, &t.sb) < 0 ||
	    api_body_object(r, w, false, &body) < 0)
		goto out;
	if (move_path(body, "from", from, sizeof(from), &e) < 0 ||
	    move_path(body, "to", to, sizeof(to), &e) < 0) {
		api_reply_err(w, &e);
		goto out;
	}
	snprintf(t.path, sizeof(t.path), "%s", from);
	if (target_dir(r, w, &t) < 0)
		goto out;
	pthread_mutex_lock(write_lock(t.sb.id));
	moved = t.remote ? files_remote_move(r->core, &t.sb, from, to, &e)
	                 : wsfs_move(t.appfd, from, to, WORKSPACE_UID,
	                             WORKSPACE_GID, &e);
	pthread_mutex_unlock(write_lock(t.sb.id));
	if (moved < 0) {
		api_reply_err(w, &e);
		goto out;
	}
	if ((strcmp(from, "sandbox.yaml") == 0 ||
	     strcmp(to, "sandbox.yaml") == 0 ||
	     runtime_install_default_input(from) ||
	     runtime_install_default_input(to)) &&
	    t.sb.status == SANDBOX_RUNNING)
		core_sandbox_reload(r->core, t.sb.id);
	o = jv_obj();
	jv_set_str(o, "path", to);
	api_reply_json(w, 200, o);
out:
	jv_free(body);
	if (t.appfd >= 0)
		close(t.appfd);
}

/* The routes of this file, in the router's order (routes.c). */
const struct route files_routes[] = {
    {.method = "GET", .pattern = "/v1/sandboxes/{id}/files", .fn = files_list},
    {.method = "PUT",
     .pattern = "/v1/sandboxes/{id}/files",
     .fn = files_put,
     .max_body = WSFS_MAX_WRITE,
     .raw_body = true},
    {.method = "DELETE",
     .pattern = "/v1/sandboxes/{id}/files",
     .fn = files_delete},
    {.method = "GET",
     .pattern = "/v1/sandboxes/{id}/files/content",
     .fn = files_content},
    {.method = "POST",
     .pattern = "/v1/sandboxes/{id}/files/move",
     .fn = files_move},
    {0},
};
