/*
 * The Claude subscription login (see credentials.h).
 *
 * A Claude subscription login is one sealed secret row (kind
 * agent_oauth, name claude-code, owner the scope: a tenant's name or ""
 * for the instance's) holding JSON: {"access_token",
 * "refresh_token","expires_at":<unix ms>,"scope"?,"needs_login"?}.  It
 * has three kinds of writers: a new login (the API), the refresher, and
 * the removals (an API key connected, a disconnect).  A removal is one
 * store transaction.  The refresher calls the token endpoint holding
 * nothing, then, under oauth_mu, writes its result only if the row still
 * holds the refresh token it used, and only into a row that still exists
 * (store_secret_update): it never brings a removed login back nor
 * overwrites a newer one.  New logins take oauth_mu as well.  Every
 * scope's login is refreshed: each period the refresher lists the
 * scopes that hold one and looks at each in turn.
 *
 * Token endpoint bodies are JSON, as the real CLI sends them, built and
 * read with jv; the JSON library's copies of tokens are wiped before
 * they are freed.  A refusal reaches callers and the log as at most
 * CRED_OAUTH_SNIPPET bytes of the provider's message, and not at all
 * when it repeats a secret of the request.
 */
#include "cred/credentials.h"
#include "cred/oauth_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/jv.h"
#include "lib/log.h"
#include "net/http.h"
#include "vault/vault.h"

/* --- the stored login ------------------------------------------------- */

static pthread_mutex_t oauth_mu = PTHREAD_MUTEX_INITIALIZER;

/* A scope for the log: "tenant NAME" or "the instance". */
static const char *
who(const char *owner)
{
	static _Thread_local char buf[STORE_SECRET_OWNER_MAX + 16];

	if (owner[0] == '\0')
		return "the instance";
	snprintf(buf, sizeof(buf), "tenant %s", owner);
	return buf;
}

static void
buf_release_wiped(struct buf *b)
{
	vault_wipe(b->data, b->cap);
	buf_release(b);
}

int
cred_oauth_get(struct store *st, const char *owner, struct cred_oauth *out)
{
	struct vault_secret s = {0};
	int rc = store_secret_get(st, STORE_SECRET_AGENT_OAUTH, owner,
	                          CRED_OAUTH_AGENT, &s);

	memset(out, 0, sizeof(*out));
	if (rc == 0 && cred_oauth_row_parse(s.data, s.len, out) < 0) {
		log_error("agents: %s: the stored login of %s does not parse",
		          CRED_OAUTH_AGENT, who(owner));
		cred_oauth_wipe(out);
		rc = -1;
	}
	vault_secret_free(&s);
	return rc;
}

/*
 * Writes the login: connect replaces the agent's API key (a new login),
 * else only an existing row is updated.  The caller holds oauth_mu.
 */
static int
row_save(struct store *st, const char *owner, const struct cred_oauth *o,
         bool connect)
{
	struct jv *j = jv_obj();
	struct buf b;
	int rc;

	jv_set_str(j, "access_token", o->access_token);
	jv_set_str(j, "refresh_token", o->refresh_token);
	jv_set_int(j, "expires_at", o->expires_at);
	if (o->scope[0])
		jv_set_str(j, "scope", o->scope);
	if (o->needs_login)
		jv_set_bool(j, "needs_login", true);
	buf_init(&b, 0);
	rc = jv_dump(j, &b);
	cred_jv_free_wiped(j);
	if (rc == 0 && connect)
		rc = store_agent_connect(st, owner, CRED_OAUTH_AGENT,
		                         STORE_SECRET_AGENT_OAUTH, b.data,
		                         b.len);
	else if (rc == 0)
		rc = store_secret_update(st, STORE_SECRET_AGENT_OAUTH, owner,
		                         CRED_OAUTH_AGENT, b.data, b.len);
	buf_release_wiped(&b);
	return rc;
}

/*
 * Writes o over the stored login if that still holds the refresh token
 * `used`: 0 when written, STORE_CONFLICT when a newer login replaced it,
 * STORE_NOT_FOUND when it was removed, -1.
 */
static int
save_if_current(struct store *st, const char *owner, const char *used,
                const struct cred_oauth *o)
{
	struct cred_oauth cur;
	size_t n = strlen(used);
	int rc;

	pthread_mutex_lock(&oauth_mu);
	rc = cred_oauth_get(st, owner, &cur);
	if (rc == 0 && (strlen(cur.refresh_token) != n ||
	                !vault_equal(cur.refresh_token, used, n)))
		rc = STORE_CONFLICT;
	if (rc == 0)
		rc = row_save(st, owner, o, false);
	pthread_mutex_unlock(&oauth_mu);
	cred_oauth_wipe(&cur);
	return rc;
}

/* --- the token endpoint ------------------------------------------------ */

int
cred_oauth_authorize_url(const struct config *cfg, const char *challenge,
                         const char *state, char *out, size_t len)
{
	const char *vals[5] = {cfg->claude_client_id, cfg->claude_redirect_uri,
	                       cfg->claude_scopes, challenge, state};
	char esc[5][1600];
	int n;

	for (int i = 0; i < 5; i++)
		if (http_escape(vals[i], esc[i], sizeof(esc[i])) < 0)
			return -1;
	n = snprintf(out, len,
	             "%s%ccode=true&client_id=%s&response_type=code"
	             "&redirect_uri=%s&scope=%s&code_challenge=%s"
	             "&code_challenge_method=S256&state=%s",
	             cfg->claude_authorize_url,
	             strchr(cfg->claude_authorize_url, '?') ? '&' : '?', esc[0],
	             esc[1], esc[2], esc[3], esc[4]);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

struct answer {
	struct buf body;
	bool too_big;
};

static size_t
on_answer(const char *p, size_t n, void *arg)
{
	struct answer *a = arg;

	if (buf_append(&a->body, p, n) < 0) {
		a->too_big = true;
		return 0;
	}
	return n;
}

/*
 * POSTs req (freed here, its strings wiped) to the token endpoint: 0
 * with *status and the answer in a->body (release it wiped), or -1 with
 * why when no whole answer came.  stop (may be NULL) aborts.
 */
static int
token_post(const struct config *cfg, struct jv *req, const atomic_bool *stop,
           struct answer *a, long *status, char *why, size_t whylen)
{
	static const char *const hdrs[] = {
	    "Content-Type: application/json", "Accept: application/json",
	    "User-Agent: sandboxd/" SANDBOXD_VERSION, "Expect:", NULL};
	struct http_call h = {0};
	struct buf body;
	int rc;

	buf_init(&a->body, CRED_OAUTH_ANSWER_MAX);
	a->too_big = false;
	buf_init(&body, 0);
	rc = jv_dump(req, &body);
	cred_jv_free_wiped(req);
	*status = 0;
	if (rc < 0) {
		buf_release_wiped(&body);
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	h.method = "POST";
	h.url = cfg->claude_token_url;
	h.https = true;
	h.headers = hdrs;
	h.body = body.data;
	h.body_len = body.len;
	h.send_body = true;
	h.connect_timeout_ms = 10000;
	h.timeout_s = CRED_OAUTH_TIMEOUT_S;
	h.on_body = on_answer;
	h.arg = a;
	h.stop = stop;
	rc = http_perform(&h);
	buf_release_wiped(&body);
	*status = h.status;
	if (rc < 0)
		snprintf(why, whylen, "%s",
		         a->too_big ? "its answer is over 1 MiB" : h.err);
	return rc;
}

/* Whether text shows the secret, or the first 16 bytes of it. */
static bool
shows(const char *text, const char *secret)
{
	size_t n = strlen(secret);

	return n > 0 &&
	       memmem(text, strlen(text), secret, n < 16 ? n : 16) != NULL;
}

/*
 * What the endpoint said, for the caller and the log: error_description,
 * else error.message, message or error, else the raw answer; printable
 * ASCII, at most CRED_OAUTH_SNIPPET bytes, withheld when it repeats one
 * of the request's secrets.
 */
static void
snippet(const struct buf *ans, const char *const *secrets, size_t nsecrets,
        char *out, size_t len)
{
	char err[128], tmp[CRED_OAUTH_SNIPPET + 1];
	struct jv *j = ans->len
	                   ? jv_parse(ans->data, ans->len, 8, err, sizeof(err))
	                   : NULL;
	const struct jv *e = j ? jv_get(j, "error") : NULL;
	const char *s = j ? jv_str(jv_get(j, "error_description")) : NULL;
	size_t n = 0;

	if (s == NULL && e)
		s = jv_str(jv_get(e, "message"));
	if (s == NULL && j)
		s = jv_str(jv_get(j, "message"));
	if (s == NULL)
		s = jv_str(e);
	if (s == NULL)
		s = ans->data ? ans->data : "";
	for (; n < CRED_OAUTH_SNIPPET && s[n]; n++)
		tmp[n] =
		    (unsigned char)s[n] < 0x20 || (unsigned char)s[n] > 0x7e
		        ? ' '
		        : s[n];
	tmp[n] = '\0';
	snprintf(out, len, "%s%s", n ? tmp : "(an empty answer)",
	         s[n] ? "..." : "");
	for (size_t i = 0; i < nsecrets; i++)
		if (shows(tmp, secrets[i]))
			snprintf(out, len, "(not shown: it repeats a secret)");
	vault_wipe(tmp, sizeof(tmp));
	cred_jv_free_wiped(j);
}

int
cred_oauth_login(struct store *st, const struct config *cfg, const char *owner,
                 const char *code, const char *state, const char *verifier,
                 struct cred_oauth *out, struct err *e)
{
	const char *secrets[] = {code, verifier};
	struct jv *req = jv_obj();
	char why[HTTP_ERR_LEN + 64], said[CRED_OAUTH_SNIPPET + 64];
	struct answer a;
	long status;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	jv_set_str(req, "grant_type", "authorization_code");
	jv_set_str(req, "code", code);
	jv_set_str(req, "state", state);
	jv_set_str(req, "client_id", cfg->claude_client_id);
	jv_set_str(req, "redirect_uri", cfg->claude_redirect_uri);
	jv_set_str(req, "code_verifier", verifier);
	if (token_post(cfg, req, NULL, &a, &status, why, sizeof(why)) < 0) {
		log_warn("agents: %s: sign-in: the token endpoint did not "
		         "answer: %s",
		         CRED_OAUTH_AGENT, why);
		err_set(e, 502, "oauth_failed",
		        "the token endpoint did not answer: %s", why);
	} else if (status < 200 || status > 299) {
		snippet(&a.body, secrets, 2, said, sizeof(said));
		log_warn("agents: %s: sign-in refused: HTTP %ld: %s",
		         CRED_OAUTH_AGENT, status, said);
		err_set(e, 502, "oauth_failed",
		        "the token endpoint refused the code (HTTP %ld): %s",
		        status, said);
	} else if (cred_oauth_parse(a.body.data ? a.body.data : "", a.body.len,
	                            clock_now_ms(), NULL, out, why,
	                            sizeof(why)) < 0) {
		log_warn("agents: %s: sign-in: the token endpoint's answer is "
		         "unusable: %s",
		         CRED_OAUTH_AGENT, why);
		err_set(e, 502, "oauth_failed",
		        "the token endpoint's answer is unusable: %s", why);
	} else {
		pthread_mutex_lock(&oauth_mu);
		rc = row_save(st, owner, out, true);
		pthread_mutex_unlock(&oauth_mu);
		if (rc != 0)
			ERR_INTERNAL(e, "cannot store the login");
	}
	buf_release_wiped(&a.body);
	if (rc != 0)
		cred_oauth_wipe(out);
	return rc == 0 ? 0 : -1;
}

/* --- the refresher ------------------------------------------------------ */

struct cred_refresher {
	struct store *store;
	const struct config *cfg;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	atomic_bool stopping;
};

/* After a refresh the endpoint refused for good: sign in again. */
static void
mark_needs_login(struct store *st, const char *owner, struct cred_oauth *old)
{
	old->needs_login = true;
	if (save_if_current(st, owner, old->refresh_token, old) == 0)
		log_warn("oauth: %s: %s: the provider refused the refresh "
		         "token (invalid_grant): sign in again (POST "
		         "/v1/agents/%s/oauth/start)",
		         CRED_OAUTH_AGENT, who(owner), CRED_OAUTH_AGENT);
}

/* Sends the refresh and stores its result; old is the stored login. */
static void
refresh(struct cred_refresher *rf, const char *owner, struct cred_oauth *old)
{
	const struct config *cfg = rf->cfg;
	const char *secrets[] = {old->refresh_token};
	struct jv *req = jv_obj();
	struct cred_oauth neu;
	char why[HTTP_ERR_LEN + 64], said[CRED_OAUTH_SNIPPET + 64];
	char when[CLOCK_RFC3339_LEN];
	long long every = (long long)cfg->oauth_refresh_s;
	struct answer a;
	long status;
	int rc;

	jv_set_str(req, "grant_type", "refresh_token");
	jv_set_str(req, "refresh_token", old->refresh_token);
	jv_set_str(req, "client_id", cfg->claude_client_id);
	if (token_post(cfg, req, &rf->stopping, &a, &status, why, sizeof(why)) <
	    0) {
		if (!rf->stopping)
			log_warn("oauth: %s: %s: refresh failed: %s; trying "
			         "again in %llds",
			         CRED_OAUTH_AGENT, who(owner), why, every);
	} else if ((status == 400 || status == 401) && a.body.data &&
	           strstr(a.body.data, "invalid_grant")) {
		mark_needs_login(rf->store, owner, old);
	} else if (status < 200 || status > 299) {
		snippet(&a.body, secrets, 1, said, sizeof(said));
		log_warn("oauth: %s: %s: refresh failed: HTTP %ld: %s; "
		         "trying again in %llds",
		         CRED_OAUTH_AGENT, who(owner), status, said, every);
	} else if (cred_oauth_parse(a.body.data ? a.body.data : "", a.body.len,
	                            clock_now_ms(), old, &neu, why,
	                            sizeof(why)) < 0) {
		log_warn("oauth: %s: %s: refresh failed: the answer is "
		         "unusable: %s; trying again in %llds",
		         CRED_OAUTH_AGENT, who(owner), why, every);
	} else {
		rc =
		    save_if_current(rf->store, owner, old->refresh_token, &neu);
		clock_rfc3339(neu.expires_at / 1000, when);
		if (rc == 0)
			log_info("oauth: %s: %s: token refreshed; it "
			         "expires %s",
			         CRED_OAUTH_AGENT, who(owner),
			         neu.expires_at ? when : "(not said)");
		else
			log_info("oauth: %s: %s: the login changed during "
			         "a refresh; the refresh is dropped",
			         CRED_OAUTH_AGENT, who(owner));
		cred_oauth_wipe(&neu);
	}
	buf_release_wiped(&a.body);
}

/* One look at a scope's login: refreshed when it expires soon. */
static void
refresh_one(struct cred_refresher *rf, const char *owner)
{
	struct cred_oauth old;

	if (cred_oauth_get(rf->store, owner, &old) == 0 && !old.needs_login &&
	    old.refresh_token[0] &&
	    (old.expires_at == 0 ||
	     old.expires_at - clock_now_ms() <= CRED_OAUTH_SOON_MS))
		refresh(rf, owner, &old);
	cred_oauth_wipe(&old);
}

/* Every scope's login, the instance's and each tenant's. */
static void
refresh_due(struct cred_refresher *rf)
{
	struct store_owner *owners = NULL;
	size_t n = 0;

	if (store_agent_oauth_owners(rf->store, CRED_OAUTH_AGENT, &owners, &n) <
	    0)
		log_warn("oauth: %s: cannot list the logins to refresh",
		         CRED_OAUTH_AGENT);
	for (size_t i = 0; i < n && !rf->stopping; i++)
		refresh_one(rf, owners[i].name);
	free(owners);
}

static void *
refresher_main(void *arg)
{
	struct cred_refresher *rf = arg;
	struct timespec until;

	pthread_mutex_lock(&rf->mu);
	while (!rf->stopping) {
		pthread_mutex_unlock(&rf->mu);
		refresh_due(rf);
		pthread_mutex_lock(&rf->mu);
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += rf->cfg->oauth_refresh_s;
		while (!rf->stopping &&
		       pthread_cond_timedwait(&rf->cv, &rf->mu, &until) !=
		           ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&rf->mu);
	return NULL;
}

int
cred_refresher_start(struct cred_refresher **out, struct store *st,
                     const struct config *cfg)
{
	struct cred_refresher *rf = calloc(1, sizeof(*rf));
	pthread_condattr_t ca;

	if (rf == NULL)
		return -1;
	rf->store = st;
	rf->cfg = cfg;
	pthread_mutex_init(&rf->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&rf->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&rf->thread, NULL, refresher_main, rf) != 0) {
		log_error("oauth: cannot start the refresher thread");
		pthread_cond_destroy(&rf->cv);
		pthread_mutex_destroy(&rf->mu);
		free(rf);
		return -1;
	}
	*out = rf;
	return 0;
}

void
cred_refresher_stop(struct cred_refresher *rf)
{
	if (rf == NULL)
		return;
	pthread_mutex_lock(&rf->mu);
	rf->stopping = true;
	pthread_cond_signal(&rf->cv);
	pthread_mutex_unlock(&rf->mu);
	pthread_join(rf->thread, NULL);
	pthread_cond_destroy(&rf->cv);
	pthread_mutex_destroy(&rf->mu);
	free(rf);
}
