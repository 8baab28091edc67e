/*
 * remote.c - pushing a workspace's HEAD to a new branch of the app's
 * stored remote with libgit2, in the helper process (helper.c: the
 * sandbox user's uid, killed at its timeout, private hosts refused).
 *
 * The remote is made from the URL the API stored for the app, with
 * url.*.insteadOf skipped, and no refspec of the repository's own: what
 * the sandbox wrote into .git/config cannot move the push elsewhere
 * (and open.c refuses a config with insteadOf or a proxy anyway).  No
 * proxy is used and no off-site redirect followed.  The token is given
 * only from the credentials callback (auth.c), only for the credential's
 * host, and at most once per push, so a wrong token fails instead of
 * looping; it never appears in a URL.
 *
 * Never a force push: the refspec has no '+', and since receive-pack
 * accepts a non-fast-forward update unless told otherwise, the branch's
 * tip on the remote is read first; when it exists and HEAD does not
 * descend from it the push is refused as non_fast_forward.
 *
 * Outcomes are data ({pushed:false, reason, message}), not errors: the
 * client shows them.  Messages are libgit2's or the server's, with any
 * occurrence of the token replaced.  Rejected: the git CLI with an
 * askpass helper (a program to run, and a host check that has to parse
 * prompts).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "git/git.h"
#include "git/internal.h"

struct push_ctx {
	struct gitws_auth auth; /* first: the callbacks' payload is both */
	const struct gitws_push *p;
	char target[300];
	char head[GIT_OID_HEXSZ + 1];
	char rejected[256]; /* the server's status for our ref, if any */
	struct jv **out;
};

static int
update_cb(const char *ref, const char *status, void *payload)
{
	struct push_ctx *c = payload;

	(void)ref;
	if (status)
		snprintf(c->rejected, sizeof(c->rejected), "%s", status);
	return 0;
}

static int
answer_fail(struct push_ctx *c, const char *reason, const char *msg)
{
	*c->out = gitws_failure("pushed", reason, msg, c->p->r.token);
	if (c->target[0])
		jv_set_str(*c->out, "branch", c->target);
	return 0;
}

/* A failed libgit2 call, classified. */
static int
answer_lib(struct push_ctx *c, int rc, const char *what)
{
	const git_error *ge = git_error_last();
	const char *m = ge && ge->message ? ge->message : "unknown error";
	char msg[512];
	const char *reason = "push_failed";

	snprintf(msg, sizeof(msg), "%s: %s", what, m);
	if (gitws_auth_failed(rc, &c->auth, m))
		reason = "auth_failed";
	else if (gitws_net_reason(rc))
		reason = gitws_net_reason(rc);
	return answer_fail(c, reason, msg);
}

/* The remote's tip of refs/heads/<target>: 1 when it has one. */
static int
remote_tip(git_remote *r, const char *ref, git_oid *tip)
{
	const git_remote_head **heads;
	size_t n;

	if (git_remote_ls(&heads, &n, r) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (strcmp(heads[i]->name, ref) == 0) {
			git_oid_cpy(tip, &heads[i]->oid);
			return 1;
		}
	return 0;
}

static int
push_remote(git_repository *repo, struct push_ctx *c, const git_oid *head)
{
	git_remote_create_options ro;
	git_remote_connect_options co;
	git_remote_callbacks cb;
	git_proxy_options px;
	git_push_options po;
	git_remote *r = NULL;
	char ref[320], spec[340];
	char *specs[] = {spec};
	git_strarray arr = {specs, 1};
	git_oid tip;
	int rc, has;

	snprintf(ref, sizeof(ref), "refs/heads/%s", c->target);
	snprintf(spec, sizeof(spec), "HEAD:%s", ref);
	git_remote_create_options_init(&ro, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	ro.repository = repo;
	ro.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF |
	           GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	git_remote_init_callbacks(&cb, GIT_REMOTE_CALLBACKS_VERSION);
	cb.credentials = gitws_auth_cb;
	cb.push_update_reference = update_cb;
	cb.payload = c;
	git_proxy_options_init(&px, GIT_PROXY_OPTIONS_VERSION);
	px.type = GIT_PROXY_NONE;
	if ((rc = git_remote_create_with_opts(&r, c->p->r.url, &ro)) < 0)
		return answer_lib(c, rc, "the remote URL");
	git_remote_connect_options_init(&co,
	                                GIT_REMOTE_CONNECT_OPTIONS_VERSION);
	co.callbacks = cb;
	co.proxy_opts = px;
	co.follow_redirects = GIT_REMOTE_REDIRECT_NONE;
	if ((rc = git_remote_connect_ext(r, GIT_DIRECTION_PUSH, &co)) < 0) {
		answer_lib(c, rc, "connecting");
		goto out;
	}
	if ((has = remote_tip(r, ref, &tip)) < 0) {
		answer_lib(c, -1, "listing the remote's branches");
		goto out;
	}
	if (has && !git_oid_equal(&tip, head) &&
	    git_graph_descendant_of(repo, head, &tip) != 1) {
		answer_fail(c, "non_fast_forward",
		            "the branch exists on the remote with commits "
		            "HEAD does not have; push to another branch");
		goto out;
	}
	git_push_options_init(&po, GIT_PUSH_OPTIONS_VERSION);
	po.callbacks = cb;
	po.proxy_opts = px;
	po.follow_redirects = GIT_REMOTE_REDIRECT_NONE;
	if ((rc = git_remote_upload(r, &arr, &po)) < 0) {
		answer_lib(c, rc, "pushing");
		goto out;
	}
	if (c->rejected[0]) {
		answer_fail(c,
		            strstr(c->rejected, "already exists")
		                ? "branch_exists"
		            : strstr(c->rejected, "fast-forward") ||
		                    strstr(c->rejected, "fetch first")
		                ? "non_fast_forward"
		                : "push_failed",
		            c->rejected);
		goto out;
	}
	*c->out = jv_obj();
	jv_set_bool(*c->out, "pushed", true);
	jv_set_str(*c->out, "branch", c->target);
	jv_set_str(*c->out, "remote_url", c->p->r.url);
	jv_set_str(*c->out, "head", c->head);
out:
	git_remote_disconnect(r);
	git_remote_free(r);
	return 0;
}

static int
push_locked(git_repository *repo, void *arg, struct err *e)
{
	struct push_ctx *c = arg;
	git_oid head;

	if (git_repository_head_unborn(repo) == 1)
		return answer_fail(c, "empty_repo",
		                   "the repository has no commit to push");
	if (git_reference_name_to_id(&head, repo, "HEAD") < 0)
		return gitws_lib_err(e, "reading HEAD");
	git_oid_tostr(c->head, sizeof(c->head), &head);
	if (c->p->branch)
		snprintf(c->target, sizeof(c->target), "%s", c->p->branch);
	else
		snprintf(c->target, sizeof(c->target), "%s%.*s", c->p->prefix,
		         GITWS_SHORT_SHA, c->head);
	return push_remote(repo, c, &head);
}

int
gitws_push_here(const char *key, const char *ws, const struct gitws_push *p,
                struct jv **out, struct err *e)
{
	struct push_ctx c = {.p = p, .out = out};

	c.auth.cred_host = p->r.cred_host;
	c.auth.username = p->r.username;
	c.auth.token = p->r.token;
	*out = NULL;
	return gitws_with_repo(key, ws, push_locked, &c, e);
}
