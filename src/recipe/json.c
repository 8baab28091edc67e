/*
 * The recipes and a detection as the API's JSON: GET /v1/runtime/recipes
 * (the reference's shape: id, display_name, preset, detect{deps,
 * config_files, exclude_deps, requirements_contains}, suggested_manifest,
 * notes, tags, verified; and ours: language, package_managers, port,
 * health_path, priority) and GET /v1/apps/{id}/runtime-inspect's
 * detection.  The suggested manifest is the recipe rendered for an app
 * at the root with the language's usual package manager.
 */
#include <stdio.h>
#include <string.h>

#include "recipe/internal.h"

static struct jv *
strings(const char (*v)[RECIPE_NOTE_LEN], int n)
{
	struct jv *a = jv_arr();

	for (int i = 0; i < n; i++)
		jv_push(a, jv_new_str(v[i]));
	return a;
}

static struct jv *
list(const struct strlist *l)
{
	struct jv *a = jv_arr();

	for (int i = 0; i < l->n; i++)
		jv_push(a, jv_new_str(l->v[i]));
	return a;
}

static void
set_list(struct jv *o, const char *key, const struct strlist *l)
{
	if (l->n > 0)
		jv_set(o, key, list(l));
}

static struct jv *
detect_obj(const struct recipe *r)
{
	struct jv *d = jv_obj();

	jv_set(d, "deps", list(&r->deps));
	set_list(d, "any_deps", &r->any_deps);
	jv_set(d, "config_files", list(&r->config_files));
	set_list(d, "files", &r->files);
	set_list(d, "exclude_deps", &r->exclude_deps);
	set_list(d, "requirements_contains", &r->requirements);
	set_list(d, "scripts", &r->scripts);
	return d;
}

static struct jv *
suggested(const struct recipe *r)
{
	static __thread struct detection d;
	struct buf out;
	struct jv *v;
	char err[64];

	memset(&d, 0, sizeof(d));
	snprintf(d.recipe, sizeof(d.recipe), "%s", r->id);
	if (strcmp(r->language, "node") == 0) {
		snprintf(d.pm, sizeof(d.pm), "npm");
		snprintf(d.inputs[0], sizeof(d.inputs[0]), "package.json");
		snprintf(d.inputs[1], sizeof(d.inputs[1]), "package-lock.json");
		d.ninputs = 2;
		snprintf(d.script, sizeof(d.script), "dev");
	} else if (strcmp(r->language, "python") == 0) {
		snprintf(d.pm, sizeof(d.pm), "pip");
		snprintf(d.inputs[0], sizeof(d.inputs[0]), "requirements.txt");
		d.ninputs = 1;
		snprintf(d.pyreqs, sizeof(d.pyreqs), "-r requirements.txt");
	}
	buf_init(&out, 64u << 10);
	v = recipe_manifest(&d, r->port, &out, err, sizeof(err)) == 0
	        ? jv_new_str(out.data)
	        : jv_new_null();
	buf_release(&out);
	return v;
}

static struct jv *
pms(const struct recipe *r)
{
	const struct recipe_table *t = recipe_table();
	struct jv *a = jv_arr();

	for (int i = 0; t != NULL && i < t->npm; i++)
		if (strcmp(t->pm[i].language, r->language) == 0)
			jv_push(a, jv_new_str(t->pm[i].id));
	return a;
}

/* The publish object as the table has it (placeholders unrendered). */
static struct jv *
publish_obj(const struct recipe *r)
{
	struct jv *p;

	if (!r->has_publish)
		return jv_new_null();
	p = jv_obj();
	if (r->pub_build != NULL)
		jv_set_str(p, "build", r->pub_build);
	if (r->pub_output != NULL) {
		jv_set_str(p, "output", r->pub_output);
		jv_set_bool(p, "spa", r->pub_spa);
	} else {
		jv_set_str(p, "command", r->pub_command);
		jv_set_int(p, "port", r->pub_port);
	}
	return p;
}

static struct jv *
one(const struct recipe *r)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "id", r->id);
	jv_set_str(o, "display_name", r->display_name);
	jv_set_str(o, "language", r->language);
	jv_set_str(o, "preset", r->preset);
	jv_set(o, "detect", detect_obj(r));
	jv_set(o, "package_managers", pms(r));
	if (r->dev != NULL)
		jv_set_int(o, "port", r->port);
	jv_set_str(o, "health_path", r->health_path);
	jv_set_int(o, "priority", r->priority);
	jv_set(o, "suggested_manifest", suggested(r));
	jv_set(o, "publish", publish_obj(r));
	jv_set(o, "notes", list(&r->notes));
	jv_set(o, "tags", list(&r->tags));
	if (r->verified_starter != NULL) {
		struct jv *v = jv_obj();

		jv_set_str(v, "starter", r->verified_starter);
		jv_set_str(v, "version", r->verified_version);
		jv_set(o, "verified", v);
	}
	return o;
}

struct jv *
recipe_list_json(void)
{
	struct jv *o = jv_obj(), *a = jv_arr();

	for (size_t i = 0; i < recipe_count(); i++)
		jv_push(a, one(recipe_at(i)));
	jv_set(o, "recipes", a);
	return o;
}

static const char *
label(int conf)
{
	return conf >= 80 ? "high" : conf >= 50 ? "medium" : "low";
}

struct jv *
detection_json(const struct detection *d)
{
	const struct recipe *r = d->recipe[0] ? recipe_find(d->recipe) : NULL;
	struct jv *o = jv_obj(), *c = jv_arr(), *in = jv_arr();

	jv_set(o, "recipe", r ? jv_new_str(r->id) : jv_new_null());
	jv_set(o, "display_name",
	       r ? jv_new_str(r->display_name) : jv_new_null());
	jv_set_str(o, "dir", d->dir);
	jv_set(o, "package_manager",
	       d->pm[0] ? jv_new_str(d->pm) : jv_new_null());
	jv_set_int(o, "confidence", d->confidence);
	jv_set_str(o, "confidence_label", label(d->confidence));
	jv_set(o, "reasons", strings(d->reasons, d->nreasons));
	jv_set(o, "warnings", strings(d->warnings, d->nwarnings));
	for (int i = 0; i < d->ncands; i++) {
		const struct recipe *cr = recipe_find(d->cands[i].recipe);
		struct jv *e = jv_obj();

		jv_set_str(e, "recipe", d->cands[i].recipe);
		jv_set_str(e, "display_name", cr ? cr->display_name : NULL);
		jv_set_str(e, "dir", d->cands[i].dir);
		jv_set_int(e, "confidence", d->cands[i].confidence);
		jv_push(c, e);
	}
	jv_set(o, "candidates", c);
	for (int i = 0; i < d->ninputs; i++)
		jv_push(in, jv_new_str(d->inputs[i]));
	jv_set(o, "inputs", in);
	if (r == NULL)
		jv_set_str(o, "looked_for", d->looked_for);
	return o;
}
