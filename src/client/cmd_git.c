/*
 * The git commands: status, diff, commit, push of an app's repository,
 * and the git credentials (tokens for https remotes).  A credential's
 * token is read from stdin or typed at a prompt with echo off, never
 * taken from argv (which shell history and ps show), and wiped from
 * our memory once sent.
 */
#include <stdio.h>
#include <string.h>

#include "client/calls.h"
#include "client/commands.h"

static int
app_path(char *out, size_t len, const char *fmt, const char *app)
{
	if (cli_pathf(out, len, fmt, app) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	return 0;
}

/* "available":false answers: say why, and exit 1. */
static int
unavailable(struct cli *c, const struct cli_resp *r)
{
	const char *why = jv_str(jv_get(r->json, "reason"));

	if (c->json)
		return CLI_EFAIL;
	return cli_fail(CLI_EFAIL, why ? why : "unavailable",
	                "the app has no repository to read (%s)",
	                why ? why : "?");
}

int
cmd_git_status(struct cli *c, const struct cli_args *a)
{
	static const struct cli_col cols[] = {
	    {.head = "STATUS", .field = "status"},
	    {.head = "STAGED", .field = "staged", .kind = CLI_COL_YESNO},
	    {.head = "PATH", .field = "path"},
	};
	char path[512], t0[32], t2[4096];
	struct cli_resp r;
	const struct jv *files;
	int rc =
	    app_path(path, sizeof(path), "/v1/apps/%s/git/status", a->pos[0]);

	if (rc)
		return rc;
	rc = cli_call(c, "GET", path, NULL, &r);
	if (rc == 0 && c->json)
		cli_print_raw(&r);
	if (rc == 0 && !jv_is_true(jv_get(r.json, "available")))
		rc = unavailable(c, &r);
	if (rc != 0 || c->json) {
		cli_resp_release(&r);
		return rc;
	}
	files = jv_get(r.json, "files");
	if (!c->quiet)
		printf("branch %s, HEAD %s, %s\n",
		       cli_field(r.json, "branch", t0, sizeof(t0)),
		       cli_field(r.json, "head_sha", t2, sizeof(t2)),
		       jv_is_true(jv_get(r.json, "clean")) ? "clean"
		                                           : "changed");
	if (jv_len(files) > 0)
		cli_print_list(c, files, cols, 3, 2);
	cli_resp_release(&r);
	return CLI_OK;
}

int
cmd_git_diff(struct cli *c, const struct cli_args *a)
{
	char path[512];
	struct cli_resp r;
	const char *diff;
	int rc =
	    app_path(path, sizeof(path), "/v1/apps/%s/git/diff", a->pos[0]);

	if (rc)
		return rc;
	rc = cli_call(c, "GET", path, NULL, &r);
	if (rc == 0 && c->json)
		cli_print_raw(&r);
	else if (rc == 0 && jv_get(r.json, "available") &&
	         !jv_is_true(jv_get(r.json, "available")))
		rc = unavailable(c, &r);
	else if (rc == 0 && (diff = jv_str(jv_get(r.json, "diff"))) != NULL) {
		/* Colour the lines on a terminal, as git does. */
		for (const char *l = diff, *nl; *l; l = nl ? nl + 1 : "") {
			const char *sgr = l[0] == '+'   ? "32"
			                  : l[0] == '-' ? "31"
			                  : l[0] == '@' ? "36"
			                                : NULL;
			nl = strchr(l, '\n');
			printf("%s%.*s%s\n", sgr ? cli_sgr(c, sgr) : "",
			       (int)(nl ? (size_t)(nl - l) : strlen(l)), l,
			       sgr ? CLI_RESET(c) : "");
		}
		if (jv_is_true(jv_get(r.json, "truncated")))
			fprintf(stderr, "(the diff was cut at 512 KiB)\n");
	}
	cli_resp_release(&r);
	return rc;
}

int
cmd_git_commit(struct cli *c, const struct cli_args *a)
{
	const char *msg = cli_args_get(a, "message");
	struct jv *body;
	char path[512], tmp[64];
	struct cli_resp r;
	int rc;

	if (msg == NULL)
		return cli_fail(CLI_EUSAGE, "usage",
		                "git commit: -m MESSAGE is required");
	rc = app_path(path, sizeof(path), "/v1/apps/%s/git/commit", a->pos[0]);
	if (rc)
		return rc;
	body = jv_obj();
	jv_set_str(body, "message", msg);
	rc = cli_call(c, "POST", path, body, &r);
	jv_free(body);
	if (rc == 0) {
		if (c->json)
			cli_print_raw(&r);
		else if (jv_is_true(jv_get(r.json, "committed")))
			printf(c->quiet ? "%s\n" : "committed %s\n",
			       cli_field(r.json, "sha", tmp, sizeof(tmp)));
		else if (!c->quiet)
			printf("nothing committed (%s)\n",
			       cli_field(r.json, "reason", tmp, sizeof(tmp)));
	}
	cli_resp_release(&r);
	return rc;
}

int
cmd_git_push(struct cli *c, const struct cli_args *a)
{
	struct jv *body = jv_obj();
	char path[512], t1[256], t2[2048];
	struct cli_resp r;
	int rc =
	    app_path(path, sizeof(path), "/v1/apps/%s/git/push", a->pos[0]);

	if (rc) {
		jv_free(body);
		return rc;
	}
	jv_set_str(body, "branch", cli_args_get(a, "branch"));
	cli_spin_start(c, "pushing");
	rc = cli_call(c, "POST", path, body, &r);
	jv_free(body);
	if (rc == 0) {
		if (c->json)
			cli_print_raw(&r);
		if (!jv_is_true(jv_get(r.json, "pushed"))) {
			rc = c->json ? CLI_EFAIL
			             : cli_fail(CLI_EFAIL,
			                        cli_field(r.json, "reason", t1,
			                                  sizeof(t1)),
			                        "not pushed: %s",
			                        cli_field(r.json, "message", t2,
			                                  sizeof(t2)));
		} else if (!c->json) {
			printf(c->quiet ? "%s\n" : "pushed branch %s",
			       cli_field(r.json, "branch", t1, sizeof(t1)));
			if (!c->quiet)
				printf(" to %s\n",
				       cli_field(r.json, "remote_url", t2,
				                 sizeof(t2)));
		}
	}
	cli_resp_release(&r);
	return rc;
}

int
cmd_cred_add(struct cli *c, const struct cli_args *a)
{
	const char *host = cli_args_get(a, "host");
	char token[CLI_MAX_SECRET_BYTES + 1];
	struct jv *body;
	struct cli_resp r;
	int rc;

	if (host == NULL)
		return cli_fail(CLI_EUSAGE, "usage",
		                "git credential add: --host is required");
	if (cli_read_secret("Token (not shown): ", token, sizeof(token)) < 0)
		return cli_fail(CLI_EUSAGE, "usage",
		                "no token on stdin (or it is over %d bytes)",
		                CLI_MAX_SECRET_BYTES);
	body = jv_obj();
	jv_set_str(body, "name", a->pos[0]);
	jv_set_str(body, "host", host);
	jv_set_str(body, "username", cli_args_get(a, "username"));
	jv_set_str(body, "token", token);
	explicit_bzero(token, sizeof(token));
	rc = cli_call(c, "POST", "/v1/git-credentials", body, &r);
	jv_free(body);
	if (rc == 0)
		cli_show_answer(c, &r, "stored git credential");
	cli_resp_release(&r);
	return rc;
}

int
cmd_cred_list(struct cli *c, const struct cli_args *a)
{
	static const struct cli_col cols[] = {
	    {.head = "ID", .field = "id"},
	    {.head = "NAME", .field = "name"},
	    {.head = "HOST", .field = "host"},
	    {.head = "USERNAME", .field = "username"},
	};
	struct cli_resp r;
	int rc = cli_get_list(c, "/v1/git-credentials", "credentials", cols, 4,
	                      0, &r);

	(void)a;
	cli_resp_release(&r);
	return rc;
}

int
cmd_cred_delete(struct cli *c, const struct cli_args *a)
{
	char path[512];
	int rc =
	    app_path(path, sizeof(path), "/v1/git-credentials/%s", a->pos[0]);

	if (rc)
		return rc;
	return cli_delete(c, a, path, "git credential", NULL);
}
