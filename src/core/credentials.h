/*
 * Credentials for the proxy and the tasks: each sandbox's proxy token,
 * and the real credential an agent's request gets on the wire.  Keys are
 * opened from the store's sealed rows only for the moment they are
 * needed and wiped right after.
 */
#ifndef CORE_CREDENTIALS_H
#define CORE_CREDENTIALS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/core.h"
#include "core/providers.h"

#define CRED_VALUE_MAX 8192

struct cred {
	const char *base_url; /* where the request goes */
	char header[32];      /* "x-api-key", "Authorization", or "" (none) */
	char value[CRED_VALUE_MAX];
	const char *extra[2]; /* whole header lines to add */
	size_t nextra;
};

/*
 * Makes the sandbox's proxy token: a new random token whose hash goes on
 * the sandbox row and whose value is sealed in the store (the task code
 * hands it to the agent).  Called at create; a new token replaces the
 * old one.
 */
int cred_new_proxy_token(struct core *c, const char *sandbox_id);
/* The sandbox's proxy token into out (the caller wipes it); -1 if none. */
int cred_proxy_token(struct core *c, const char *sandbox_id, char *out,
                     size_t len);
/* Forgets the token (sandbox delete). */
void cred_drop_proxy_token(struct core *c, const char *sandbox_id);
/*
 * The sandbox a proxy token belongs to: 0 when it exists and runs, -1
 * otherwise (missing, wrong, deleted or stopped sandbox).
 */
int cred_sandbox_for_token(struct core *c, const char *token,
                           struct sandbox *sb);
/*
 * The credential for an agent's request to an upstream; -1 with a
 * message when the agent is not connected (OpenCode without a key may
 * still use the free models of OpenCode Zen, keyless).
 */
int cred_for(struct core *c, const char *agent, const struct provider *up,
             struct cred *out, char *msg, size_t len);
void cred_wipe(struct cred *cr);

#endif
