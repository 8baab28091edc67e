/*
 * The credential on the wire: what the proxy adds to an agent's request
 * for an upstream, from the agent's sealed API key or its subscription
 * login.  Values are opened for one request and wiped after it
 * (cred_wipe).  Any thread.
 */
#ifndef PROXY_WIRE_H
#define PROXY_WIRE_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox/core.h"
#include "proxy/providers.h"

#define CRED_VALUE_MAX  8192
#define CRED_BETA_MAX   2048 /* the anthropic-beta line we send */
#define CRED_OAUTH_BETA "oauth-2025-04-20"

struct cred {
	const char *base_url; /* where the request goes */
	char header[32];      /* "x-api-key", "Authorization", or "" (none) */
	char value[CRED_VALUE_MAX];
	char beta[CRED_BETA_MAX]; /* "anthropic-beta: …" or "" */
	const char *extra[2];     /* whole header lines to add */
	size_t nextra;
	bool sets_beta; /* the request's own anthropic-beta must go */
};

/*
 * The credential for an agent's request to an upstream from a sandbox
 * of tenant (the sandbox's owner): the tenant's own, else the
 * instance's; -1 with a message when neither is connected (an agent with a free
 * upstream, OpenCode's Zen, may still use it keyless).  beta is the
 * request's anthropic-beta flags (comma-joined; NULL when none): a
 * subscription login sends them on with CRED_OAUTH_BETA added, in
 * out->beta, and sets out->sets_beta.
 */
int cred_for(struct core *c, const char *tenant, const char *agent,
             const struct provider *up, const char *beta, struct cred *out,
             char *msg, size_t len);
void cred_wipe(struct cred *cr);

/*
 * "anthropic-beta: <flags>,oauth-2025-04-20": the incoming flags in
 * their order, trimmed, empty and repeated ones dropped, the OAuth flag
 * added unless present.  -1 when it does not fit.
 */
int cred_beta_merge(const char *incoming, char *out, size_t len);

#endif
