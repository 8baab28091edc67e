/*
 * /v1/auth: the console's sign-in.  The first password needs the setup
 * code the daemon printed at first start, so the first stranger to reach
 * the console cannot claim the instance.  A session is a random 256-bit
 * cookie token (only its SHA-256 is stored) with a CSRF token bound to
 * it; it belongs to the tenant "default", an operator, like the
 * first-start token.  Sessions last SESSION_TTL_SECONDS from their last
 * use, renewed at most every SESSION_RENEW_SECONDS (one write an hour,
 * not one a request), each renewal with a fresh cookie.
 *
 * Passwords are hashed (argon2id, vault) on the API thread that handles
 * the request, under no lock, and at most SESSION_HASHING_MAX at once.
 * Wrong passwords and wrong setup codes count against the login rate
 * limit (session.c) before anything is hashed, so a guesser is slowed
 * and costs little.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "api/api.h"
#include "api/auth.h"
#include "api/session.h"
#include "lib/clock.h"
#include "lib/limits.h"
#include "lib/log.h"
#include "vault/vault.h"

/* jv has no constructor for null; its parser makes one. */
static struct jv *
json_null(void)
{
	char err[16];

	return jv_parse("null", 4, 1, err, sizeof(err));
}

static void
set_str_or_null(struct jv *o, const char *key, const char *v)
{
	jv_set(o, key, v ? jv_new_str(v) : json_null());
}

static struct jv *
status_obj(struct req *r)
{
	struct jv *o = jv_obj();
	char hash[VAULT_PWHASH_LEN], when[CLOCK_RFC3339_LEN];
	bool off = r->auth_off, in = off || r->via != API_VIA_NONE;
	bool session = r->via == API_VIA_SESSION;

	jv_set_bool(o, "auth_enabled", !off);
	jv_set_bool(
	    o, "password_set",
	    store_console_password(r->core->store, hash, sizeof(hash)) == 0);
	jv_set_bool(o, "signed_in", in);
	set_str_or_null(o, "via",
	                session                   ? "session"
	                : r->via == API_VIA_TOKEN ? "token"
	                                          : NULL);
	set_str_or_null(o, "tenant", in ? r->owner : NULL);
	jv_set_bool(o, "operator", in && r->operator);
	set_str_or_null(o, "csrf_token", session ? r->csrf : NULL);
	if (session)
		clock_rfc3339(r->session_expires, when);
	set_str_or_null(o, "expires_at", session ? when : NULL);
	vault_wipe(hash, sizeof(hash));
	return o;
}

void
signin_status(struct req *r, struct resp *w)
{
	api_reply_json(w, 200, status_obj(r));
}

/* --- sessions ------------------------------------------------------------ */

static bool
renew_due(const struct store_session *ss, int64_t now)
{
	return now - ss->renewed_at >= SESSION_RENEW_SECONDS;
}

/* r is the operator's, signed in by the session hash (the cookie's). */
static void
signed_in(struct req *r, const char *hash, const struct store_session *ss)
{
	r->via = API_VIA_SESSION;
	snprintf(r->owner, sizeof(r->owner), "%s", AUTH_FIRST_TOKEN_NAME);
	r->operator= auth_operator(api_auth(r), r->owner);
	snprintf(r->session, sizeof(r->session), "%s", hash);
	snprintf(r->csrf, sizeof(r->csrf), "%s", ss->csrf);
	r->session_expires = ss->expires_at;
}

/*
 * The stored session of one of the cookie's tokens, the __Host- ones
 * first: 0 with its hash in hash and the token in token, or -1.  At
 * most SESSION_COOKIES_MAX are looked up.
 */
static int
session_find(struct req *r, const char *cookie, int64_t now,
             char token[SESSION_TOKEN_LEN + 1], char hash[VAULT_HASH_HEX + 1],
             struct store_session *ss)
{
	static const char *const names[] = {SESSION_COOKIE_HOST,
	                                    SESSION_COOKIE};
	int tries = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		size_t pos = 0;
		while (tries < SESSION_COOKIES_MAX &&
		       session_cookie_next(cookie, names[i], &pos, token)) {
			tries++;
			vault_hash_hex(token, strlen(token), hash);
			if (store_session_get(r->core->store, hash, now, ss) ==
			    0)
				return 0;
		}
	}
	return -1;
}

int
signin_session(struct req *r, const char *cookie)
{
	char token[SESSION_TOKEN_LEN + 1], hash[VAULT_HASH_HEX + 1];
	struct store_session ss;
	int64_t now = clock_now();

	if (session_find(r, cookie, now, token, hash, &ss) < 0) {
		vault_wipe(token, sizeof(token));
		return -1;
	}
	if (renew_due(&ss, now) &&
	    store_session_renew(r->core->store, hash, now,
	                        now + SESSION_TTL_SECONDS) == 0) {
		ss.expires_at = now + SESSION_TTL_SECONDS;
		session_set_cookie(r->set_cookie, sizeof(r->set_cookie), token,
		                   r->https);
	}
	vault_wipe(token, sizeof(token));
	signed_in(r, hash, &ss);
	return 0;
}

int
signin_origin(struct req *r, struct resp *w)
{
	const char *origin = api_header(r, "Origin");
	const char *host = api_header(r, "Host");

	if (session_origin_ok(origin, host, r->https))
		return 0;
	api_fail(w, 403, "csrf_failed",
	         "the request's Origin (%.100s) is not the console's origin "
	         "for Host %.100s",
	         origin, host ? host : "(none)");
	return -1;
}

int
signin_csrf(struct req *r, struct resp *w)
{
	const char *tok = api_header(r, "X-CSRF-Token");
	size_t n = strlen(r->csrf);

	if (tok == NULL || strlen(tok) != n || n == 0 ||
	    !vault_equal(tok, r->csrf, n)) {
		api_fail(w, 403, "csrf_failed",
		         "a request signed in by the console's cookie must "
		         "carry X-CSRF-Token (the csrf_token of GET "
		         "/v1/auth/status); it is %s",
		         tok ? "wrong" : "missing");
		return -1;
	}
	return signin_origin(r, w);
}

/* A new session for the operator, its cookie in r->set_cookie. */
static int
session_new(struct req *r)
{
	char token[SESSION_TOKEN_LEN + 1], hash[VAULT_HASH_HEX + 1];
	struct store_session ss = {0};
	int64_t now = clock_now();

	vault_random_b64url(token);
	vault_hash_hex(token, strlen(token), hash);
	vault_random_b64url(ss.csrf);
	ss.created_at = ss.renewed_at = now;
	ss.expires_at = now + SESSION_TTL_SECONDS;
	if (store_session_add(r->core->store, hash, &ss) != 0) {
		vault_wipe(token, sizeof(token));
		return -1;
	}
	session_set_cookie(r->set_cookie, sizeof(r->set_cookie), token,
	                   r->https);
	vault_wipe(token, sizeof(token));
	signed_in(r, hash, &ss);
	return 0;
}

/* --- the handlers -------------------------------------------------------- */

/* Over the rate limit: 429 with Retry-After; true when refused. */
static bool
limited(struct req *r, struct resp *w)
{
	int wait = session_limit_check(auth_limiter(api_auth(r)), r->client,
	                               clock_now());

	if (wait == 0)
		return false;
	api_fail(w, 429, "rate_limited",
	         "too many failed sign-in attempts; try again in %d s", wait);
	w->retry_after = wait;
	return true;
}

static void
count_failure(struct req *r)
{
	session_limit_fail(auth_limiter(api_auth(r)), r->client, clock_now());
}

/* A string field of the body; NULL (with a 400 in w) when missing. */
static const char *
field(struct jv *body, struct resp *w, const char *key, size_t *len)
{
	struct jv *v = jv_get(body, key);
	const char *s = jv_str(v);

	if (s == NULL) {
		api_fail(w, 400, "invalid_request", "%s must be a string", key);
		return NULL;
	}
	*len = jv_str_len(v);
	if (strlen(s) != *len) {
		api_fail(w, 400, "invalid_request", "%s must not contain NUL",
		         key);
		return NULL;
	}
	return s;
}

static bool
password_ok(struct resp *w, const char *key, size_t len)
{
	if (len >= SESSION_PASSWORD_MIN && len <= SESSION_PASSWORD_MAX)
		return true;
	api_fail(w, 400, "invalid_request", "%s must be %d to %d bytes long",
	         key, SESSION_PASSWORD_MIN, SESSION_PASSWORD_MAX);
	return false;
}

/* Takes one of l's hashing slots; false (429 in w) when all are busy. */
static bool
hash_slot(struct session_limiter *l, struct resp *w)
{
	if (session_hash_enter(l))
		return true;
	api_fail(w, 429, "rate_limited",
	         "too many sign-ins at once; try again in a second");
	w->retry_after = 1;
	return false;
}

/* Hashes pw in a hashing slot: 0, or -1 with the answer in w. */
static int
hash_password(struct req *r, struct resp *w, const char *pw, size_t len,
              char out[VAULT_PWHASH_LEN])
{
	struct session_limiter *l = auth_limiter(api_auth(r));
	int rc;

	if (!hash_slot(l, w))
		return -1;
	rc = vault_pwhash(pw, len, out);
	session_hash_leave(l);
	if (rc < 0)
		api_fail(w, 500, "internal", "cannot hash the password");
	return rc;
}

/* Checks pw against the stored hash in a hashing slot: 1 right, 0
 * wrong, -1 with the answer in w (no password yet, busy, store). */
static int
verify_password(struct req *r, struct resp *w, const char *pw, size_t len)
{
	struct session_limiter *l = auth_limiter(api_auth(r));
	char hash[VAULT_PWHASH_LEN];
	int rc = store_console_password(r->core->store, hash, sizeof(hash));
	bool ok;

	if (rc == STORE_NOT_FOUND) {
		api_fail(w, 409, "conflict",
		         "no console password is set yet: set one with POST "
		         "/v1/auth/setup and the setup code");
		return -1;
	}
	if (rc != 0) {
		api_fail(w, 500, "internal", "cannot read the password");
		return -1;
	}
	if (!hash_slot(l, w))
		return -1;
	ok = vault_pwverify(hash, pw, len);
	session_hash_leave(l);
	return ok ? 1 : 0;
}

static void
reply_signed_in(struct req *r, struct resp *w)
{
	if (session_new(r) < 0) {
		api_fail(w, 500, "internal", "cannot store the session");
		return;
	}
	api_reply_json(w, 200, status_obj(r));
}

static int
setup_checks(struct req *r, struct resp *w, const char *code, size_t pwlen)
{
	char stored[SESSION_CODE_LEN + 1], hash[VAULT_PWHASH_LEN];
	const char *dir = auth_data_dir(api_auth(r));

	if (store_console_password(r->core->store, hash, sizeof(hash)) == 0) {
		vault_wipe(hash, sizeof(hash));
		api_fail(w, 409, "password_set",
		         "a console password is set already: sign in with "
		         "POST /v1/auth/login");
		return -1;
	}
	if (!password_ok(w, "password", pwlen))
		return -1;
	if (session_code_read(dir, stored) < 0) {
		api_fail(w, 403, "setup_code_invalid",
		         "no setup code is waiting: run `sandboxd setup-code` "
		         "on the host to make one");
		return -1;
	}
	if (!session_code_equal(code, stored)) {
		count_failure(r);
		api_fail(w, 403, "setup_code_invalid",
		         "the setup code is wrong: the daemon printed it at "
		         "first start, and `sandboxd setup-code` prints it "
		         "again on the host");
		return -1;
	}
	return 0;
}

void
signin_setup(struct req *r, struct resp *w)
{
	char hash[VAULT_PWHASH_LEN], path[WORKSPACE_PATH_MAX];
	const char *code, *pw;
	size_t clen, pwlen;
	struct jv *body;
	int rc;

	if (signin_origin(r, w) < 0 || limited(r, w) ||
	    api_body_object(r, w, false, &body) < 0)
		return;
	if ((code = field(body, w, "setup_code", &clen)) == NULL ||
	    (pw = field(body, w, "password", &pwlen)) == NULL ||
	    setup_checks(r, w, code, pwlen) < 0 ||
	    hash_password(r, w, pw, pwlen, hash) < 0) {
		jv_free(body);
		return;
	}
	jv_free(body);
	rc = store_console_password_init(r->core->store, hash);
	vault_wipe(hash, sizeof(hash));
	if (rc == STORE_CONFLICT) {
		api_fail(w, 409, "password_set",
		         "a console password was set meanwhile");
		return;
	}
	if (rc != 0) {
		api_fail(w, 500, "internal", "cannot store the password");
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", auth_data_dir(api_auth(r)),
	         SESSION_CODE_FILE);
	unlink(path);
	log_info("console: the password was set (the setup code is used up)");
	reply_signed_in(r, w);
}

void
signin_login(struct req *r, struct resp *w)
{
	const char *pw;
	size_t pwlen;
	struct jv *body;
	int ok;

	if (signin_origin(r, w) < 0 || limited(r, w) ||
	    api_body_object(r, w, false, &body) < 0)
		return;
	if ((pw = field(body, w, "password", &pwlen)) == NULL) {
		jv_free(body);
		return;
	}
	if (pwlen > SESSION_PASSWORD_MAX) {
		ok = 0; /* never hashed; still a failure */
	} else if ((ok = verify_password(r, w, pw, pwlen)) < 0) {
		jv_free(body);
		return;
	}
	jv_free(body);
	if (!ok) {
		count_failure(r);
		api_fail(w, 401, "invalid_password", "the password is wrong");
		return;
	}
	session_limit_clear(auth_limiter(api_auth(r)), r->client);
	reply_signed_in(r, w);
}

void
signin_logout(struct req *r, struct resp *w)
{
	bool bad, all;
	const char *v = api_query(r, w, "all", &bad);

	if (bad)
		return;
	all = v && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);
	if (all && !r->operator) {
		api_fail(w, 403, "operator_only",
		         "only an operator may end every console session");
		return;
	}
	if ((all || r->via == API_VIA_SESSION) &&
	    store_session_end(r->core->store, all ? NULL : r->session) < 0) {
		api_fail(w, 500, "internal", "cannot end the session");
		return;
	}
	if (r->via == API_VIA_SESSION)
		session_set_cookie(r->set_cookie, sizeof(r->set_cookie), NULL,
		                   r->https);
	api_reply_empty(w, 204);
}

void
signin_password(struct req *r, struct resp *w)
{
	char hash[VAULT_PWHASH_LEN];
	const char *cur, *next;
	size_t clen, nlen;
	struct jv *body;
	int ok = 0, rc;

	if (limited(r, w) || api_body_object(r, w, false, &body) < 0)
		return;
	if ((cur = field(body, w, "current_password", &clen)) == NULL ||
	    (next = field(body, w, "new_password", &nlen)) == NULL ||
	    !password_ok(w, "new_password", nlen) ||
	    (clen <= SESSION_PASSWORD_MAX &&
	     (ok = verify_password(r, w, cur, clen)) < 0)) {
		jv_free(body);
		return;
	}
	if (!ok) {
		jv_free(body);
		count_failure(r);
		api_fail(w, 401, "invalid_password",
		         "the current password is wrong");
		return;
	}
	rc = hash_password(r, w, next, nlen, hash);
	jv_free(body);
	if (rc < 0)
		return;
	rc = store_console_password_change(
	    r->core->store, hash,
	    r->via == API_VIA_SESSION ? r->session : NULL);
	vault_wipe(hash, sizeof(hash));
	if (rc != 0) {
		api_fail(w, 500, "internal", "cannot store the password");
		return;
	}
	log_info("console: the password was changed; other sessions ended");
	api_reply_empty(w, 204);
}

/* The routes of this file, in the router's order (routes.c). */
const struct route signin_routes[] = {
    {.method = "GET",
     .pattern = "/v1/auth/status",
     .fn = signin_status,
     .open = true},
    {.method = "POST",
     .pattern = "/v1/auth/setup",
     .fn = signin_setup,
     .open = true},
    {.method = "POST",
     .pattern = "/v1/auth/login",
     .fn = signin_login,
     .open = true},
    {.method = "POST", .pattern = "/v1/auth/logout", .fn = signin_logout},
    {.method = "POST", .pattern = "/v1/auth/password", .fn = signin_password},
    {0},
};
