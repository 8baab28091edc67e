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

#include "config/config.h"
#include "store/store.h"
#include "vault/vault.h"

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
 * The same without printing: the new token is written to out (the
 * caller shows it once and wipes it).  A stored token is looked up in
 * the store on every request, so the new one works at once and the one
 * it replaces stops at once.
 */
int auth_token_make(struct store *store, const char *name,
                    char out[VAULT_TOKEN_LEN + 1]);
/* A token name: 1-63 bytes of [A-Za-z0-9._-], as in SANDBOXD_API_TOKENS. */
bool auth_name_ok(const char *name, size_t len);
/* The tokens of SANDBOXD_API_TOKENS: their count, and the i-th's name. */
size_t auth_env_count(const struct auth *a);
const char *auth_env_name(const struct auth *a, size_t i);
/* Whether SANDBOXD_API_TOKENS names a token name. */
bool auth_env_has(const struct auth *a, const char *name);
/*
 * Whether a token of this name is an operator's: AUTH_FIRST_TOKEN_NAME or
 * a name SANDBOXD_OPERATORS lists (auth being off plays no part).
 */
bool auth_name_operator(const struct auth *a, const char *name);
/*
 * Checks an Authorization header value, whether authentication is off
 * or not (server.c decides when none is needed).  On success writes the
 * caller's tenant (its token's name) to owner and returns true.
 */
bool auth_check(struct auth *a, const char *header, char *owner, size_t len);
/*
 * Whether the tenant owner (as auth_check wrote it) is an operator: it
 * is AUTH_FIRST_TOKEN_NAME, or SANDBOXD_OPERATORS lists it.
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
 * The console's host (console.<PREVIEW_DOMAIN>, config/hosts.h) is
 * served too: the operator named that domain, so no stranger's page can.
 */
bool auth_host_allowed(const struct auth *a, const char *host);
/* Whether authentication is off (SANDBOXD_API_AUTH_DISABLED): for
 * requests straight from loopback only (server.c). */
bool auth_disabled(const struct auth *a);
/* PREVIEW_TLS: every request came over TLS (the cookie gets Secure). */
bool auth_tls(const struct auth *a);
const char *auth_data_dir(const struct auth *a);
/* The console sign-in's rate limiter (api/session.h). */
struct session_limiter *auth_limiter(struct auth *a);
/* "localhost", "127.0.0.1" or "[::1]", each with or without ":port". */
bool auth_loopback_host(const char *host);

#endif
