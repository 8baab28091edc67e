/*
 * /v1/sandboxes/{id}/files: the app's files, read and written on the host
 * (so they work while the sandbox sleeps) through wsfs, which refuses
 * every path that would leave the app directory.  Paths are relative to
 * the app directory (/home/sandbox/workspace/app in the sandbox).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "core/runtime.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"

struct target {
	struct sandbox sb;
	char path[WSFS_MAX_PATH + 1];
	int appfd;
	bool recursive;
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

/* Resolves the sandbox, the path parameter and the app directory. */
static int
target_open(struct req *r, struct resp *w, bool allow_root, struct target *t)
{
	char ws[4200];
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
	workspace_path(r->core->cfg->data_dir, t->sb.id, ws, sizeof(ws));
	t->appfd = wsfs_open_dir(ws, "workspace/app", &e);
	if (t->appfd < 0) {
		api_reply_err(w, &e);
		return -1;
	}
	return 0;
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
	if (wsfs_list(t.appfd, t.path, t.recursive, &entries, &truncated, &e) <
	    0) {
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
	struct err e = {0};
	struct target t;
	struct buf data;

	if (target_open(r, w, false, &t) < 0)
		goto out;
	if (wsfs_read(t.appfd, t.path, WSFS_MAX_READ, &data, &e) < 0) {
		api_reply_err(w, &e);
		goto out;
	}
	api_reply_bytes(w, 200, "application/octet-stream", data.data,
	                data.len);
	buf_release(&data);
out:
	if (t.appfd >= 0)
		close(t.appfd);
}

void
files_put(struct req *r, struct resp *w)
{
	struct err e = {0};
	struct target t;
	struct jv *o;

	if (target_open(r, w, false, &t) < 0)
		goto out;
	if (core_workspace_room(r->core, t.sb.id, &e) < 0) {
		api_reply_err(w, &e);
		goto out;
	}
	if (wsfs_write(t.appfd, t.path, r->body.data ? r->body.data : "",
	               r->body.len, WORKSPACE_UID, WORKSPACE_GID, &e) < 0) {
		api_reply_err(w, &e);
		goto out;
	}
	/* A new manifest takes effect at once in a running sandbox. */
	if (strcmp(t.path, "sandbox.yaml") == 0 &&
	    t.sb.status == SANDBOX_RUNNING)
		runtime_schedule(r->core, t.sb.id);
	o = jv_obj();
	jv_set_str(o, "path", t.path);
	jv_set_int(o, "size", (int64_t)r->body.len);
	api_reply_json(w, 200, o);
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
	if (wsfs_remove(t.appfd, t.path, t.recursive, &e) < 0)
		api_reply_err(w, &e);
	else
		api_reply_empty(w, 204);
out:
	if (t.appfd >= 0)
		close(t.appfd);
}
