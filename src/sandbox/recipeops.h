/*
 * recipeops: the glue between a sandbox's app directory and the recipe
 * module (src/recipe/recipe.h).  After an import, an app without a
 * sandbox.yaml gets one written by detection and committed as its own
 * commit; the API re-runs detection or applies a chosen recipe; and the
 * runtime asks what to run for an app that has no sandbox.yaml at all.
 *
 * Every file is read and written through wsfs beneath the app's
 * directory (never following a link, bounded reads); nothing of the
 * app runs on the host.  Any thread.
 */
#ifndef SANDBOX_RECIPEOPS_H
#define SANDBOX_RECIPEOPS_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox/core.h"
#include "sandbox/manifest.h"
#include "recipe/recipe.h"
#include "lib/err.h"
#include "lib/jv.h"

/*
 * Right after a sandbox's clone: an app with a sandbox.yaml keeps it;
 * else the detected recipe's manifest is written (owned by the
 * workspace user) and committed as its own commit ("sandboxd: add
 * sandbox.yaml for <name> (detected)"), and the timeline gets
 * runtime.detected (or runtime.undetected with what was looked for).
 * Detection finding nothing, or a commit git refuses, is no error: the
 * sandbox's status says what is missing.  0, or -1 with e (500) when
 * the app directory cannot be opened.
 */
int recipeops_import(struct core *c, const struct app *a,
                     const char *sandbox_id, struct err *e);

/*
 * POST /v1/apps/{id}/runtime-inspect: detection again (recipe NULL) or
 * the recipe the user chose, and its manifest written and committed.
 * An existing sandbox.yaml that sandboxd did not write (its first line
 * is not RECIPE_MANIFEST_MARK) is the user's: 409 manifest_is_users
 * unless force.  400 for an unknown recipe.  0 with d filled, *written
 * (false when nothing was detected) and *commit (the commit's sha, ""
 * when git made none); or -1 with e.
 */
int recipeops_apply(struct core *c, const struct app *a, const char *sandbox_id,
                    const char *recipe, bool force, struct detection *d,
                    bool *written, char commit[41], struct err *e);

/*
 * GET /v1/apps/{id}/runtime-inspect: {existing_manifest{present,
 * written_by_sandboxd, valid, errors?, web_command?, web_port?,
 * health_path?, workers?}, detection, suggestions[], warnings[]}.  NULL
 * with e when the app directory cannot be opened.
 */
struct jv *recipeops_inspect(struct core *c, const char *sandbox_id,
                             struct err *e);

/*
 * The manifest of an app that has no sandbox.yaml (runtime.c): the
 * default (manifest_default) when the app has a package.json with a
 * "dev" script or an index.html; else the detected recipe's; else -1
 * with err "no sandbox.yaml, and no framework detected: <looked for>".
 */
int recipeops_fallback(int appfd, int port, struct manifest *m, char *err,
                       size_t errlen);

#endif
