/*
 * The recipe table: recipes.json parsed once into struct recipe entries
 * whose strings are borrowed from the parsed JSON, which is kept for the
 * process's life (the API's list shows parts of it as they are).  Every
 * field is checked here, so detection and rendering trust the table: an
 * id is unique and lower-case, a language is known, a web recipe has a
 * dev command and a port, a placeholder is one rendering knows.  A bad
 * table is refused with the recipe and field named; the unit test loads
 * the compiled-in one, so a bad edit fails the build's tests.
 *
 * recipe_load() parses the compiled-in text under a once-lock;
 * recipe_load_text() replaces the table (tests and the fuzz target only,
 * before any other thread reads it).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipe/internal.h"

#define TABLE_DEPTH 8

static struct recipe_table table;
static atomic_bool loaded;

struct load_ctx {
	char *err;
	size_t errlen;
	const char *where;
};

static int
bad(struct load_ctx *c, const char *field, const char *what)
{
	snprintf(c->err, c->errlen, "recipes.json: %s: %s: %s", c->where, field,
	         what);
	return -1;
}

static int
get_str(struct load_ctx *c, const struct jv *o, const char *key, bool required,
        const char **out)
{
	struct jv *v = jv_get(o, key);

	*out = NULL;
	if (v == NULL)
		return required ? bad(c, key, "is required") : 0;
	if (jv_type(v) != JV_STRING || jv_str_len(v) == 0)
		return bad(c, key, "must be a non-empty string");
	*out = jv_str(v);
	return 0;
}

static int
get_list(struct load_ctx *c, const struct jv *o, const char *key,
         struct strlist *l)
{
	struct jv *v = jv_get(o, key);

	l->n = 0;
	if (v == NULL)
		return 0;
	if (jv_type(v) != JV_ARRAY || jv_len(v) > RECIPE_MAX_LIST)
		return bad(c, key, "must be a list of at most 24 strings");
	for (size_t i = 0; i < jv_len(v); i++) {
		struct jv *s = jv_at(v, i);

		if (jv_type(s) != JV_STRING || jv_str_len(s) == 0)
			return bad(c, key, "must hold non-empty strings");
		l->v[l->n++] = jv_str(s);
	}
	return 0;
}

static int
get_int(struct load_ctx *c, const struct jv *o, const char *key, int lo, int hi,
        int *out)
{
	struct jv *v = jv_get(o, key);

	if (v == NULL || jv_type(v) != JV_INT || jv_int(v) < lo ||
	    jv_int(v) > hi)
		return bad(c, key, "must be a whole number in range");
	*out = (int)jv_int(v);
	return 0;
}

/* A command's placeholders are the ones render.c knows. */
static int
check_command(struct load_ctx *c, const char *field, const char *cmd)
{
	static const char *const known[] = {"{install}", "{run}",   "{exec}",
	                                    "{script}",  "{main}",  "{pyfile}",
	                                    "{module}",  "{pyreqs}"};
	const char *p = cmd;

	if (strchr(cmd, '\n') != NULL)
		return bad(c, field, "must be one line");
	while ((p = strchr(p, '{')) != NULL) {
		size_t i;

		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strncmp(p, known[i], strlen(known[i])) == 0)
				break;
		if (i == sizeof(known) / sizeof(known[0]))
			return bad(c, field, "names an unknown placeholder");
		p++;
	}
	return 0;
}

static int
load_detect(struct load_ctx *c, struct recipe *r, const struct jv *o)
{
	struct jv *d = jv_get(o, "detect");

	if (d == NULL || jv_type(d) != JV_OBJECT)
		return bad(c, "detect", "must be an object");
	if (get_list(c, d, "deps", &r->deps) < 0 ||
	    get_list(c, d, "any_deps", &r->any_deps) < 0 ||
	    get_list(c, d, "config_files", &r->config_files) < 0 ||
	    get_list(c, d, "files", &r->files) < 0 ||
	    get_list(c, d, "exclude_deps", &r->exclude_deps) < 0 ||
	    get_list(c, d, "requirements", &r->requirements) < 0 ||
	    get_list(c, d, "scripts", &r->scripts) < 0)
		return -1;
	if (r->deps.n + r->any_deps.n + r->config_files.n + r->files.n +
	        r->requirements.n + r->scripts.n ==
	    0)
		return bad(c, "detect", "names no signal");
	return 0;
}

static int
load_workers(struct load_ctx *c, struct recipe *r, const struct jv *cmds)
{
	struct jv *w = jv_get(cmds, "workers");

	r->nworkers = 0;
	if (w == NULL)
		return 0;
	if (jv_type(w) != JV_ARRAY || jv_len(w) == 0 ||
	    jv_len(w) > RECIPE_MAX_WORKERS)
		return bad(c, "commands.workers", "must be a list of 1 to 4");
	for (size_t i = 0; i < jv_len(w); i++) {
		struct recipe_worker *k = &r->workers[r->nworkers++];

		if (get_str(c, jv_at(w, i), "name", true, &k->name) < 0 ||
		    get_str(c, jv_at(w, i), "command", true, &k->command) < 0 ||
		    check_command(c, "commands.workers", k->command) < 0)
			return -1;
	}
	return 0;
}

static int
load_commands(struct load_ctx *c, struct recipe *r, const struct jv *o)
{
	struct jv *cmds = jv_get(o, "commands");

	if (cmds == NULL || jv_type(cmds) != JV_OBJECT)
		return bad(c, "commands", "must be an object");
	if (get_str(c, cmds, "dev", false, &r->dev) < 0 ||
	    get_str(c, cmds, "build", false, &r->build) < 0 ||
	    load_workers(c, r, cmds) < 0)
		return -1;
	if (r->dev == NULL && r->nworkers == 0)
		return bad(c, "commands", "has neither dev nor workers");
	if ((r->dev && check_command(c, "commands.dev", r->dev) < 0) ||
	    (r->build && check_command(c, "commands.build", r->build) < 0))
		return -1;
	if (r->dev != NULL && r->port == 0)
		return bad(c, "port", "a web recipe needs a port");
	return 0;
}

/* A relative directory inside the app, or "." for its root. */
static bool
valid_output(const char *s)
{
	if (strcmp(s, ".") == 0)
		return true;
	if (s[0] == '/' || strstr(s, "..") != NULL || strstr(s, "//") != NULL)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return s[-1] != '/';
}

static int
load_publish(struct load_ctx *c, struct recipe *r, const struct jv *o)
{
	struct jv *p = jv_get(o, "publish");

	r->has_publish = false;
	if (p == NULL)
		return 0;
	if (jv_type(p) != JV_OBJECT)
		return bad(c, "publish", "must be an object");
	if (get_str(c, p, "build", false, &r->pub_build) < 0 ||
	    get_str(c, p, "output", false, &r->pub_output) < 0 ||
	    get_str(c, p, "command", false, &r->pub_command) < 0)
		return -1;
	if ((r->pub_output == NULL) == (r->pub_command == NULL))
		return bad(c, "publish", "needs output or command (one)");
	if ((r->pub_build &&
	     check_command(c, "publish.build", r->pub_build) < 0) ||
	    (r->pub_command &&
	     check_command(c, "publish.command", r->pub_command) < 0))
		return -1;
	if (r->pub_output && !valid_output(r->pub_output))
		return bad(c, "publish.output", "must be a relative directory");
	r->pub_spa = jv_is_true(jv_get(p, "spa"));
	if (r->pub_spa && r->pub_output == NULL)
		return bad(c, "publish.spa", "is for a static output");
	r->pub_port = r->pub_command ? r->port : 0;
	if (jv_get(p, "port") != NULL &&
	    get_int(c, p, "port", 1, 65535, &r->pub_port) < 0)
		return -1;
	r->has_publish = true;
	return 0;
}

static bool
valid_id(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > RECIPE_ID_LEN)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '-'))
			return false;
	return true;
}

static int
load_verified(struct load_ctx *c, struct recipe *r, const struct jv *o)
{
	struct jv *v = jv_get(o, "verified");

	r->verified_starter = r->verified_version = NULL;
	if (v == NULL)
		return 0;
	if (jv_type(v) != JV_OBJECT)
		return bad(c, "verified", "must be an object");
	return get_str(c, v, "starter", true, &r->verified_starter) < 0 ||
	               get_str(c, v, "version", true, &r->verified_version) < 0
	           ? -1
	           : 0;
}

static int
load_recipe(struct load_ctx *c, struct recipe *r, const struct jv *o)
{
	static const char langs[] = " node python static other ";
	char word[32];

	memset(r, 0, sizeof(*r));
	r->json = o;
	if (jv_type(o) != JV_OBJECT)
		return bad(c, "recipe", "must be an object");
	if (get_str(c, o, "id", true, &r->id) < 0)
		return -1;
	if (!valid_id(r->id))
		return bad(c, "id", "lower-case letters, digits and -, <= 32");
	c->where = r->id;
	if (get_str(c, o, "display_name", true, &r->display_name) < 0 ||
	    get_str(c, o, "language", true, &r->language) < 0 ||
	    get_str(c, o, "preset", false, &r->preset) < 0 ||
	    get_str(c, o, "health_path", true, &r->health_path) < 0 ||
	    get_int(c, o, "priority", 0, 100, &r->priority) < 0 ||
	    get_int(c, o, "port", 0, 65535, &r->port) < 0)
		return -1;
	snprintf(word, sizeof(word), " %s ", r->language);
	if (strstr(langs, word) == NULL)
		return bad(c, "language",
		           "must be node, python, static or other");
	if (r->health_path[0] != '/')
		return bad(c, "health_path", "must start with /");
	r->fallback = jv_is_true(jv_get(o, "fallback"));
	r->restart_after_task = jv_is_true(jv_get(o, "restart_after_task"));
	if (load_detect(c, r, o) < 0 || load_commands(c, r, o) < 0 ||
	    load_publish(c, r, o) < 0 ||
	    get_list(c, o, "notes", &r->notes) < 0 ||
	    get_list(c, o, "tags", &r->tags) < 0 || load_verified(c, r, o) < 0)
		return -1;
	return 0;
}

static int
load_pms(struct load_ctx *c, struct recipe_table *t)
{
	struct jv *a = jv_get(t->root, "package_managers");

	c->where = "package_managers";
	if (a == NULL || jv_type(a) != JV_ARRAY || jv_len(a) == 0 ||
	    jv_len(a) > RECIPE_MAX_PMS)
		return bad(c, "package_managers", "must be a list of 1 to 12");
	for (size_t i = 0; i < jv_len(a); i++) {
		struct recipe_pm *p = &t->pm[t->npm++];
		struct jv *o = jv_at(a, i);

		if (get_str(c, o, "id", true, &p->id) < 0 ||
		    get_str(c, o, "language", true, &p->language) < 0 ||
		    get_str(c, o, "install", true, &p->install) < 0 ||
		    get_str(c, o, "run", true, &p->run) < 0 ||
		    get_str(c, o, "exec", true, &p->exec) < 0 ||
		    get_str(c, o, "warning", false, &p->warning) < 0 ||
		    get_list(c, o, "lockfiles", &p->lockfiles) < 0 ||
		    check_command(c, "install", p->install) < 0)
			return -1;
		if (strlen(p->id) >= sizeof(((struct detection *)0)->pm))
			return bad(c, "id", "too long");
		if (strstr(p->install, "{install}") != NULL)
			return bad(c, "install", "may not name {install}");
	}
	return 0;
}

static int
load_needs(struct load_ctx *c, struct recipe_table *t)
{
	struct jv *a = jv_get(t->root, "node_needs");

	c->where = "node_needs";
	if (a == NULL)
		return 0;
	if (jv_type(a) != JV_ARRAY || jv_len(a) > RECIPE_MAX_NEEDS)
		return bad(c, "node_needs", "must be a list of at most 16");
	for (size_t i = 0; i < jv_len(a); i++) {
		struct recipe_need *n = &t->need[t->nneed++];
		struct jv *o = jv_at(a, i);

		if (get_str(c, o, "dep", true, &n->dep) < 0 ||
		    get_int(c, o, "major", 0, 1000, &n->major) < 0 ||
		    get_int(c, o, "node", 0, 1000, &n->node) < 0)
			return -1;
	}
	return 0;
}

static int
load_recipes(struct load_ctx *c, struct recipe_table *t)
{
	struct jv *a = jv_get(t->root, "recipes");

	c->where = "recipes";
	if (a == NULL || jv_type(a) != JV_ARRAY || jv_len(a) == 0 ||
	    jv_len(a) > 1000)
		return bad(c, "recipes", "must be a list of 1 to 1000");
	t->r = calloc(jv_len(a), sizeof(*t->r));
	if (t->r == NULL)
		return bad(c, "recipes", "out of memory");
	for (size_t i = 0; i < jv_len(a); i++) {
		c->where = "recipes";
		if (load_recipe(c, &t->r[i], jv_at(a, i)) < 0)
			return -1;
		for (size_t j = 0; j < i; j++)
			if (strcmp(t->r[j].id, t->r[i].id) == 0)
				return bad(c, "id", "is used twice");
		t->n = i + 1;
	}
	return 0;
}

static void
table_free(struct recipe_table *t)
{
	free(t->r);
	jv_free(t->root);
	memset(t, 0, sizeof(*t));
}

int
recipe_load_text(const char *text, size_t len, char *err, size_t errlen)
{
	struct recipe_table t = {0};
	struct load_ctx c = {.err = err, .errlen = errlen, .where = "table"};
	char jerr[160];

	t.root = jv_parse(text, len, TABLE_DEPTH, jerr, sizeof(jerr));
	if (t.root == NULL)
		return bad(&c, "json", jerr);
	if (jv_type(t.root) != JV_OBJECT)
		bad(&c, "table", "must be an object");
	else if (load_pms(&c, &t) == 0 && load_needs(&c, &t) == 0 &&
	         load_recipes(&c, &t) == 0) {
		table_free(&table);
		table = t;
		loaded = true;
		return 0;
	}
	table_free(&t);
	return -1;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_err[256];
static int load_rc;

static void
load_once(void)
{
	load_rc = recipe_load_text(recipe_json, strlen(recipe_json), load_err,
	                           sizeof(load_err));
}

int
recipe_load(char *err, size_t errlen)
{
	pthread_once(&once, load_once);
	if (load_rc < 0)
		snprintf(err, errlen, "%s", load_err);
	return load_rc;
}

const struct recipe_table *
recipe_table(void)
{
	if (!loaded) {
		char err[8];

		if (recipe_load(err, sizeof(err)) < 0)
			return NULL;
	}
	return &table;
}

const struct recipe_pm *
recipe_pm_find(const char *id)
{
	const struct recipe_table *t = recipe_table();

	for (int i = 0; t && i < t->npm; i++)
		if (strcmp(t->pm[i].id, id) == 0)
			return &t->pm[i];
	return NULL;
}

const struct recipe *
recipe_find(const char *id)
{
	const struct recipe_table *t = recipe_table();

	for (size_t i = 0; t && i < t->n; i++)
		if (strcmp(t->r[i].id, id) == 0)
			return &t->r[i];
	return NULL;
}

size_t
recipe_count(void)
{
	const struct recipe_table *t = recipe_table();

	return t ? t->n : 0;
}

const struct recipe *
recipe_at(size_t i)
{
	const struct recipe_table *t = recipe_table();

	return t && i < t->n ? &t->r[i] : NULL;
}

const char *
recipe_id(const struct recipe *r)
{
	return r->id;
}

const char *
recipe_display_name(const struct recipe *r)
{
	return r->display_name;
}
