/*
 * The control plane's side of an app's remote: its credential opened
 * for one call, and the import that fills a new sandbox's workspace.
 */
#ifndef CORE_GITOPS_H
#define CORE_GITOPS_H

#include "core/core.h"
#include "vault/vault.h"

/*
 * The app's git credential and its opened token (release the token with
 * vault_secret_free): 0, STORE_NOT_FOUND when it was deleted, or -1.
 * An app without a credential gets 0 with cred->host "" and no token.
 */
int gitops_credential(struct core *c, const struct app *a,
                      struct git_credential *cred, struct vault_secret *tok);

/*
 * Clones the app's repository into the sandbox's (empty) workspace/app,
 * then records last_import_at and, when the app named no branch, the
 * branch it got.  0, or -1 with e filled: 502/504 git_import_failed
 * with the reason in the message for what the remote did, 400 for a
 * blocked host.
 */
int gitops_import(struct core *c, const struct app *a, const char *sandbox_id,
                  struct err *e);

#endif
