/*
 * The snapshot commands: snapshot create|list|show|delete, and the app
 * commands built on snapshots: app restore, app fork (docs/snapshots.md).
 */
#include <stdio.h>
#include <string.h>

#include "client/calls.h"
#include "client/commands.h"

static const struct cli_col snap_cols[] = {
    {.head = "ID", .field = "id"},
    {.head = "NAME", .field = "name", .kind = CLI_COL_LINE},
    {.head = "APP", .field = "app_id"},
    {.head = "REASON", .field = "reason"},
    {.head = "FILES", .field = "files"},
    {.head = "OWN BYTES", .field = "own_bytes"},
    {.head = "CREATED", .field = "created_at", .kind = CLI_COL_TIME},
};

int
cmd_snapshot_create(struct cli *c, const struct cli_args *a)
{
	struct jv *body = jv_obj();
	struct cli_resp r;
	char path[512], id[64];
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/snapshots", a->pos[0]) <
	    0) {
		jv_free(body);
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	}
	if (cli_args_get(a, "name"))
		jv_set_str(body, "name", cli_args_get(a, "name"));
	rc = cli_call(c, "POST", path, body, &r);
	jv_free(body);
	if (rc == 0) {
		if (c->quiet && !c->json)
			printf("%s\n", cli_field(r.json, "id", id, sizeof(id)));
		else
			cli_done(c, &r,
			         "snapshot %s taken (%s, %lld files, paused "
			         "%lld ms)\n",
			         cli_field(r.json, "id", id, sizeof(id)),
			         jv_str(jv_get(r.json, "method"))
			             ? jv_str(jv_get(r.json, "method"))
			             : "",
			         (long long)jv_int(jv_get(r.json, "files")),
			         (long long)jv_int(jv_get(r.json, "pause_ms")));
	}
	cli_resp_release(&r);
	return rc;
}

int
cmd_snapshot_list(struct cli *c, const struct cli_args *a)
{
	struct cli_resp r;
	char path[512];
	int rc;

	if (a->npos == 0)
		snprintf(path, sizeof(path), "/v1/snapshots");
	else if (cli_pathf(path, sizeof(path), "/v1/apps/%s/snapshots",
	                   a->pos[0]) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	rc = cli_get_list(c, path, "snapshots", snap_cols,
	                  sizeof(snap_cols) / sizeof(snap_cols[0]), 0, &r);
	cli_resp_release(&r);
	return rc;
}

int
cmd_snapshot_show(struct cli *c, const struct cli_args *a)
{
	char path[512];

	if (cli_pathf(path, sizeof(path), "/v1/snapshots/%s", a->pos[0]) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	return cli_get_show(c, path);
}

int
cmd_snapshot_delete(struct cli *c, const struct cli_args *a)
{
	char path[512];

	if (cli_pathf(path, sizeof(path), "/v1/snapshots/%s", a->pos[0]) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	return cli_delete(c, a, path, "snapshot", NULL);
}

int
cmd_app_restore(struct cli *c, const struct cli_args *a)
{
	struct jv *body = jv_obj();
	struct cli_resp r;
	char path[512], undo[64];
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/restore", a->pos[0]) <
	    0) {
		jv_free(body);
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	}
	jv_set_str(body, "snapshot_id", a->pos[1]);
	rc = cli_call(c, "POST", path, body, &r);
	jv_free(body);
	if (rc == 0)
		cli_done(
		    c, &r,
		    "app %s restored to snapshot %s\n"
		    "undo with: sandboxd app restore %s %s\n",
		    a->pos[0], a->pos[1], a->pos[0],
		    cli_field(r.json, "undo_snapshot_id", undo, sizeof(undo)));
	cli_resp_release(&r);
	return rc;
}

int
cmd_app_fork(struct cli *c, const struct cli_args *a)
{
	struct jv *body = jv_obj();
	struct cli_resp r;
	char path[512], id[64], sb[64];
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/fork", a->pos[0]) < 0) {
		jv_free(body);
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	}
	if (cli_args_get(a, "snapshot"))
		jv_set_str(body, "snapshot_id", cli_args_get(a, "snapshot"));
	if (cli_args_get(a, "name"))
		jv_set_str(body, "name", cli_args_get(a, "name"));
	if (cli_args_has(a, "copy-config"))
		jv_set_bool(body, "copy_config", true);
	if (cli_args_has(a, "copy-budget"))
		jv_set_bool(body, "copy_budget", true);
	rc = cli_call(c, "POST", path, body, &r);
	jv_free(body);
	if (rc == 0) {
		const struct jv *app = jv_get(r.json, "app");
		if (c->quiet && !c->json)
			printf("%s\n", cli_field(app, "id", id, sizeof(id)));
		else
			cli_done(c, &r, "forked into app %s (%s), sandbox %s\n",
			         cli_field(app, "id", id, sizeof(id)),
			         jv_str(jv_get(app, "name"))
			             ? jv_str(jv_get(app, "name"))
			             : "",
			         cli_field(jv_get(r.json, "sandbox"), "id", sb,
			                   sizeof(sb)));
	}
	cli_resp_release(&r);
	return rc;
}
