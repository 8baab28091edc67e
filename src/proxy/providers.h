/*
 * Model providers as the credential proxy sees them (pure functions):
 * which upstream a proxy path names, how its credential goes on the
 * wire, and which provider errors are permanent.
 *
 * Proxy paths are /<agent>/<upstream>/<rest>: the agent whose credential
 * pays, the upstream it goes to, and the path under that upstream's base
 * URL.  An agent reaches only its own upstreams (agents.c), and an
 * upstream only its inference endpoints: a key is never sent where it
 * was not meant to go, nor used for what an agent has no need of (files,
 * batches, organisation and admin endpoints).
 */
#ifndef PROXY_PROVIDERS_H
#define PROXY_PROVIDERS_H

#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"

enum provider_auth {
	PROVIDER_AUTH_X_API_KEY, /* x-api-key: <key> (Anthropic) */
	PROVIDER_AUTH_BEARER,    /* Authorization: Bearer <key> */
};

struct provider {
	const char *name; /* anthropic openai zen compat */
	const char *base_url;
	const char *setting; /* the base URL's: SANDBOXD_ANTHROPIC_BASE_URL */
	enum provider_auth auth;
};

#define PROVIDER_PATH_MAX 2048

struct proxy_path {
	char agent[16];
	struct provider up;
	char rest[PROVIDER_PATH_MAX]; /* starts with '/' */
};

/*
 * Splits a proxy path and checks it against the allow-list.  0, or the
 * HTTP status of the refusal with a message: 404 for fewer than two
 * segments, an unknown agent or upstream, or an upstream the operator
 * did not configure; 403 for an upstream the agent may not use, or a
 * method and path that is not one of the upstream's inference endpoints
 * (matched exactly, so no "..", "%2e" or "//" trick gets through).
 */
int provider_path(const struct config *cfg, const char *method,
                  const char *path, struct proxy_path *out, char *msg,
                  size_t len);

/*
 * Whether a provider's response header line ("Name: value", n bytes, no
 * CRLF) goes back to the agent: what a CLI needs (the body's type and
 * encoding, when to retry, the request id, the rate-limit counters);
 * nothing else, so cookies and the provider's organisation, project and
 * account headers stay outside the sandbox.  The framing headers are the
 * proxy's own.
 */
bool provider_header_passed(const char *line, size_t n);

/*
 * A provider's answer with status >= 400: when it is permanent (the key
 * is rejected, no credit, quota used up), fills msg with what the task
 * should say ("<upstream>: <reason> — <provider's message>") and returns
 * true: the proxy then answers 400, which no agent retries, so the task
 * ends at once instead of retrying for minutes.  Other errors pass.
 */
bool provider_permanent_error(const char *upstream, long status,
                              const char *body, size_t len, char *msg,
                              size_t msglen);

#endif
