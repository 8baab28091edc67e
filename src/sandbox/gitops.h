/*
 * The control plane's side of an app's remote: its credential opened
 * for one call, and the import that fills a new sandbox's workspace.
 */
#ifndef SANDBOX_GITOPS_H
#define SANDBOX_GITOPS_H

#include "sandbox/core.h"
#include "git/git.h"
#include "vault/vault.h"

/*
 * SANDBOXD_GIT_ALLOW_HTTP=1, a knob for tests only: http:// repository
 * URLs are accepted, and loopback hosts (the tests' git servers) are not
 * blocked.
 */
bool gitops_test_http(void);

/*
 * Where and how a push or an import of app a goes: its URL, its git
 * credential with the token opened into tok (release it with
 * vault_secret_free), and the daemon's settings; r points into a, cred
 * and tok.  0, STORE_NOT_FOUND when the credential was deleted, or -1.
 */
int gitops_remote(struct core *c, const struct app *a, struct gitws_remote *r,
                  struct git_credential *cred, struct vault_secret *tok);

/*
 * Clones the app's repository into the sandbox's (empty) workspace/app,
 * then records last_import_at and, when the app named no branch, the
 * branch it got; then recipeops_import (a detected sandbox.yaml when
 * the repository has none).  0, or -1 with e
 * filled: 502/504 git_import_failed with the reason in the message for what the
 * remote did, 400 for a blocked host.
 */
int gitops_import(struct core *c, const struct app *a, const char *sandbox_id,
                  struct err *e);

#endif
