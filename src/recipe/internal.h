/*
 * What the files of src/recipe/ share: the parsed table, the facts read
 * from one directory of an app, and the pure matching over them.  Not
 * for other modules (they use recipe.h); the unit test and the fuzz
 * target include it to reach the pure parts.
 */
#ifndef RECIPE_INTERNAL_H
#define RECIPE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"
#include "lib/jv.h"
#include "recipe/recipe.h"

#define RECIPE_MAX_LIST    24 /* entries of one list of a recipe */
#define RECIPE_MAX_WORKERS 4
#define RECIPE_MAX_PMS     12
#define RECIPE_MAX_NEEDS   16
#define RECIPE_MAX_DIRS    32 /* sub-directories a monorepo scan reads */
#define RECIPE_MAX_DEPTH   2  /* their depth below the app's root */

struct strlist {
	const char *v[RECIPE_MAX_LIST];
	int n;
};

struct recipe_worker {
	const char *name;
	const char *command;
};

/* Strings are borrowed from the table's parsed JSON, which lives as long
 * as the table. */
struct recipe {
	const char *id, *display_name, *language, *preset;
	int priority, port;
	bool fallback; /* a generic recipe: low confidence whatever matched */
	bool restart_after_task;
	const char *health_path;
	struct strlist deps, any_deps, config_files, files, exclude_deps,
	    requirements, scripts;
	const char *dev, *build;
	struct recipe_worker workers[RECIPE_MAX_WORKERS];
	int nworkers;
	/* publish: a static output, or a server command (docs/recipes.md) */
	bool has_publish, pub_spa;
	const char *pub_build, *pub_output, *pub_command;
	int pub_port;
	struct strlist notes, tags;
	const char *verified_starter, *verified_version;
	const struct jv *json;
};

struct recipe_pm {
	const char *id, *language, *install, *run, *exec, *warning;
	struct strlist lockfiles;
};

struct recipe_need {
	const char *dep;
	int major, node;
};

struct recipe_table {
	struct jv *root;
	struct recipe *r;
	size_t n;
	struct recipe_pm pm[RECIPE_MAX_PMS];
	int npm;
	struct recipe_need need[RECIPE_MAX_NEEDS];
	int nneed;
};

/* The loaded table (recipe_load first); NULL before. */
const struct recipe_table *recipe_table(void);
const struct recipe_pm *recipe_pm_find(const char *id);
/* The compiled-in recipes.json (data.c), NUL-terminated. */
extern const char recipe_json[];

/*
 * What one directory of an app says, gathered by detect.c (or given as
 * text by the tests): the names in it, package.json parsed, the Python
 * package names its requirements and pyproject.toml declare.  Lists are
 * "\n"-framed ("\na\nb\n") so a lookup is one strstr.
 */
struct facts {
	struct buf files; /* regular files, and config paths found */
	struct buf dirs;  /* sub-directories */
	struct jv *pkg;   /* package.json, NULL when absent or bad */
	bool pkg_present, pkg_bad, has_pyproject;
	struct buf depnames; /* package.json dependencies ∪ devDependencies */
	struct buf pynames;  /* normalized Python package names */
	char reqfile[128];   /* the requirements file found, "" for none */
	char warn[RECIPE_MAX_NOTES][RECIPE_NOTE_LEN];
	int nwarn;
};

void facts_init(struct facts *f);
void facts_release(struct facts *f);
bool facts_has(const struct buf *list, const char *name);
void facts_add(struct buf *list, const char *name);
void facts_warn(struct facts *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* package.json's text; a text that is not JSON is a warning. */
void facts_package_json(struct facts *f, const char *text, size_t len);
/* A requirements*.txt, and pyproject.toml's dependencies. */
void facts_requirements(struct facts *f, const char *text, size_t len);
void facts_pyproject(struct facts *f, const char *text, size_t len);
/* A package name lower-cased, "_" and "." as "-", extras and versions
 * cut: what requirements compare. */
void facts_pyname(const char *in, size_t len, char *out, size_t outlen);
bool facts_workspace_root(const struct facts *f);
/* The major version a dependency's range names, or -1. */
int facts_dep_major(const struct facts *f, const char *dep);

/* One recipe against one directory's facts: its confidence (0: no
 * match) and, when reasons is not NULL, the evidence as sentences. */
int match_recipe(const struct recipe *r, const struct facts *f,
                 char (*reasons)[RECIPE_NOTE_LEN], int *nreasons);
/*
 * Every recipe against f, best first (confidence band, then priority):
 * at most max candidates into ids/conf.  The count.
 */
int match_dir(const struct facts *f, const struct recipe **best, int *conf,
              int max);
/* The package manager of a directory (facts and language). */
const char *match_pm(const struct facts *f, const char *language);
/*
 * Fills d (recipe, confidence, reasons, warnings, pm, inputs, the
 * placeholders) for r in dir, from f (the directory's facts) and root
 * (the workspace root's when the install runs there, else NULL).
 */
void match_fill(struct detection *d, const struct recipe *r, int conf,
                const char *dir, const struct facts *f,
                const struct facts *root, const char *root_dir);
void detection_warn(struct detection *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void detection_reason(struct detection *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
