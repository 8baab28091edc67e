/*
 * git: the app repository of a workspace, read and committed with
 * libgit2 in the control plane.  The repository is written by code in the
 * sandbox, so it is opened as hostile input (see git.c).  Every function
 * may be called from any thread; operations on one key (the app id) are
 * serialized.  Functions return 0 with *out set (the JSON the API sends),
 * GITWS_NOT_REPO when workspace/app has no .git directory, or -1 with e
 * filled.
 */
#ifndef GIT_GIT_H
#define GIT_GIT_H

#include "lib/err.h"
#include "lib/jv.h"

#define GITWS_NOT_REPO 1

#define GITWS_MAX_STATUS     200000       /* entries of a status answer */
#define GITWS_MAX_DIFF       (512u << 10) /* bytes of a diff answer */
#define GITWS_MAX_DIFF_FILES 10000        /* files listed by diff, commit */
#define GITWS_MAX_BLOB       (8u << 20)   /* larger files diff as binary */
#define GITWS_MAX_MESSAGE    4096         /* bytes of a commit message */
#define GITWS_MAX_CHOWN      500000       /* .git entries given back */

/*
 * ws is the workspace directory (<data>/workspaces/<sandbox id>); the
 * repository is ws/workspace/app.
 */
/* {available:true, branch, head_sha, clean, files[], truncated} */
int gitws_status(const char *key, const char *ws, struct jv **out,
                 struct err *e);
/* {diff, files[{path, additions, deletions, binary}], truncated} */
int gitws_diff(const char *key, const char *ws, struct jv **out, struct err *e);
/*
 * Stages everything (respecting .gitignore) and commits on the current
 * branch: {committed:true, sha, branch, files_committed[]} or
 * {committed:false, reason:"no_changes"}.  The message must be checked by
 * the caller (1..GITWS_MAX_MESSAGE bytes, no NUL).
 */
int gitws_commit(const char *key, const char *ws, const char *message,
                 struct jv **out, struct err *e);

#endif
