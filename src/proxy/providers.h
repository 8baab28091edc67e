/*
 * Model providers as the credential proxy sees them (pure functions):
 * which upstream a proxy path names, how its credential goes on the
 * wire, and which provider errors are permanent.
 *
 * Proxy paths are /<agent>/<upstream>/<rest>: the agent whose credential
 * pays, the upstream it goes to, and the path under that upstream's base
 * URL.
 */
#ifndef PROXY_PROVIDERS_H
#define PROXY_PROVIDERS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/config.h"

enum provider_auth {
	PROVIDER_AUTH_X_API_KEY, /* x-api-key: <key> (Anthropic) */
	PROVIDER_AUTH_BEARER,    /* Authorization: Bearer <key> */
};

struct provider {
	const char *name; /* anthropic openai zen compat */
	const char *base_url;
	enum provider_auth auth;
};

#define PROVIDER_PATH_MAX 2048

struct proxy_path {
	char agent[16];
	struct provider up;
	char rest[PROVIDER_PATH_MAX]; /* starts with '/' */
};

/*
 * Splits a proxy path.  -1 with a message for the caller's 400/404:
 * fewer than two segments, an unknown agent or upstream, an upstream the
 * operator did not configure, or ".." / "%2e" tricks in rest.
 */
int provider_path(const struct config *cfg, const char *path,
                  struct proxy_path *out, char *msg, size_t len);

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
