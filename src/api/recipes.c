/*
 * The recipes and an app's detection (docs/api.md, "Runtime detection"):
 * GET /v1/runtime/recipes, the table compiled into the daemon; GET
 * /v1/apps/{id}/runtime-inspect, what the app declares and what
 * detection finds in its files; POST, detection again (or the recipe
 * the user chose) written into the app's sandbox.yaml, committed, and
 * the running sandbox reconfigured.  Files are read on the host through
 * wsfs (recipeops.c); nothing of the app runs.  Another tenant's app is
 * a 404.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "recipe/recipe.h"
#include "sandbox/recipeops.h"
#include "task/task.h"

void
recipes_list(struct req *r, struct resp *w)
{
	char err[256];

	(void)r;
	if (recipe_load(err, sizeof(err)) < 0) {
		api_fail(w, 500, "internal", "the recipe table is broken: %s",
		         err);
		return;
	}
	api_reply_json(w, 200, recipe_list_json());
}

/* No files to read yet: why, as the answer's one warning. */
static struct jv *
no_files_json(const char *why)
{
	struct jv *o = jv_obj(), *m = jv_obj(), *warn = jv_arr();

	jv_set_bool(m, "present", false);
	jv_set(o, "existing_manifest", m);
	jv_set(o, "detection", jv_new_null());
	jv_set(o, "suggestions", jv_arr());
	jv_push(warn, jv_new_str(why));
	jv_set(o, "warnings", warn);
	return o;
}

#define NO_SANDBOX                                                             \
	"the app has no sandbox, so no files to read; create one (POST "       \
	"/v1/apps/{id}/sandbox)"
#define CREATING "the sandbox is being created; its files are not there yet"

void
recipes_inspect(struct req *r, struct resp *w)
{
	struct sandbox sb;
	struct app a;
	struct err e = {0};
	struct jv *o;
	int rc = api_load_app_sandbox(r, w, &a, &sb);

	if (rc < 0)
		return;
	if (rc == 0 || sb.status == SANDBOX_CREATING) {
		api_reply_json(w, 200,
		               no_files_json(rc ? CREATING : NO_SANDBOX));
		return;
	}
	if (sb.status == SANDBOX_ERROR &&
	    strcmp(sb.status_reason, "import_failed") == 0) {
		snprintf(e.msg, sizeof(e.msg),
		         "the import failed, so there are no files: %s",
		         sb.error_message);
		api_reply_json(w, 200, no_files_json(e.msg));
		return;
	}
	o = recipeops_inspect(r->core, sb.id, &e);
	if (o == NULL) {
		api_reply_err(w, &e);
		return;
	}
	jv_set_str(o, "sandbox_id", sb.id);
	api_reply_json(w, 200, o);
}

/* {"recipe":"id"?, "force":bool?}: 0, or -1 answered. */
static int
apply_body(struct req *r, struct resp *w, char *recipe, size_t len, bool *force)
{
	struct jv *body = NULL, *v;
	const char *key;
	void *it = NULL;
	int rc = 0;

	recipe[0] = '\0';
	*force = false;
	if (api_body_object(r, w, true, &body) < 0)
		return -1;
	while (rc == 0 && jv_each(body, &it, &key, &v)) {
		if (strcmp(key, "recipe") == 0 && jv_type(v) == JV_NULL)
			continue;
		if (strcmp(key, "recipe") == 0 && jv_str(v) &&
		    jv_str_len(v) > 0 && jv_str_len(v) < len)
			snprintf(recipe, len, "%s", jv_str(v));
		else if (strcmp(key, "force") == 0 && jv_type(v) == JV_BOOL)
			*force = jv_is_true(v);
		else
			rc = -1;
	}
	if (rc < 0)
		api_fail(w, 400, "invalid_request",
		         "the body is {\"recipe\":\"id\"?, \"force\":bool?}; "
		         "\"%.40s\" is not one of them or has the wrong type",
		         key);
	jv_free(body);
	return rc;
}

void
recipes_apply(struct req *r, struct resp *w)
{
	char recipe[RECIPE_ID_LEN + 1], sha[41];
	struct detection d;
	struct sandbox sb;
	struct app a;
	struct err e = {0};
	struct jv *o;
	bool force, written;
	int rc;

	if (apply_body(r, w, recipe, sizeof(recipe), &force) < 0 ||
	    (rc = api_load_app_sandbox(r, w, &a, &sb)) < 0)
		return;
	if (rc == 0 || sb.status == SANDBOX_CREATING) {
		api_fail(w, 409, "conflict", "%s", rc ? CREATING : NO_SANDBOX);
		return;
	}
	if (task_running_on(r->core, sb.id)) {
		api_fail(w, 409, "task_in_progress",
		         "a task is running on the app; wait for it or cancel "
		         "it, then detect again");
		return;
	}
	if (recipeops_apply(r->core, &a, sb.id, recipe[0] ? recipe : NULL,
	                    force, &d, &written, sha, &e) < 0) {
		api_reply_err(w, &e);
		return;
	}
	if (written && sb.status == SANDBOX_RUNNING)
		core_sandbox_reload(r->core, sb.id);
	o = jv_obj();
	jv_set_bool(o, "written", written);
	jv_set(o, "commit", sha[0] ? jv_new_str(sha) : jv_new_null());
	jv_set_str(o, "sandbox_id", sb.id);
	jv_set(o, "detection", detection_json(&d));
	api_reply_json(w, 200, o);
}

/* The routes of this file, in the router's order (routes.c). */
const struct route recipes_routes[] = {
    {.method = "GET", .pattern = "/v1/runtime/recipes", .fn = recipes_list},
    {.method = "GET",
     .pattern = "/v1/apps/{id}/runtime-inspect",
     .fn = recipes_inspect},
    {.method = "POST",
     .pattern = "/v1/apps/{id}/runtime-inspect",
     .fn = recipes_apply},
    {0},
};
