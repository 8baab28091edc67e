/*
 * The detection filled for a chosen recipe in a directory (pure, over
 * struct facts): the evidence, the warnings (what was odd in the files,
 * the package manager's, a missing lockfile or script, a Node version
 * the image lacks), the package manager and the install's inputs, and
 * what the commands' placeholders become.  Every name that reaches a
 * command comes from the app's files, so it is taken only when it is
 * made of safe characters (letters, digits, "._-/", no "..").
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "recipe/internal.h"

#define IMAGE_NODE 18

static void
note_add(char (*v)[RECIPE_NOTE_LEN], int *n, const char *fmt, va_list ap)
{
	char line[RECIPE_NOTE_LEN];

	vsnprintf(line, sizeof(line), fmt, ap);
	for (int i = 0; i < *n; i++)
		if (strcmp(v[i], line) == 0)
			return;
	if (*n < RECIPE_MAX_NOTES)
		memcpy(v[(*n)++], line, sizeof(line));
}

void
detection_warn(struct detection *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	note_add(d->warnings, &d->nwarnings, fmt, ap);
	va_end(ap);
}

void
detection_reason(struct detection *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	note_add(d->reasons, &d->nreasons, fmt, ap);
	va_end(ap);
}

static bool
safe_name(const char *s)
{
	if (s == NULL || s[0] == '\0' || s[0] == '/' || s[0] == '-' ||
	    strstr(s, "..") != NULL || strlen(s) > 120)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && strchr("._-/", *s) == NULL)
			return false;
	return true;
}

static void
add_input(struct detection *d, const char *dir, const char *name)
{
	char path[sizeof(d->inputs[0])];

	snprintf(path, sizeof(path), "%s%s%s", dir, dir[0] ? "/" : "", name);
	for (int i = 0; i < d->ninputs; i++)
		if (strcmp(d->inputs[i], path) == 0)
			return;
	if (d->ninputs < RECIPE_MAX_INPUTS)
		memcpy(d->inputs[d->ninputs++], path, sizeof(path));
}

static void
node_versions(struct detection *d, const struct facts *f)
{
	const struct recipe_table *t = recipe_table();
	const char *eng;

	eng = f->pkg ? jv_str(jv_get(jv_get(f->pkg, "engines"), "node")) : NULL;
	if (eng != NULL) {
		const char *s = eng;
		long v = 0;

		while (*s && strchr(">=^~v ", *s) != NULL)
			s++;
		for (; isdigit((unsigned char)*s) && v < 1000; s++)
			v = v * 10 + (*s - '0');
		if (v > IMAGE_NODE && strchr(eng, '<') == NULL &&
		    strchr(eng, '|') == NULL)
			detection_warn(d,
			               "package.json's engines.node asks for "
			               "\"%.40s\"; the image has Node %d",
			               eng, IMAGE_NODE);
	}
	for (int i = 0; t != NULL && i < t->nneed; i++) {
		int major = facts_dep_major(f, t->need[i].dep);

		if (major >= t->need[i].major)
			detection_warn(d,
			               "%s %d needs Node %d; the image has "
			               "Node %d",
			               t->need[i].dep, major, t->need[i].node,
			               IMAGE_NODE);
	}
}

static void
fill_node(struct detection *d, const struct recipe *r, const struct facts *f,
          const struct facts *inst)
{
	const struct recipe_pm *pm = recipe_pm_find(d->pm);
	const char *main_field = f->pkg ? jv_str(jv_get(f->pkg, "main")) : NULL;
	bool lock = false;

	if (inst->pkg_present)
		add_input(d, d->install_dir, "package.json");
	for (int i = 0; pm != NULL && i < pm->lockfiles.n; i++)
		if (facts_has(&inst->files, pm->lockfiles.v[i])) {
			add_input(d, d->install_dir, pm->lockfiles.v[i]);
			lock = true;
		}
	if (f->pkg_present)
		add_input(d, d->dir, "package.json");
	if (!lock && inst->pkg_present)
		detection_warn(d, "no lockfile: the install resolves fresh "
		                  "versions of the dependencies");
	if (f->pkg != NULL && jv_str(jv_get(jv_get(f->pkg, "scripts"), "dev")))
		snprintf(d->script, sizeof(d->script), "dev");
	else if (f->pkg != NULL &&
	         jv_str(jv_get(jv_get(f->pkg, "scripts"), "start")))
		snprintf(d->script, sizeof(d->script), "start");
	snprintf(d->entry, sizeof(d->entry), "%s",
	         safe_name(main_field) ? main_field : "index.js");
	if (d->script[0] == '\0' && r->dev && strstr(r->dev, "{script}"))
		detection_warn(d,
		               "package.json has no dev or start script: the "
		               "command runs node %s",
		               d->entry);
	node_versions(d, f);
}

static void
fill_python(struct detection *d, const struct recipe *r, const struct facts *f)
{
	static const char *const files[] = {"main.py",          "app.py",
	                                    "streamlit_app.py", "server.py",
	                                    "app/main.py",      "src/main.py"};
	const char *lock[] = {"uv.lock", "poetry.lock"};

	if (f->reqfile[0] && safe_name(f->reqfile)) {
		add_input(d, d->dir, f->reqfile);
		snprintf(d->pyreqs, sizeof(d->pyreqs), "-r %s", f->reqfile);
	} else if (f->has_pyproject) {
		add_input(d, d->dir, "pyproject.toml");
		snprintf(d->pyreqs, sizeof(d->pyreqs), ".");
	}
	for (size_t i = 0; i < 2; i++)
		if (facts_has(&f->files, lock[i]))
			add_input(d, d->dir, lock[i]);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (facts_has(&f->files, files[i]) && !d->pyfile[0])
			snprintf(d->pyfile, sizeof(d->pyfile), "%s", files[i]);
	if (!d->pyfile[0]) {
		snprintf(d->pyfile, sizeof(d->pyfile), "main.py");
		if (r->dev &&
		    (strstr(r->dev, "{pyfile}") || strstr(r->dev, "{module}")))
			detection_warn(d, "no main.py or app.py: the command "
			                  "runs main.py, which is not there");
	}
	snprintf(d->pymodule, sizeof(d->pymodule), "%.*s",
	         (int)(strlen(d->pyfile) - 3), d->pyfile);
	for (char *p = d->pymodule; *p; p++)
		if (*p == '/')
			*p = '.';
}

void
match_fill(struct detection *d, const struct recipe *r, int conf,
           const char *dir, const struct facts *f, const struct facts *root,
           const char *root_dir)
{
	const struct facts *inst = root ? root : f;
	const struct recipe_pm *pm;
	char reasons[RECIPE_MAX_NOTES][RECIPE_NOTE_LEN];
	int n = 0;

	snprintf(d->recipe, sizeof(d->recipe), "%s", r->id);
	snprintf(d->dir, sizeof(d->dir), "%s", dir);
	snprintf(d->install_dir, sizeof(d->install_dir), "%s",
	         root ? root_dir : dir);
	d->confidence = conf;
	match_recipe(r, f, reasons, &n);
	for (int i = 0; i < n; i++)
		detection_reason(d, "%s%s%s", dir, dir[0] ? "/" : "",
		                 reasons[i]);
	for (int i = 0; i < f->nwarn; i++)
		detection_warn(d, "%s%s%s", dir, dir[0] ? "/" : "", f->warn[i]);
	snprintf(d->pm, sizeof(d->pm), "%s", match_pm(inst, r->language));
	pm = d->pm[0] ? recipe_pm_find(d->pm) : NULL;
	if (pm != NULL && pm->warning != NULL)
		detection_warn(d, "%s", pm->warning);
	if (strcmp(r->language, "node") == 0)
		fill_node(d, r, f, inst);
	else if (strcmp(r->language, "python") == 0)
		fill_python(d, r, f);
}
