/*
 * Recipes: how to run an app made by a known framework, and the
 * detection that picks one for an app that has no sandbox.yaml.
 *
 * The recipes are data: src/recipe/recipes.json, compiled into the
 * binary, one object per framework (how to detect it, the install, dev,
 * build commands per package manager, the port, the health path, notes).
 * recipe_load() parses and checks the table once at start; a bad table
 * is a build error caught by the unit test, and a start error.
 *
 * Detection reads files only (package.json, lockfiles, requirements.txt,
 * pyproject.toml, config files, a workspace's sub-directories), through
 * wsfs beneath the app's directory descriptor: never follows a link,
 * never blocks on a FIFO, never reads more than RECIPE_READ_MAX of a
 * file.  It never runs the app's code.
 */
#ifndef RECIPE_RECIPE_H
#define RECIPE_RECIPE_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"
#include "lib/jv.h"

#define RECIPE_ID_LEN     32
#define RECIPE_DIR_LEN    200 /* an app's sub-directory in a monorepo */
#define RECIPE_NOTE_LEN   240
#define RECIPE_MAX_NOTES  8
#define RECIPE_MAX_CANDS  8
#define RECIPE_READ_MAX   (1u << 20) /* bytes of one file read */
#define RECIPE_MAX_INPUTS 8

struct recipe; /* one entry of the table; opaque */

struct detect_candidate {
	char recipe[RECIPE_ID_LEN + 1];
	char dir[RECIPE_DIR_LEN + 1]; /* "" for the app's root */
	int confidence;               /* 0-100 */
};

struct detection {
	/* The choice; recipe[0] == '\0' when nothing matched. */
	char recipe[RECIPE_ID_LEN + 1];
	char dir[RECIPE_DIR_LEN + 1]; /* the app's sub-directory, "" = root */
	char pm[16];    /* npm pnpm yarn bun pip uv poetry; "" for none */
	int confidence; /* 0-100: 80+ high, 50-79 medium, below low */
	char reasons[RECIPE_MAX_NOTES][RECIPE_NOTE_LEN];
	int nreasons;
	char warnings[RECIPE_MAX_NOTES][RECIPE_NOTE_LEN];
	int nwarnings;
	/* Every match, best first (the choice too, at [0] when there is one).
	 */
	struct detect_candidate cands[RECIPE_MAX_CANDS];
	int ncands;
	/* The files whose content decides the install (lockfiles and package
	 * manifests), relative to the app's root: install.inputs. */
	char inputs[RECIPE_MAX_INPUTS][RECIPE_DIR_LEN + 32];
	int ninputs;
	/* When nothing matched: one sentence naming what was looked for. */
	char looked_for[400];
	/* Where the install runs: the workspace's root for a monorepo app,
	 * else dir. */
	char install_dir[RECIPE_DIR_LEN + 1];
	/* What the commands' placeholders resolve to (docs/recipes.md). */
	char script[32];    /* {script}: "dev" or "start", "" for none */
	char entry[128];    /* {main}: package.json's main, or index.js */
	char pyfile[128];   /* {pyfile}: the app's Python file */
	char pymodule[128]; /* {module}: pyfile as a module name */
	char pyreqs[160];   /* {pyreqs}: "-r requirements.txt" or "." */
};

/* Parses the compiled-in table; 0, or -1 with a message naming the recipe
 * and field.  Idempotent, thread-safe after the first call returns. */
int recipe_load(char *err, size_t errlen);
/* Parses a table given as text (the unit test and the fuzz target). */
int recipe_load_text(const char *text, size_t len, char *err, size_t errlen);

const struct recipe *recipe_find(const char *id);
size_t recipe_count(void);
const struct recipe *recipe_at(size_t i);
const char *recipe_id(const struct recipe *r);
const char *recipe_display_name(const struct recipe *r);

/*
 * Detects the framework of the app whose directory is appfd (an O_PATH
 * or O_RDONLY directory descriptor).  0 with d filled (d->recipe may be
 * "": nothing matched, d->looked_for says what was looked for), -1 on an
 * error of the descriptor itself.  Anything odd in the app (a package.json
 * that is not JSON, a FIFO, a file too big, a link) is a warning in d, not
 * an error.
 */
int recipe_detect(int appfd, struct detection *d);

/*
 * Detection restricted to one recipe (the user's choice): d is filled as
 * recipe_detect's, with recipe forced to id (confidence as matched, a
 * warning when its signals are not there); dir chosen as recipe_detect
 * would for it.  0, or -1 when there is no such recipe.
 */
int recipe_detect_as(int appfd, const char *id, struct detection *d);

/*
 * The sandbox.yaml text for the detection's choice, on port: a comment
 * header saying sandboxd wrote it and why, then version, install
 * (command, inputs, timeout_seconds), web (or workers only), build.  It
 * passes manifest_parse.  0, or -1 with err when d->recipe is "".
 */
int recipe_manifest(const struct detection *d, int port, struct buf *out,
                    char *err, size_t errlen);
/* The first line of every sandbox.yaml sandboxd writes: a file that starts
 * with it may be rewritten by a new detection; any other is the user's. */
#define RECIPE_MANIFEST_MARK "# Written by sandboxd"

/*
 * The detection's recipe's publish object (docs/publish.md): its
 * commands rendered as recipe_manifest renders them (placeholders, and
 * "cd DIR && " for an app in a sub-directory), output under that
 * directory.  output non-empty: a static release; else a server one on
 * port (0: none, a worker).  0; 1 when the recipe says nothing about
 * publishing; -1 when there is no such recipe or a command is too long.
 */
#define RECIPE_PUBLISH_CMD 4000
struct recipe_publish {
	char build[RECIPE_PUBLISH_CMD + 1];
	char output[RECIPE_DIR_LEN + 64];
	bool spa;
	char command[RECIPE_PUBLISH_CMD + 1];
	int port;
	char health_path[128];
};
int recipe_publish(const struct detection *d, struct recipe_publish *out);

/* GET /v1/runtime/recipes: {"recipes":[{id, display_name, language,
 * preset?, detect{...}, package_managers[], port, health_path,
 * suggested_manifest, notes[], tags[], verified{starter, version}?}]}. */
struct jv *recipe_list_json(void);
/* The detection as JSON: {recipe, display_name, dir, package_manager,
 * confidence, confidence_label: high|medium|low, reasons[], warnings[],
 * candidates[{recipe, dir, confidence}], inputs[], looked_for?}. */
struct jv *detection_json(const struct detection *d);

#endif
