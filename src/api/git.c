/*
 * /v1/apps/{id}/git/{status,diff,commit}: the app's repository, read and
 * committed on the host by the git module, so they work whether the
 * sandbox runs or sleeps; a sandbox on another node through a git helper
 * its node's agent runs (wsnode_git_dial), with the same answers.  The
 * app belongs to a tenant (another tenant's app is a 404).  An app
 * without a sandbox, or a workspace without a repository yet, is an ordinary
 * answer (200, available or committed false with a reason), not an error: a
 * client shows it as a state.
 */
#include <limits.h>
#include <string.h>

#include "api/api.h"
#include "git/git.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"
#include "wsnode/wsnode.h"

enum git_op { GIT_OP_STATUS, GIT_OP_DIFF, GIT_OP_COMMIT };

/*
 * The app's workspace, local (its directory in ws) or on another node
 * (sb and at's dial, through wsnode); 1 (answered) when there is none.
 */
static int
app_workspace(struct req *r, struct resp *w, const char *flag,
              struct sandbox *sb, char *ws, size_t len)
{
	struct app a;
	struct jv *o;
	int rc = api_load_app_sandbox(r, w, &a, sb);

	if (rc < 0)
		return -1;
	if (rc == 0) {
		o = jv_obj();
		jv_set_bool(o, flag, false);
		jv_set_str(o, "reason", "no_sandbox");
		api_reply_json(w, 200, o);
		return 1;
	}
	workspace_path(r->core->cfg->data_dir, sb->id, ws, len);
	return 0;
}

static void
note_commit(struct req *r, const struct jv *out)
{
	struct jv *pl = jv_obj();
	const char *sha = jv_str(jv_get(out, "sha"));

	jv_set_str(pl, "sha", sha ? sha : "");
	if (jv_str(jv_get(out, "branch")))
		jv_set_str(pl, "branch", jv_str(jv_get(out, "branch")));
	api_note(r, r->ids[0], "git.committed", NULL, pl,
	         "A commit was made (%.12s).", sha ? sha : "?");
}

static void
git_run(struct req *r, struct resp *w, enum git_op op, const char *message,
        const struct jv *paths)
{
	const char *flag = op == GIT_OP_COMMIT ? "committed" : "available";
	char ws[PATH_MAX];
	struct sandbox sb;
	struct wsnode_ref ref = {.ws = ws, .wn = r->core->wn, .sb = &sb};
	struct gitws_at at = {.ws = ws, .arg = &ref};
	struct err e = {0};
	struct jv *out = NULL;
	int rc;

	if (app_workspace(r, w, flag, &sb, ws, sizeof(ws)) != 0)
		return;
	if (wsnode_remote(&sb))
		at.dial = wsnode_git_dial_ref;
	if (op == GIT_OP_STATUS)
		rc = gitws_status_at(r->ids[0], &at, &out, &e);
	else if (op == GIT_OP_DIFF)
		rc = gitws_diff_at(r->ids[0], &at, &out, &e);
	else
		rc = gitws_commit_at(r->ids[0], &at, message, paths, &out, &e);
	if (rc == GITWS_NOT_REPO) {
		out = jv_obj();
		jv_set_bool(out, flag, false);
		jv_set_str(out, "reason", "not_a_git_repo");
	} else if (rc != 0) {
		api_reply_err(w, &e);
		return;
	} else if (op == GIT_OP_COMMIT && jv_is_true(jv_get(out, "committed")))
		note_commit(r, out);
	api_reply_json(w, 200, out);
}

void
apps_git_status(struct req *r, struct resp *w)
{
	git_run(r, w, GIT_OP_STATUS, NULL, NULL);
}

void
apps_git_diff(struct req *r, struct resp *w)
{
	git_run(r, w, GIT_OP_DIFF, NULL, NULL);
}

/*
 * "paths": a non-empty array of app-relative paths, each cleaned as the
 * files API cleans ?path= (so "./a//b" is "a/b" and ".." is refused);
 * into *out (NULL when the body has none).  -1 with e (400) naming the
 * path at fault.
 */
static int
commit_paths(const struct jv *body, struct jv **out, struct err *e)
{
	char clean[WSFS_MAX_PATH + 1];
	struct jv *v = jv_get(body, "paths"), *arr;
	struct buf b;
	int rc;

	*out = NULL;
	if (v == NULL || jv_type(v) == JV_NULL)
		return 0;
	if (jv_type(v) != JV_ARRAY || jv_len(v) == 0 ||
	    jv_len(v) > GITWS_MAX_COMMIT_PATHS)
		return ERR_BAD(e,
		               "paths must be an array of 1 to %d paths in the "
		               "app directory (leave it out to commit every "
		               "change)",
		               GITWS_MAX_COMMIT_PATHS);
	arr = jv_arr();
	for (size_t i = 0; i < jv_len(v); i++) {
		const struct jv *p = jv_at(v, i);

		if (jv_type(p) != JV_STRING) {
			jv_free(arr);
			return ERR_BAD(e, "paths[%zu] must be a string", i);
		}
		if (wsfs_clean(jv_str(p), jv_str_len(p), clean, sizeof(clean),
		               false, e) < 0) {
			jv_free(arr);
			return ERR_BAD(e,
			               "paths: %.200s is outside the "
			               "repository or not a path",
			               jv_str(p));
		}
		jv_push(arr, jv_new_str(clean));
	}
	buf_init(&b, GITWS_MAX_COMMIT_PATH_BYTES);
	rc = jv_dump(arr, &b);
	buf_release(&b);
	if (rc < 0) {
		jv_free(arr);
		return ERR_BAD(e, "paths are longer than %u bytes together",
		               GITWS_MAX_COMMIT_PATH_BYTES);
	}
	*out = arr;
	return 0;
}

void
apps_git_commit(struct req *r, struct resp *w)
{
	struct jv *body, *m, *paths = NULL;
	struct err e = {0};
	const char *msg;
	size_t n;

	if (api_body_object(r, w, false, &body) < 0)
		return;
	m = jv_get(body, "message");
	msg = jv_str(m);
	n = msg ? jv_str_len(m) : 0;
	if (msg == NULL || n == 0 || n > GITWS_MAX_MESSAGE ||
	    memchr(msg, '\0', n) != NULL) {
		jv_free(body);
		api_fail(
		    w, 400, "invalid_request",
		    "message must be a string of 1 to %d bytes without NUL",
		    GITWS_MAX_MESSAGE);
		return;
	}
	if (commit_paths(body, &paths, &e) < 0) {
		jv_free(body);
		api_reply_err(w, &e);
		return;
	}
	git_run(r, w, GIT_OP_COMMIT, msg, paths);
	jv_free(paths);
	jv_free(body);
}

/* The routes of this file, in the router's order (routes.c). */
const struct route git_routes[] = {
    {.method = "GET",
     .pattern = "/v1/apps/{id}/git/status",
     .fn = apps_git_status},
    {.method = "GET", .pattern = "/v1/apps/{id}/git/diff", .fn = apps_git_diff},
    {.method = "POST",
     .pattern = "/v1/apps/{id}/git/commit",
     .fn = apps_git_commit},
    {0},
};
