/*
 * The app commands: apps, app create|show|delete.  Deleting asks first
 * (the workspace is the only copy of the files unless pushed) unless
 * --yes; with no terminal to ask on, it refuses without --yes rather
 * than guess.
 */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

int
cmd_apps(struct cli *c, const struct cli_args *a)
{
	static const struct cli_col cols[] = {
	    {.head = "ID", .field = "id"},
	    {.head = "NAME", .field = "name"},
	    {.head = "PRESET", .field = "runtime_preset"},
	    {.head = "SANDBOX", .field = "current_sandbox_id"},
	    {.head = "CREATED", .field = "created_at", .kind = CLI_COL_TIME},
	};
	struct cli_resp r;
	int rc = cli_get_list(c, "/v1/apps", "apps", cols, 5, 0, &r);

	(void)a;
	cli_resp_release(&r);
	return rc;
}

int
cmd_app_create(struct cli *c, const struct cli_args *a)
{
	const char *preset = cli_args_get(a, "preset");
	const char *git = cli_args_get(a, "git");
	const char *desc = cli_args_get(a, "description");
	struct jv *body = jv_obj();
	struct cli_resp r;
	int rc;

	if (preset && git) {
		jv_free(body);
		return cli_fail(CLI_EUSAGE, "usage",
		                "app create: --preset or --git, not both");
	}
	if (!git &&
	    (cli_args_has(a, "branch") || cli_args_has(a, "credential"))) {
		jv_free(body);
		return cli_fail(CLI_EUSAGE, "usage",
		                "app create: --branch and --credential go with "
		                "--git");
	}
	jv_set_str(body, "name", a->pos[0]);
	jv_set_str(body, "runtime_preset", preset);
	jv_set_str(body, "description", desc);
	if (git) {
		struct jv *g = jv_obj();
		jv_set_str(g, "repo_url", git);
		jv_set_str(g, "branch", cli_args_get(a, "branch"));
		jv_set_str(g, "credential_id", cli_args_get(a, "credential"));
		jv_set(body, "git", g);
	}
	rc = cli_call(c, "POST", "/v1/apps", body, &r);
	jv_free(body);
	if (rc == 0)
		cli_show_answer(c, &r, "created app");
	cli_resp_release(&r);
	return rc;
}

int
cmd_app_show(struct cli *c, const struct cli_args *a)
{
	char path[512];

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s", a->pos[0]) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	return cli_get_show(c, path);
}

int
cmd_app_delete(struct cli *c, const struct cli_args *a)
{
	char path[512], warn[1536];

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s", a->pos[0]) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	snprintf(warn, sizeof(warn),
	         "this deletes app %s, its sandbox and its workspace; the "
	         "workspace is the only copy of the app's files unless you "
	         "pushed them (sandboxd git push %s)",
	         a->pos[0], a->pos[0]);
	return cli_delete(c, a, path, "app", warn);
}
