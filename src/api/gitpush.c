/*
 * POST /v1/apps/{id}/git/push {"branch"?}: HEAD of the app's workspace
 * repository to a new branch of the app's stored repository URL, on the
 * host, whether the sandbox runs or sleeps (git/remote.c does the push);
 * a sandbox on another node is pushed from a copy of its workspace
 * staged here, so the token never leaves the control plane.
 *
 * Order: the app (404), the body and branch name (400), the stored URL
 * (no_repo_url), the sandbox (no_sandbox), the target (main, master and
 * the import branch are refused, case-insensitively: 409
 * refuses_default_branch), the credential (credential_not_found when it
 * was deleted), then the push.  The default target is
 * sandboxd/<slug>-<short sha>, new for every HEAD.  Push outcomes are
 * 200 {pushed:false, reason, message}: states a client shows.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api/api.h"
#include "sandbox/gitops.h"
#include "ws/workspace.h"
#include "git/git.h"
#include "wsnode/wsnode.h"

#define SLUG_MAX 32

/* "sandboxd/<slug>-": the app name's [a-z0-9] runs joined by '-'. */
static void
default_prefix(const char *name, char *out, size_t len)
{
	char slug[SLUG_MAX + 1];
	size_t n = 0;
	bool dash = false;

	for (const char *p = name; *p && n < SLUG_MAX; p++) {
		int ch = tolower((unsigned char)*p);

		if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
			if (dash && n > 0 && n < SLUG_MAX - 1)
				slug[n++] = '-';
			dash = false;
			slug[n++] = (char)ch;
		} else {
			dash = true;
		}
	}
	slug[n] = '\0';
	snprintf(out, len, "sandboxd/%s-", n ? slug : "app");
}

static void
reply_unpushed(struct resp *w, const char *reason, const char *msg)
{
	struct jv *o = jv_obj();

	jv_set_bool(o, "pushed", false);
	jv_set_str(o, "reason", reason);
	jv_set_str(o, "message", msg);
	api_reply_json(w, 200, o);
}

/* The requested branch: 0 (NULL when absent) or -1 (answered). */
static int
requested_branch(struct req *r, struct resp *w, const struct app *a, char *out,
                 size_t len)
{
	struct jv *body = NULL, *b;
	const char *import = a->git_branch[0] ? a->git_branch : "main";
	int rc = 0;

	out[0] = '\0';
	if (api_body_object(r, w, true, &body) < 0)
		return -1;
	b = body ? jv_get(body, "branch") : NULL;
	if (b && (jv_type(b) != JV_STRING ||
	          !api_git_branch_ok(jv_str(b), jv_str_len(b)))) {
		api_fail(w, 400, "invalid_request",
		         "branch must match [A-Za-z0-9][A-Za-z0-9._/-]{0,254}, "
		         "without \"..\"");
		rc = -1;
	} else if (b && (strcasecmp(jv_str(b), "main") == 0 ||
	                 strcasecmp(jv_str(b), "master") == 0 ||
	                 strcasecmp(jv_str(b), import) == 0)) {
		api_fail(w, 409, "refuses_default_branch",
		         "pushing to %s is refused: pushes go to a new branch "
		         "(main, master and the import branch %s are never "
		         "written); omit branch for sandboxd/<app>-<sha>",
		         jv_str(b), import);
		rc = -1;
	} else if (b) {
		snprintf(out, len, "%s", jv_str(b));
	}
	jv_free(body);
	return rc;
}

/*
 * gitws_push on sb's workspace: the local one, or for a sandbox on
 * another node a copy staged here (wsnode_stage: its dependency trees
 * left out, .git kept, a local workspace's layout and owners, so the
 * helper confines itself to it as to a local one), removed after.  The
 * token never goes to a node: the push runs on the control plane.
 */
static int
push_ws(struct core *c, const struct app *a, const struct sandbox *sb,
        const struct gitws_push *p, struct jv **out, struct err *e)
{
	char ws[PATH_MAX];
	int fd, rc;

	if (!wsnode_remote(sb)) {
		workspace_path(c->cfg->data_dir, sb->id, ws, sizeof(ws));
		return gitws_push(a->id, ws, p, out, e);
	}
	if ((fd = wsnode_stage(c->wn, sb, true, ws, sizeof(ws), e)) < 0)
		return -1;
	rc = gitws_push(a->id, ws, p, out, e);
	wsnode_shadow_drop(fd, ws);
	return rc;
}

/* Never the remote's URL: it may carry a name the tenant keeps private. */
static void
note_push(struct req *r, const struct jv *out)
{
	struct jv *pl = jv_obj();
	const char *branch = jv_str(jv_get(out, "branch"));

	jv_set_str(pl, "branch", branch ? branch : "");
	if (jv_str(jv_get(out, "head")))
		jv_set_str(pl, "head", jv_str(jv_get(out, "head")));
	api_note(r, r->ids[0], "git.pushed", NULL, pl,
	         "The app was pushed to the branch %s.", branch ? branch : "?");
}

void
apps_git_push(struct req *r, struct resp *w)
{
	struct gitws_push p = {0};
	struct vault_secret tok = {0};
	struct git_credential cred;
	struct err e = {0};
	struct sandbox sb;
	struct app a;
	struct jv *out = NULL;
	char branch[GIT_BRANCH_MAX + 1], prefix[64];
	int rc;

	if (api_load_app(r, w, &a) < 0)
		return;
	if (requested_branch(r, w, &a, branch, sizeof(branch)) < 0)
		return;
	if (a.git_repo_url[0] == '\0') {
		reply_unpushed(w, "no_repo_url",
		               "the app has no git.repo_url to push to");
		return;
	}
	if ((rc = store_sandbox_by_app(r->core->store, a.id, &sb)) != 0) {
		if (rc == STORE_NOT_FOUND)
			reply_unpushed(
			    w, "no_sandbox",
			    "the app has no sandbox, so no workspace");
		else
			api_fail(w, 500, "internal", "cannot read the app");
		return;
	}
	rc = gitops_remote(r->core, &a, &p.r, &cred, &tok);
	if (rc == STORE_NOT_FOUND) {
		reply_unpushed(w, "credential_not_found",
		               "the app's git credential was deleted");
		return;
	}
	if (rc != 0) {
		api_fail(w, 500, "internal", "cannot open the git credential");
		return;
	}
	default_prefix(a.name, prefix, sizeof(prefix));
	p.branch = branch[0] ? branch : NULL;
	p.prefix = prefix;
	rc = push_ws(r->core, &a, &sb, &p, &out, &e);
	vault_secret_free(&tok);
	if (rc == GITWS_NOT_REPO)
		reply_unpushed(w, "not_a_git_repo",
		               "the workspace has no repository yet");
	else if (rc != 0)
		api_reply_err(w, &e);
	else {
		if (jv_is_true(jv_get(out, "pushed")))
			note_push(r, out);
		api_reply_json(w, 200, out);
	}
}

/* The routes of this file, in the router's order (routes.c). */
const struct route gitpush_routes[] = {
    {.method = "POST",
     .pattern = "/v1/apps/{id}/git/push",
     .fn = apps_git_push},
    {0},
};
