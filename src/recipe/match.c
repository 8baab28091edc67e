/*
 * Matching, pure: a recipe against what one directory says (struct
 * facts), the ranking of every recipe there, the package manager, and
 * the detection filled for the choice (reasons, warnings, install
 * inputs, what the commands' placeholders become).
 *
 * A recipe matches when every one of its `files` exists, none of its
 * `exclude_deps` is a dependency, each of its `scripts` lists (any one
 * present) holds, and then its dependency signals (`deps` all,
 * `any_deps` one, `requirements` one) or one of its `config_files`
 * hold (a Node recipe's config file alone only when there is no readable
 * package.json).  Dependencies and a config file: 95; dependencies: 85;
 * a config file only: 60; files or scripts only: 40; a generic recipe
 * (fallback) 30 whatever it matched.  Ranking: the confidence's band (high 80+,
 * medium 50+, low) first, then the recipe's priority (the more specific
 * framework above the generic one), then the confidence.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "recipe/internal.h"

#define CONF_BOTH     95
#define CONF_DEPS     85
#define CONF_CONFIG   60
#define CONF_FILES    40
#define CONF_FALLBACK 30

struct why {
	char (*v)[RECIPE_NOTE_LEN];
	int *n;
};

static void why_add(struct why *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
why_add(struct why *w, const char *fmt, ...)
{
	va_list ap;

	if (w->v == NULL || *w->n == RECIPE_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(w->v[(*w->n)++], RECIPE_NOTE_LEN, fmt, ap);
	va_end(ap);
}

/* "*.ipynb" matches a name ending so; anything else is a path. */
static const char *
file_found(const struct facts *f, const char *pat)
{
	static __thread char hit[RECIPE_NOTE_LEN];
	const char *p;

	if (pat[0] != '*')
		return facts_has(&f->files, pat) ? pat : NULL;
	for (p = f->files.data; p && (p = strstr(p, pat + 1)) != NULL; p++) {
		const char *s = p, *e = p + strlen(pat + 1);

		if (*e != '\n')
			continue;
		while (s > f->files.data && s[-1] != '\n')
			s--;
		snprintf(hit, sizeof(hit), "%.*s", (int)(e - s), s);
		return hit;
	}
	return NULL;
}

static bool
has_script(const struct facts *f, const char *name)
{
	return f->pkg != NULL &&
	       jv_str(jv_get(jv_get(f->pkg, "scripts"), name)) != NULL;
}

static bool
python(const struct recipe *r)
{
	return strcmp(r->language, "python") == 0;
}

/* The dependency signals: -1 none declared, 0 not there, 1 there. */
static int
deps_hold(const struct recipe *r, const struct facts *f, struct why *w)
{
	int i, found = -1;

	if (r->deps.n + r->any_deps.n + r->requirements.n == 0)
		return -1;
	for (i = 0; i < r->deps.n; i++)
		if (!facts_has(&f->depnames, r->deps.v[i]))
			return 0;
	for (i = 0; i < r->any_deps.n; i++)
		if (facts_has(&f->depnames, r->any_deps.v[i]))
			break;
	if (r->any_deps.n && i == r->any_deps.n)
		return 0;
	for (found = 0; found < r->requirements.n; found++)
		if (facts_has(&f->pynames, r->requirements.v[found]))
			break;
	if (r->requirements.n && found == r->requirements.n)
		return 0;
	if (r->deps.n == 1)
		why_add(w, "package.json depends on \"%s\"", r->deps.v[0]);
	else if (r->deps.n > 1)
		why_add(w, "package.json depends on \"%s\" and \"%s\"",
		        r->deps.v[0], r->deps.v[1]);
	if (r->any_deps.n)
		why_add(w, "package.json depends on \"%s\"", r->any_deps.v[i]);
	if (r->requirements.n)
		why_add(w, "%s names \"%s\"",
		        f->reqfile[0] ? f->reqfile : "pyproject.toml",
		        r->requirements.v[found]);
	return 1;
}

/* files all there, no exclusion, a script when scripts are asked. */
static bool
gates_hold(const struct recipe *r, const struct facts *f, struct why *w)
{
	const struct buf *names = python(r) ? &f->pynames : &f->depnames;
	int i;

	for (i = 0; i < r->files.n; i++)
		if (!facts_has(&f->files, r->files.v[i]))
			return false;
	for (i = 0; i < r->exclude_deps.n; i++)
		if (facts_has(names, r->exclude_deps.v[i]))
			return false;
	for (i = 0; i < r->scripts.n; i++)
		if (has_script(f, r->scripts.v[i]))
			break;
	if (r->scripts.n && i == r->scripts.n)
		return false;
	for (int j = 0; j < r->files.n; j++)
		why_add(w, "%s exists", r->files.v[j]);
	if (r->scripts.n)
		why_add(w, "package.json has a \"%s\" script", r->scripts.v[i]);
	return true;
}

int
match_recipe(const struct recipe *r, const struct facts *f,
             char (*reasons)[RECIPE_NOTE_LEN], int *nreasons)
{
	struct why w = {reasons, nreasons}, none = {NULL, NULL};
	const char *cfg = NULL;
	int deps, conf;

	if (!gates_hold(r, f, &none))
		return 0;
	deps = deps_hold(r, f, &w);
	for (int i = 0; i < r->config_files.n && cfg == NULL; i++)
		cfg = file_found(f, r->config_files.v[i]);
	/* A Node config file says little when package.json, read, lacks
	 * the framework: it counts alone only without one. */
	if (deps == 0 && cfg != NULL && !python(r) && f->pkg != NULL)
		cfg = NULL;
	if (deps != 1 && cfg == NULL && (deps == 0 || r->config_files.n))
		return 0;
	if (cfg != NULL)
		why_add(&w, "%s exists", cfg);
	gates_hold(r, f, &w);
	if (deps == 1)
		conf = cfg ? CONF_BOTH : CONF_DEPS;
	else
		conf = cfg ? CONF_CONFIG : CONF_FILES;
	return r->fallback ? CONF_FALLBACK : conf;
}

static int
band(int conf)
{
	return conf >= 80 ? 2 : conf >= 50 ? 1 : 0;
}

static bool
ranks_above(const struct recipe *a, int ca, const struct recipe *b, int cb)
{
	if (band(ca) != band(cb))
		return band(ca) > band(cb);
	if (a->priority != b->priority)
		return a->priority > b->priority;
	return ca > cb;
}

int
match_dir(const struct facts *f, const struct recipe **best, int *conf, int max)
{
	const struct recipe_table *t = recipe_table();
	int n = 0;

	for (size_t i = 0; t != NULL && i < t->n; i++) {
		const struct recipe *r = &t->r[i];
		int c = match_recipe(r, f, NULL, NULL), j;

		if (c == 0)
			continue;
		/* insertion into the sorted prefix; the last falls off */
		for (j = n;
		     j > 0 && ranks_above(r, c, best[j - 1], conf[j - 1]); j--)
			;
		if (j >= max)
			continue;
		for (int k = n < max ? n : max - 1; k > j; k--) {
			best[k] = best[k - 1];
			conf[k] = conf[k - 1];
		}
		best[j] = r;
		conf[j] = c;
		if (n < max)
			n++;
	}
	return n;
}

static const struct recipe_pm *
pm_of_lockfile(const struct facts *f, const char *language)
{
	const struct recipe_table *t = recipe_table();

	for (int i = 0; t != NULL && i < t->npm; i++) {
		const struct recipe_pm *p = &t->pm[i];

		if (strcmp(p->language, language) != 0)
			continue;
		for (int j = 0; j < p->lockfiles.n; j++)
			if (facts_has(&f->files, p->lockfiles.v[j]))
				return p;
	}
	return NULL;
}

const char *
match_pm(const struct facts *f, const char *language)
{
	const struct recipe_pm *p;
	const char *field;

	if (strcmp(language, "node") == 0) {
		field =
		    f->pkg ? jv_str(jv_get(f->pkg, "packageManager")) : NULL;
		if (field != NULL) {
			char id[16];

			snprintf(id, sizeof(id), "%.*s",
			         (int)strcspn(field, "@"), field);
			p = recipe_pm_find(id);
			if (p != NULL && strcmp(p->language, "node") == 0)
				return p->id;
		}
		p = pm_of_lockfile(f, "node");
		return p ? p->id : "npm";
	}
	if (strcmp(language, "python") == 0) {
		p = pm_of_lockfile(f, "python");
		if (p != NULL)
			return p->id;
		return f->reqfile[0] || f->has_pyproject ? "pip" : "";
	}
	return "";
}
