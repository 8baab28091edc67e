/*
 * gitops.c - an app's credential and import, between the store, the
 * vault and the git module.  The token is opened only for the one call
 * that hands it to the git helper, and wiped right after.
 */
#include "sandbox/gitops.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/recipeops.h"
#include "ws/workspace.h"
#include "wsnode/wsnode.h"
#include "git/git.h"
#include "lib/clock.h"
#include "timeline/timeline.h"
#include "lib/log.h"

bool
gitops_test_http(void)
{
	const char *v = getenv("SANDBOXD_GIT_ALLOW_HTTP");

	return v && strcmp(v, "1") == 0;
}

int
gitops_remote(struct core *c, const struct app *a, struct gitws_remote *r,
              struct git_credential *cred, struct vault_secret *tok)
{
	int rc = 0;

	memset(cred, 0, sizeof(*cred));
	memset(tok, 0, sizeof(*tok));
	if (a->git_credential_id[0]) {
		rc = store_gitcred_get(c->store, a->owner, a->git_credential_id,
		                       cred);
		if (rc == 0)
			rc = store_gitcred_token(c->store, a->owner,
			                         a->git_credential_id, tok);
		if (rc != 0)
			return rc == STORE_NOT_FOUND ? rc : -1;
	}
	*r = (struct gitws_remote){
	    .url = a->git_repo_url,
	    .cred_host = cred->host[0] ? cred->host : NULL,
	    .username = cred->username,
	    .token = tok->data,
	    .timeout_s = (int)c->cfg->git_timeout_s,
	    .allow_private = c->cfg->git_allow_private,
	    .allow_loopback = gitops_test_http(),
	    .ca_file = c->cfg->git_ca_file[0] ? c->cfg->git_ca_file : NULL,
	};
	return 0;
}

static int
import_status(const char *reason)
{
	if (strcmp(reason, "blocked_host") == 0)
		return 400;
	if (strcmp(reason, "not_empty") == 0)
		return 409;
	if (strcmp(reason, "timeout") == 0)
		return 504;
	return 502;
}

/*
 * git's message as the end of one sentence: whitespace runs (newlines
 * too) made one space, a sentence break inside made "; ", no final
 * full stop (the caller's format ends the sentence).
 */
static void
one_clause(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (; *in == ' ' || *in == '\n' || *in == '\t'; in++)
		;
	for (; *in && o + 2 < len; in++) {
		bool space =
		    *in == ' ' || *in == '\n' || *in == '\t' || *in == '\r';
		if (space && (o == 0 || out[o - 1] == ' '))
			continue;
		if (space && o && out[o - 1] == '.') {
			out[o - 1] = ';'; /* "refused. Retrying" */
			out[o++] = ' ';
			continue;
		}
		out[o++] = space ? ' ' : *in;
	}
	while (o && (out[o - 1] == ' ' || out[o - 1] == '.' ||
	             out[o - 1] == ';' || out[o - 1] == ':'))
		o--;
	out[o] = '\0';
	if (o == 0)
		snprintf(out, len, "the clone failed");
}

static void
note_import(struct core *c, const struct app *a, const char *sandbox_id,
            const char *branch)
{
	char pl[STORE_EVENT_PAYLOAD_MAX + 1];
	struct jv *o = jv_obj();

	jv_set_str(o, "branch", branch ? branch : "");
	timeline_note(
	    c->tl,
	    &(struct tl_event){.app_id = a->id,
	                       .type = "git.imported",
	                       .sandbox_id = sandbox_id,
	                       .payload_json = tl_payload(o, pl, sizeof(pl))},
	    "The repository was imported.");
}

int
gitops_import(struct core *c, const struct app *a, const char *sandbox_id,
              struct err *e)
{
	struct git_credential cred;
	struct vault_secret tok;
	struct gitws_clone g = {0};
	struct jv *out = NULL;
	char ws[PATH_MAX];
	const char *reason;
	int rc = gitops_remote(c, a, &g.r, &cred, &tok);

	if (rc == STORE_NOT_FOUND)
		return err_set(e, 409, "git_import_failed",
		               "the app's git credential was deleted; create "
		               "the app again with another");
	if (rc < 0)
		return ERR_INTERNAL(e, "cannot open the git credential");
	g.branch = a->git_branch[0] ? a->git_branch : NULL;
	g.max_bytes = (uint64_t)c->cfg->git_import_max_mb << 20;
	workspace_path(c->cfg->data_dir, sandbox_id, ws, sizeof(ws));
	if (wsnode_guard_id(c->store, sandbox_id, "an import", e) < 0) {
		vault_secret_free(&tok);
		return -1;
	}
	rc = gitws_clone(a->id, ws, &g, &out, e);
	vault_secret_free(&tok);
	if (rc < 0)
		return -1;
	if (!jv_is_true(jv_get(out, "imported"))) {
		char why[400];
		reason = jv_str(jv_get(out, "reason"));
		one_clause(jv_str(jv_get(out, "message")) ?: "", why,
		           sizeof(why));
		err_set(e, import_status(reason ? reason : ""),
		        "git_import_failed",
		        "The repository could not be imported (%s): %s.",
		        reason ? reason : "clone_failed", why);
		jv_free(out);
		return -1;
	}
	if (store_app_imported(c->store, a->id,
	                       jv_str(jv_get(out, "branch")) ?: "main",
	                       clock_now()) != 0)
		log_warn("app %s: cannot record the import", a->id);
	log_info("app %s: imported %s (%s) into sandbox %s", a->id,
	         a->git_repo_url, jv_str(jv_get(out, "branch")) ?: "?",
	         sandbox_id);
	note_import(c, a, sandbox_id, jv_str(jv_get(out, "branch")));
	jv_free(out);
	/* Then what runs it: its own sandbox.yaml, or a detected one. */
	return recipeops_import(c, a, sandbox_id, e);
}
