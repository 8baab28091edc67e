/*
 * The recipes and an app's detection (docs/cli.md): recipes, app
 * inspect, app detect, and the "Detected …" line printed after an
 * imported app's sandbox is made.  --json prints the answers unchanged,
 * -q the recipe ids (recipes) or the detected recipe (inspect, detect).
 */
#include <stdio.h>
#include <string.h>

#include "client/calls.h"
#include "client/commands.h"

int
cmd_recipes(struct cli *c, const struct cli_args *a)
{
	static const struct cli_col cols[] = {
	    {.head = "ID", .field = "id"},
	    {.head = "NAME", .field = "display_name"},
	    {.head = "LANGUAGE", .field = "language"},
	    {.head = "PORT", .field = "port"},
	};
	struct cli_resp r;
	int rc =
	    cli_get_list(c, "/v1/runtime/recipes", "recipes", cols, 4, 0, &r);

	(void)a;
	cli_resp_release(&r);
	return rc;
}

/* "Detected Next.js (high): reason" or "No framework detected: …". */
static void
print_detection(const struct jv *d)
{
	const char *id = jv_str(jv_get(d, "recipe"));
	const char *name = jv_str(jv_get(d, "display_name"));
	const char *dir = jv_str(jv_get(d, "dir"));
	const struct jv *reasons = jv_get(d, "reasons");
	const struct jv *warn = jv_get(d, "warnings");

	if (d == NULL || jv_type(d) != JV_OBJECT)
		return;
	if (id == NULL || id[0] == '\0') {
		printf("No framework detected: %s\n",
		       jv_str(jv_get(d, "looked_for")) ?: "nothing matched");
	} else {
		printf("Detected %s (%s)%s%s%s%s\n", name ? name : id,
		       jv_str(jv_get(d, "confidence_label")) ?: "?",
		       dir && dir[0] ? " in " : "", dir && dir[0] ? dir : "",
		       jv_len(reasons) ? ": " : "",
		       jv_len(reasons) ? jv_str(jv_at(reasons, 0)) ?: "" : "");
	}
	for (size_t i = 0; i < jv_len(warn); i++)
		printf("warning: %s\n", jv_str(jv_at(warn, i)) ?: "");
}

int
cli_show_detection(struct cli *c, const char *app)
{
	char path[512];
	struct cli_resp r;
	const struct jv *m;
	int rc;

	if (c->json || c->quiet ||
	    cli_pathf(path, sizeof(path), "/v1/apps/%s/runtime-inspect", app) <
	        0)
		return 0;
	rc = cli_call(c, "GET", path, NULL, &r);
	m = jv_get(r.json, "existing_manifest");
	if (rc == 0 && jv_is_true(jv_get(m, "present")) &&
	    !jv_is_true(jv_get(m, "written_by_sandboxd")))
		printf("The app brought its own sandbox.yaml.\n");
	else if (rc == 0)
		print_detection(jv_get(r.json, "detection"));
	cli_resp_release(&r);
	return rc;
}

int
cmd_app_inspect(struct cli *c, const struct cli_args *a)
{
	char path[512];
	struct cli_resp r;
	const struct jv *m, *d, *s;
	bool valid;
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/runtime-inspect",
	              a->pos[0]) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	rc = cli_call(c, "GET", path, NULL, &r);
	m = jv_get(r.json, "existing_manifest");
	d = jv_get(r.json, "detection");
	valid = jv_is_true(jv_get(m, "valid"));
	if (rc != 0 || c->json) {
		if (rc == 0)
			cli_print_raw(&r);
		cli_resp_release(&r);
		return rc;
	}
	if (c->quiet) {
		printf("%s\n", jv_str(jv_get(d, "recipe")) ?: "");
		cli_resp_release(&r);
		return 0;
	}
	if (!jv_is_true(jv_get(m, "present")))
		printf("sandbox.yaml: none\n");
	else
		printf("sandbox.yaml: %s, %s%s\n",
		       jv_is_true(jv_get(m, "written_by_sandboxd"))
		           ? "written by sandboxd"
		           : "the app's own",
		       valid ? "valid" : "invalid: ",
		       valid ? "" : jv_str(jv_at(jv_get(m, "errors"), 0)) ?: "");
	print_detection(d);
	s = jv_get(r.json, "suggestions");
	for (size_t i = 1; i < jv_len(s); i++)
		printf("also: %s (%s)%s%s\n",
		       jv_str(jv_get(jv_at(s, i), "recipe")) ?: "?",
		       jv_str(jv_get(jv_at(s, i), "confidence_label")) ?: "?",
		       *(jv_str(jv_get(jv_at(s, i), "dir")) ?: "") ? " in "
		                                                   : "",
		       jv_str(jv_get(jv_at(s, i), "dir")) ?: "");
	if (d == NULL || jv_type(d) != JV_OBJECT)
		for (size_t i = 0; i < jv_len(jv_get(r.json, "warnings")); i++)
			printf("warning: %s\n",
			       jv_str(jv_at(jv_get(r.json, "warnings"), i)));
	cli_resp_release(&r);
	return 0;
}

int
cmd_app_detect(struct cli *c, const struct cli_args *a)
{
	char path[512];
	struct jv *body = jv_obj();
	struct cli_resp r;
	const struct jv *d;
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/runtime-inspect",
	              a->pos[0]) < 0) {
		jv_free(body);
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	}
	jv_set_str(body, "recipe", cli_args_get(a, "recipe"));
	if (cli_args_has(a, "force"))
		jv_set_bool(body, "force", true);
	rc = cli_call(c, "POST", path, body, &r);
	jv_free(body);
	d = jv_get(r.json, "detection");
	if (rc == 0 && c->json)
		cli_print_raw(&r);
	else if (rc == 0 && c->quiet)
		printf("%s\n", jv_str(jv_get(d, "recipe")) ?: "");
	else if (rc == 0) {
		print_detection(d);
		if (jv_is_true(jv_get(r.json, "written")))
			printf("wrote sandbox.yaml%s%.12s%s\n",
			       jv_str(jv_get(r.json, "commit")) ? " (commit "
			                                        : "",
			       jv_str(jv_get(r.json, "commit")) ?: "",
			       jv_str(jv_get(r.json, "commit")) ? ")" : "");
		else
			printf("sandbox.yaml left as it was\n");
	}
	cli_resp_release(&r);
	return rc;
}
