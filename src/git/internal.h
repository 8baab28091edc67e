/* Shared by the git module's own files only (they alone include git2.h). */
#ifndef GIT_INTERNAL_H
#define GIT_INTERNAL_H

#include <git2.h>

#include "lib/err.h"

/*
 * Under the app's lock and with the sandbox user's fsuid, opens ws's app
 * repository as hostile input and calls fn(repo, arg).  Returns fn's
 * result, GITWS_NOT_REPO, or -1 with e filled.
 */
int gitws_with_repo(const char *key, const char *ws,
                    int (*fn)(git_repository *, void *, struct err *),
                    void *arg, struct err *e);
/* Fills e with libgit2's last error; returns -1. */
int gitws_lib_err(struct err *e, const char *what);

#endif
