/*
 * Console sign-in's pure parts: the session cookie, the CSRF Origin
 * check, the client address the rate limit counts, the setup code, the
 * rate limiter itself, the console's host name; and the store's session
 * rows (password set once, expiry, a password change ending the others).
 */
#include <stdlib.h>
#include <string.h>

#include "api/session.h"
#include "config/hosts.h"
#include "lib/clock.h"
#include "store/store.h"
#include "store_fixture.h"
#include "unit.h"
#include "vault/vault.h"

#define TOK  "QTFmzNP-xd3_9NyH1GhEcs8jawhvgFC6Op4ZH1hn7d0"
#define TOK2 "ZZFmzNP-xd3_9NyH1GhEcs8jawhvgFC6Op4ZH1hn7d0"

/* The first session token named SESSION_COOKIE of h, as signin.c reads. */
static bool
first(const char *h, char out[SESSION_TOKEN_LEN + 1])
{
	size_t pos = 0;

	return session_cookie_next(h, SESSION_COOKIE, &pos, out);
}

static void
cookie_parsing(void)
{
	char out[SESSION_TOKEN_LEN + 1], *big;
	size_t pos = 0;

	CHECK(first("sbx_session=" TOK, out));
	CHECK_STR(out, TOK);
	CHECK(first("a=b; sbx_session=" TOK "; c=d", out));
	CHECK_STR(out, TOK);
	CHECK(first("theme=dark;sbx_session=" TOK2 "  ", out));
	CHECK_STR(out, TOK2);
	/* Another name that ends or starts like ours is not ours. */
	CHECK(!first("xsbx_session=" TOK, out));
	CHECK(!first("sbx_session_x=" TOK, out));
	CHECK(!first("sbx_session=" TOK "x", out));
	CHECK(!first("sbx_session=short", out));
	CHECK(!first("sbx_session=QTFmzNP-xd3_9NyH1GhEcs8jawhvg"
	             "FC6Op4ZH1hn7d!",
	             out));
	CHECK(!first("", out));
	CHECK(!first(NULL, out));
	CHECK(!first("sbx_session", out));
	CHECK(!first("__Host-sbx_session=" TOK, out));
	/* Every one of several, in order, the malformed ones skipped: a
	 * forged cookie before the real one does not hide it. */
	CHECK(session_cookie_next("sbx_session=" TOK2 "; sbx_session=bad; "
	                          "sbx_session=" TOK,
	                          SESSION_COOKIE, &pos, out));
	CHECK_STR(out, TOK2);
	CHECK(session_cookie_next("sbx_session=" TOK2 "; sbx_session=bad; "
	                          "sbx_session=" TOK,
	                          SESSION_COOKIE, &pos, out));
	CHECK_STR(out, TOK);
	CHECK(!session_cookie_next("sbx_session=" TOK2 "; sbx_session=bad; "
	                           "sbx_session=" TOK,
	                           SESSION_COOKIE, &pos, out));
	pos = 0;
	CHECK(session_cookie_next("sbx_session=" TOK2
	                          "; __Host-sbx_session=" TOK,
	                          SESSION_COOKIE_HOST, &pos, out));
	CHECK_STR(out, TOK);
	/* Over the cap: not read at all, even with a good cookie in it. */
	big = malloc(SESSION_COOKIE_MAX_BYTES + 100);
	memset(big, 'a', SESSION_COOKIE_MAX_BYTES + 99);
	big[SESSION_COOKIE_MAX_BYTES + 99] = '\0';
	memcpy(big, "sbx_session=" TOK ";", 13 + SESSION_TOKEN_LEN);
	CHECK(!first(big, out));
	big[SESSION_COOKIE_MAX_BYTES - 1] = '\0';
	CHECK(first(big, out));
	free(big);
}

static void
origin_check(void)
{
	const char *h = "console.localhost:8080";

	CHECK(session_origin_ok(NULL, h, false));
	CHECK(session_origin_ok("http://console.localhost:8080", h, false));
	CHECK(session_origin_ok("HTTP://Console.Localhost:8080", h, false));
	CHECK(session_origin_ok("https://console.localhost:8080", h, true));
	CHECK(!session_origin_ok("https://console.localhost:8080", h, false));
	CHECK(!session_origin_ok("http://console.localhost:8080", h, true));
	CHECK(!session_origin_ok("http://console.localhost", h, false));
	CHECK(!session_origin_ok("http://console.localhost:80800", h, false));
	CHECK(!session_origin_ok("http://evil.example", h, false));
	CHECK(!session_origin_ok("null", h, false));
	CHECK(!session_origin_ok("", h, false));
	CHECK(!session_origin_ok("http://console.localhost:8080", NULL, false));
	CHECK(!session_origin_ok("http://", "", false));
}

static void
client_address(void)
{
	char out[48];

	session_client_addr("10.0.0.5", false, "1.2.3.4", out, sizeof(out));
	CHECK_STR(out, "10.0.0.5"); /* not loopback: X-F-F is ignored */
	session_client_addr("127.0.0.1", true, "1.2.3.4", out, sizeof(out));
	CHECK_STR(out, "1.2.3.4");
	session_client_addr("127.0.0.1", true, "6.6.6.6, 1.2.3.4 ", out,
	                    sizeof(out));
	CHECK_STR(out, "1.2.3.4"); /* the last hop: what the edge wrote */
	session_client_addr("127.0.0.1", true, "2001:db8::1", out, sizeof(out));
	CHECK_STR(out, "2001:db8::/64");
	session_client_addr("2001:db8:1:2:3:4:5:6", false, NULL, out,
	                    sizeof(out));
	CHECK_STR(out, "2001:db8:1:2::/64");
	session_client_addr("::ffff:10.0.0.1", false, NULL, out, sizeof(out));
	CHECK_STR(out, "::ffff:10.0.0.1");
	session_client_addr("127.0.0.1", true, "1.2.3.4, garbage", out,
	                    sizeof(out));
	CHECK_STR(out, "127.0.0.1");
	session_client_addr("127.0.0.1", true, NULL, out, sizeof(out));
	CHECK_STR(out, "127.0.0.1");
	session_client_addr("127.0.0.1", true, "", out, sizeof(out));
	CHECK_STR(out, "127.0.0.1");
}

static void
setup_code_format(void)
{
	char a[SESSION_CODE_LEN + 1], b[SESSION_CODE_LEN + 1];
	char n[SESSION_CODE_CHARS + 1];

	session_code_new(a);
	session_code_new(b);
	CHECK(strlen(a) == 19);
	CHECK(a[4] == '-' && a[9] == '-' && a[14] == '-');
	CHECK(strcmp(a, b) != 0);
	for (int i = 0; i < 19; i++)
		CHECK(a[i] == '-' ||
		      strchr("ABCDEFGHJKLMNPQRSTUVWXYZ23456789", a[i]));
	CHECK(session_code_normalize(a, n) && strlen(n) == 16);
	CHECK(session_code_equal("KWSU-NZAF-LBW5-Q9F2", "kwsu nzaf lbw5 q9f2"));
	CHECK(session_code_equal("KWSU-NZAF-LBW5-Q9F2", "KWSUNZAFLBW5Q9F2"));
	CHECK(
	    !session_code_equal("KWSU-NZAF-LBW5-Q9F2", "KWSU-NZAF-LBW5-Q9F3"));
	CHECK(!session_code_equal("KWSU-NZAF-LBW5-Q9F2", "KWSU-NZAF-LBW5-Q9F"));
	CHECK(!session_code_equal("KWSU-NZAF-LBW5-Q9F2",
	                          "KWSU-NZAF-LBW5-Q9F2-A"));
	CHECK(!session_code_normalize("KWSU-NZAF-LBW5-Q9F0", n)); /* no 0 */
	CHECK(!session_code_normalize("IWSU-NZAF-LBW5-Q9F2", n)); /* no I */
	CHECK(!session_code_normalize("", n));
	CHECK(!session_code_normalize(NULL, n));
}

static void
set_cookie_line(void)
{
	char s[SESSION_SET_COOKIE_BYTES];

	session_set_cookie(s, sizeof(s), TOK, false);
	CHECK_STR(s, "sbx_session=" TOK
	             "; HttpOnly; SameSite=Strict; Path=/; Max-Age=2592000");
	/* Over HTTPS: a __Host- cookie, which no other host can set. */
	session_set_cookie(s, sizeof(s), TOK, true);
	CHECK_STR(s, "__Host-sbx_session=" TOK "; HttpOnly; SameSite=Strict; "
	             "Path=/; Max-Age=2592000; Secure");
	session_set_cookie(s, sizeof(s), NULL, false);
	CHECK_STR(s, "sbx_session=; HttpOnly; SameSite=Strict; Path=/; "
	             "Max-Age=0");
}

static void
rate_limiter(void)
{
	struct session_limiter *l = malloc(sizeof(*l));
	char addr[48];
	int64_t t = 1000000;

	session_limiter_init(l);
	/* A few free failures, then waits that double to a cap. */
	for (int i = 0; i < SESSION_LOGIN_FREE; i++) {
		CHECK(session_limit_check(l, "1.2.3.4", t) == 0);
		session_limit_fail(l, "1.2.3.4", t);
	}
	CHECK(session_limit_check(l, "1.2.3.4", t) == SESSION_LOGIN_DELAY_MIN);
	CHECK(session_limit_check(l, "1.2.3.4", t + 1) ==
	      SESSION_LOGIN_DELAY_MIN - 1);
	CHECK(session_limit_check(l, "1.2.3.4", t + SESSION_LOGIN_DELAY_MIN) ==
	      0);
	session_limit_fail(l, "1.2.3.4", t + 1);
	CHECK(session_limit_check(l, "1.2.3.4", t + 1) ==
	      2 * SESSION_LOGIN_DELAY_MIN);
	for (int i = 0; i < 10; i++)
		session_limit_fail(l, "1.2.3.4", t + 2);
	CHECK(session_limit_check(l, "1.2.3.4", t + 2) ==
	      SESSION_LOGIN_DELAY_MAX);
	/* The right password gets its turn after the cap at most. */
	CHECK(session_limit_check(l, "1.2.3.4",
	                          t + 2 + SESSION_LOGIN_DELAY_MAX) == 0);
	CHECK(session_limit_check(l, "5.6.7.8", t) == 0); /* per address */
	session_limit_clear(l, "1.2.3.4");
	CHECK(session_limit_check(l, "1.2.3.4", t + 3) == 0);
	/* Forgotten after a quiet while. */
	for (int i = 0; i < SESSION_LOGIN_FREE + 3; i++)
		session_limit_fail(l, "1.2.3.5", t);
	CHECK(session_limit_check(l, "1.2.3.5", t + 5) > 0);
	CHECK(session_limit_check(l, "1.2.3.5", t + SESSION_LOGIN_FORGET_S) ==
	      0);
	/* Many addresses failing together: each loses its free tries,
	 * and an address without failures is never refused. */
	t += 10000;
	for (int i = 0; i < SESSION_LOGIN_GLOBAL_MAX; i++) {
		snprintf(addr, sizeof(addr), "10.0.%d.%d", i / 250, i % 250);
		CHECK(session_limit_check(l, addr, t) == 0);
		session_limit_fail(l, addr, t);
	}
	CHECK(session_limit_check(l, "10.0.0.1", t) == SESSION_LOGIN_DELAY_MIN);
	CHECK(session_limit_check(l, "9.9.9.9", t + 1) == 0);
	CHECK(session_limit_check(l, "10.0.0.1", t + 60) == 0);
	/* More addresses than slots: bounded, and counting goes on. */
	for (int i = 0; i < SESSION_LIMIT_SLOTS_MAX * 2; i++) {
		snprintf(addr, sizeof(addr), "10.1.%d.%d", i / 250, i % 250);
		session_limit_fail(l, addr, t + 120 + i / 100);
	}
	for (int i = 0; i < SESSION_LOGIN_FREE + 1; i++)
		session_limit_fail(l, "7.7.7.7", t + 200);
	CHECK(session_limit_check(l, "7.7.7.7", t + 200) > 0);
	/* Hashing slots. */
	CHECK(session_hash_enter(l));
	CHECK(session_hash_enter(l));
	CHECK(!session_hash_enter(l));
	session_hash_leave(l);
	CHECK(session_hash_enter(l));
	session_limiter_release(l);
	free(l);
}

static void
console_host(void)
{
	const char *ok[] = {"console.localhost", "console.localhost:8080",
	                    "CONSOLE.LocalHost:80", "console.localhost:65535"};
	const char *bad[] = {"console.localhost:",
	                     "console.localhost:0",
	                     "console.localhost:65536",
	                     "console.localhost:123456",
	                     "console.localhost:80a",
	                     "console.localhost.evil.com",
	                     "evil.console.localhost",
	                     "xconsole.localhost",
	                     "console.localhostx",
	                     "console.",
	                     "",
	                     "s-01arz3ndektsv4rrffq69g5fav-3000.preview."
	                     "localhost"};

	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++)
		CHECK(console_host_match("localhost", ok[i], strlen(ok[i])));
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		CHECK(!console_host_match("localhost", bad[i], strlen(bad[i])));
	CHECK(console_host_match("example.com", "console.example.com:443", 23));
	CHECK(!console_host_match("", "console.", 8));
	/* len, not the NUL, bounds it. */
	CHECK(console_host_match("localhost", "console.localhost:80xx", 20));
}

static void
store_sessions(void)
{
	struct store *s = store_fixture_open();
	struct store_session ss = {0}, got;
	char hash[VAULT_PWHASH_LEN];
	int64_t now = clock_now();

	if (s == NULL) {
		CHECK(0);
		return;
	}
	CHECK(store_console_password(s, hash, sizeof(hash)) == STORE_NOT_FOUND);
	CHECK(store_console_password_init(s, "h1") == 0);
	CHECK(store_console_password_init(s, "h2") == STORE_CONFLICT);
	CHECK(store_console_password(s, hash, sizeof(hash)) == 0);
	CHECK_STR(hash, "h1");
	snprintf(ss.csrf, sizeof(ss.csrf), "c1");
	ss.created_at = ss.renewed_at = now;
	ss.expires_at = now + 100;
	CHECK(store_session_add(s, "a", &ss) == 0);
	CHECK(store_session_add(s, "b", &ss) == 0);
	ss.expires_at = now - 1;
	CHECK(store_session_add(s, "old", &ss) == 0);
	CHECK(store_session_get(s, "a", now, &got) == 0);
	CHECK_STR(got.csrf, "c1");
	CHECK(store_session_get(s, "old", now, &got) == STORE_NOT_FOUND);
	CHECK(store_session_get(s, "a", now + 100, &got) == STORE_NOT_FOUND);
	ss.expires_at = now + 100;
	CHECK(store_session_add(s, "new", &ss) == 0);
	CHECK(store_session_renew(s, "old", now, now + 500) == STORE_NOT_FOUND);
	CHECK(store_session_renew(s, "a", now, now + 500) == 0);
	CHECK(store_session_get(s, "a", now + 200, &got) == 0);
	CHECK(got.expires_at == now + 500);
	CHECK(store_console_password_change(s, "h3", "a") == 0);
	CHECK(store_session_get(s, "a", now, &got) == 0);
	CHECK(store_session_get(s, "b", now, &got) == STORE_NOT_FOUND);
	CHECK(store_console_password(s, hash, sizeof(hash)) == 0);
	CHECK_STR(hash, "h3");
	CHECK(store_session_end(s, "a") == 0);
	CHECK(store_session_get(s, "a", now, &got) == STORE_NOT_FOUND);
	CHECK(store_session_add(s, "c", &ss) == 0);
	CHECK(store_session_end(s, NULL) == 0);
	CHECK(store_session_get(s, "c", now, &got) == STORE_NOT_FOUND);
	store_fixture_close(s);
}

static void
password_hash(void)
{
	char h[VAULT_PWHASH_LEN];

	CHECK(vault_init() == 0);
	CHECK(vault_pwhash("correct horse", 13, h) == 0);
	CHECK(strncmp(h, "$argon2id$", 10) == 0);
	CHECK(vault_pwverify(h, "correct horse", 13));
	CHECK(!vault_pwverify(h, "correct horsf", 13));
	CHECK(!vault_pwverify(h, "correct hors", 12));
	CHECK(!vault_pwverify("garbage", "x", 1));
}

static const struct unit_test tests[] = {
    {"every session cookie is found, exactly, within its cap", cookie_parsing},
    {"the Origin must be the console's for the request's Host", origin_check},
    {"the client address: X-Forwarded-For's last hop from loopback only",
     client_address},
    {"setup codes: 16 of 32 symbols, typed loosely, compared exactly",
     setup_code_format},
    {"the Set-Cookie line and its flags", set_cookie_line},
    {"the login rate limit: per address, global, bounded", rate_limiter},
    {"console.<domain> with any port, nothing else", console_host},
    {"store: one password, sessions expire, a change ends the others",
     store_sessions},
    {"argon2id password hashes", password_hash},
};

int
main(void)
{
	return UNIT_RUN("session", tests);
}
