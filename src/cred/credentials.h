/*
 * Credentials for the proxy and the tasks: each sandbox's proxy token
 * and the Claude subscription login (OAuth with PKCE).  Keys and tokens
 * are opened from the store's sealed rows only for the moment they are
 * needed and wiped right after.  How a credential goes on the wire is
 * the proxy's (proxy/wire.h).
 */
#ifndef CRED_CREDENTIALS_H
#define CRED_CREDENTIALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "lib/err.h"
#include "store/store.h"

/*
 * Makes the sandbox's proxy token: a new random token whose hash goes on
 * the sandbox row and whose value is sealed in the store (the task code
 * hands it to the agent).  Called at create; a new token replaces the
 * old one.
 */
int cred_new_proxy_token(struct store *s, const char *sandbox_id);
/* The sandbox's proxy token into out (the caller wipes it); -1 if none. */
int cred_proxy_token(struct store *s, const char *sandbox_id, char *out,
                     size_t len);
/* Forgets the token (sandbox delete). */
void cred_drop_proxy_token(struct store *s, const char *sandbox_id);
/*
 * The sandbox a proxy token belongs to: 0 when it exists and runs, -1
 * otherwise (missing, wrong, deleted or stopped sandbox).
 */
int cred_sandbox_for_token(struct store *s, const char *token,
                           struct sandbox *sb);
/* --- the Claude subscription login ------------------------------------- */

#define CRED_OAUTH_AGENT      "claude-code"    /* the only agent with one */
#define CRED_OAUTH_TOKEN_MAX  4096             /* bytes of a token */
#define CRED_OAUTH_ANSWER_MAX (1u << 20)       /* a token endpoint's answer */
#define CRED_OAUTH_TIMEOUT_S  30               /* a token endpoint call */
#define CRED_OAUTH_SOON_MS    (15 * 60 * 1000) /* refreshed this early */
#define CRED_OAUTH_SNIPPET    200 /* bytes of a refusal shown to callers */

/* A login as it is sealed in the store (tokens: printable ASCII). */
struct cred_oauth {
	char access_token[CRED_OAUTH_TOKEN_MAX + 1];
	char refresh_token[CRED_OAUTH_TOKEN_MAX + 1]; /* "" when none */
	int64_t expires_at; /* unix ms; 0 when unknown */
	char scope[512];    /* "" when the provider named none */
	bool needs_login;   /* the refresh token was refused */
};

void cred_oauth_wipe(struct cred_oauth *o);
/*
 * The provider's authorize URL with its query in the order the
 * provider's front end insists on: code, client_id, response_type,
 * redirect_uri, scope, code_challenge, code_challenge_method, state.
 * -1 when it does not fit.
 */
int cred_oauth_authorize_url(const struct config *cfg, const char *challenge,
                             const char *state, char *out, size_t len);
/*
 * Reads a token endpoint's answer: access_token (required),
 * refresh_token, expires_in, scope.  What the answer leaves out is kept
 * from old (NULL: nothing).  -1 with the reason in why (never a token).
 */
int cred_oauth_parse(const char *text, size_t len, int64_t now_ms,
                     const struct cred_oauth *old, struct cred_oauth *out,
                     char *why, size_t whylen);
/*
 * The login stored in owner's scope (a tenant's name, "" the
 * instance's); STORE_NOT_FOUND, or -1.  No fallback: the caller chose
 * the scope (store_agent_source).
 */
int cred_oauth_get(struct store *s, const char *owner, struct cred_oauth *out);
/*
 * Exchanges an authorization code at the token endpoint and stores the
 * login in owner's scope, where it replaces the agent's API key.  -1 with e
 * set: 502 oauth_failed when the endpoint refused or did not answer (with at
 * most CRED_OAUTH_SNIPPET bytes of its answer, never a secret of ours), 500
 * when it cannot be stored.  out gets the login (wipe it).
 */
int cred_oauth_login(struct store *s, const struct config *cfg,
                     const char *owner, const char *code, const char *state,
                     const char *verifier, struct cred_oauth *out,
                     struct err *e);

/*
 * The refresher: a thread that every cfg->oauth_refresh_s seconds
 * refreshes each scope's login (the instance's and every tenant's) that
 * expires within CRED_OAUTH_SOON_MS.  A refresh that
 * fails is retried next time; one the provider refuses (invalid_grant)
 * marks the login needs_login.  stop (NULL is fine) aborts a refresh in
 * flight and joins the thread.
 */
struct cred_refresher;
int cred_refresher_start(struct cred_refresher **out, struct store *s,
                         const struct config *cfg);
void cred_refresher_stop(struct cred_refresher *rf);

#endif
