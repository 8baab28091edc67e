/*
 * API authentication.  auth_init() hashes the configured tokens (the
 * plain tokens are not kept) and, on a first start with no token at all,
 * makes one, prints it once on stdout and stores only its hash.
 * auth_check() is thread-safe.
 */
#ifndef API_AUTH_H
#define API_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "core/config.h"
#include "store/store.h"

struct auth;

/* The name of the token made at first start: an operator. */
#define AUTH_FIRST_TOKEN_NAME "default"

int auth_init(struct auth **out, struct config *cfg, struct store *store);
void auth_free(struct auth *a);
/*
 * Makes a new token for the tenant name (replacing that name's stored
 * token), prints it once on stdout and stores only its hash.
 */
int auth_token_issue(struct store *store, const char *name);
/*
 * Checks an Authorization header value.  On success writes the caller's
 * tenant (its token's name) to owner and returns true.
 */
bool auth_check(struct auth *a, const char *header, char *owner, size_t len);
/*
 * Whether the tenant owner (as auth_check wrote it) is an operator: auth
 * is off, or it is AUTH_FIRST_TOKEN_NAME, or SANDBOXD_OPERATORS lists it.
 * Only operators change instance-wide credentials and settings.
 */
bool auth_operator(const struct auth *a, const char *owner);
/* Whether the comma-separated list (spaces around names ignored) names name. */
bool auth_name_listed(const char *list, const char *name);
/*
 * The DNS-rebinding guard: whether a request naming this Host (NULL:
 * none) is served.  Always with authentication on; with it off only a
 * loopback name (auth_loopback_host), so that a web page whose name was
 * made to resolve to 127.0.0.1 cannot drive an open API from a browser.
 * The console's host (console.<PREVIEW_DOMAIN>, core/console.h) is
 * served too: the operator named that domain, so no stranger's page can.
 */
bool auth_host_allowed(const struct auth *a, const char *host);
/* Whether authentication is off (SANDBOXD_API_AUTH_DISABLED). */
bool auth_disabled(const struct auth *a);
/* PREVIEW_TLS: every request came over TLS (the cookie gets Secure). */
bool auth_tls(const struct auth *a);
const char *auth_data_dir(const struct auth *a);
/* The console sign-in's rate limiter (api/session.h). */
struct session_limiter *auth_limiter(struct auth *a);
/* "localhost", "127.0.0.1" or "[::1]", each with or without ":port". */
bool auth_loopback_host(const char *host);

#endif
