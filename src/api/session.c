/*
 * Console sessions: the parts that need no request.  Cookies, the Origin
 * check and the setup code are parsed here by small pure functions with
 * hard caps on what they read (hostile input: a Cookie header over
 * SESSION_COOKIE_MAX_BYTES is not looked at).  Secrets are compared in
 * constant time (vault_equal).
 *
 * A Cookie header may hold several session cookies: a page of another
 * host of the same parent domain (a preview, on a real domain) can set
 * one for the parent domain, with a longer path so that it comes first.
 * So every well-formed one is handed out in turn (session_cookie_next)
 * and the caller takes the one the store knows.  Over HTTPS the cookie
 * is "__Host-sbx_session": Secure, Path=/, no Domain, which the browser
 * lets no other host set or overwrite.
 *
 * The login rate limit counts failures (wrong passwords, wrong setup
 * codes) per client address and makes a failing address wait, doubling
 * (session.h).  It never refuses an address without failures: a limit
 * on all addresses together (the old design, a fixed window for
 * everyone) let strangers keep the operator out, the right password
 * included.  Many addresses guessing together only lose their free
 * tries.  The table of addresses is fixed; when it is full, the slot
 * whose last failure is the oldest is reused, so memory stays bounded.
 * Password hashing (argon2id, 64 MiB
 * each) is capped at SESSION_HASHING_MAX at once, so a burst of logins
 * cannot take the host's memory.
 *
 * The setup code is 16 symbols of 32 (80 bits), without the look-alike
 * I, O, 0 and 1, shown in groups of four (its file: setupcode.c).
 * Nothing here touches the store or the disk, so the fuzz target runs
 * the parsers alone (tests/fuzz/fuzz_session.c).
 */
#include "api/session.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char code_alphabet[] = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

_Static_assert(sizeof(code_alphabet) - 1 == 32, "32 symbols: 5 bits each");

/* --- pure parts ---------------------------------------------------------- */

static bool
b64url_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '-' || ch == '_';
}

/* Whether the cookie pair p (n bytes) is name=<a well-formed token>;
 * the token in out when it is. */
static bool
cookie_pair(const char *p, size_t n, const char *name,
            char out[SESSION_TOKEN_LEN + 1])
{
	size_t nlen = strlen(name), vlen;
	const char *v;

	if (n <= nlen || strncmp(p, name, nlen) != 0 || p[nlen] != '=')
		return false;
	v = p + nlen + 1;
	vlen = n - nlen - 1;
	while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
		vlen--;
	if (vlen != SESSION_TOKEN_LEN)
		return false;
	for (size_t i = 0; i < vlen; i++)
		if (!b64url_char(v[i]))
			return false;
	memcpy(out, v, vlen);
	out[vlen] = '\0';
	return true;
}

bool
session_cookie_next(const char *header, const char *name, size_t *pos,
                    char out[SESSION_TOKEN_LEN + 1])
{
	size_t len;

	if (header == NULL ||
	    (len = strnlen(header, SESSION_COOKIE_MAX_BYTES + 1)) >
	        SESSION_COOKIE_MAX_BYTES)
		return false;
	while (*pos < len) {
		const char *p = header + *pos, *end = strchr(p, ';');
		size_t n;

		*pos = end ? (size_t)(end - header) + 1 : len;
		while (*p == ' ' || *p == '\t')
			p++;
		n = end ? (size_t)(end - p) : strlen(p);
		if (cookie_pair(p, n, name, out))
			return true;
	}
	return false;
}

bool
session_origin_ok(const char *origin, const char *host, bool https)
{
	const char *scheme = https ? "https://" : "http://";
	size_t slen = strlen(scheme), hlen;

	if (origin == NULL)
		return true;
	if (host == NULL || *host == '\0' ||
	    strnlen(origin, SESSION_HEADER_MAX_BYTES + 1) >
	        SESSION_HEADER_MAX_BYTES)
		return false;
	hlen = strlen(host);
	/* Origins are case-insensitive in scheme and host. */
	return strlen(origin) == slen + hlen &&
	       strncasecmp(origin, scheme, slen) == 0 &&
	       strncasecmp(origin + slen, host, hlen) == 0;
}

static bool
is_ip(const char *s)
{
	unsigned char a[16];

	return inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1;
}

static void client_addr(const char *peer, bool peer_loopback, const char *xff,
                        char *out, size_t len);

/* An IPv6 address counts by its /64 (what one host is routinely given),
 * as the edge counts connections. */
static void
limit_key(const char *addr, char *out, size_t len)
{
	unsigned char a[16];
	char text[INET6_ADDRSTRLEN];

	if (inet_pton(AF_INET6, addr, a) != 1 ||
	    IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)a)) {
		snprintf(out, len, "%s", addr);
		return;
	}
	memset(a + 8, 0, 8);
	if (inet_ntop(AF_INET6, a, text, sizeof(text)) == NULL)
		snprintf(out, len, "%s", addr);
	else
		snprintf(out, len, "%s/64", text);
}

void
session_client_addr(const char *peer, bool peer_loopback, const char *xff,
                    char *out, size_t len)
{
	char addr[64];

	client_addr(peer, peer_loopback, xff, addr, sizeof(addr));
	limit_key(addr, out, len);
}

static void
client_addr(const char *peer, bool peer_loopback, const char *xff, char *out,
            size_t len)
{
	char hop[64];
	const char *last;
	size_t n;

	snprintf(out, len, "%s", peer ? peer : "unknown");
	if (!peer_loopback || xff == NULL ||
	    strnlen(xff, SESSION_HEADER_MAX_BYTES + 1) >
	        SESSION_HEADER_MAX_BYTES)
		return;
	last = strrchr(xff, ',');
	last = last ? last + 1 : xff;
	while (*last == ' ' || *last == '\t')
		last++;
	n = strlen(last);
	while (n && (last[n - 1] == ' ' || last[n - 1] == '\t'))
		n--;
	if (n == 0 || n >= sizeof(hop))
		return;
	memcpy(hop, last, n);
	hop[n] = '\0';
	if (is_ip(hop))
		snprintf(out, len, "%s", hop);
}

void
session_code_new(char out[SESSION_CODE_LEN + 1])
{
	size_t o = 0;

	for (int i = 0; i < SESSION_CODE_CHARS; i++) {
		if (i && i % 4 == 0)
			out[o++] = '-';
		out[o++] = code_alphabet[vault_random_below(32)];
	}
	out[o] = '\0';
}

bool
session_code_normalize(const char *in, char out[SESSION_CODE_CHARS + 1])
{
	size_t o = 0;

	if (in == NULL)
		return false;
	for (size_t i = 0; i < 64 && in[i]; i++) {
		char ch = (char)toupper((unsigned char)in[i]);
		if (ch == '-' || ch == ' ')
			continue;
		if (o == SESSION_CODE_CHARS || ch == '\0' ||
		    strchr(code_alphabet, ch) == NULL)
			return false;
		out[o++] = ch;
	}
	out[o] = '\0';
	return o == SESSION_CODE_CHARS && strlen(in) < 64;
}

bool
session_code_equal(const char *a, const char *b)
{
	char x[SESSION_CODE_CHARS + 1], y[SESSION_CODE_CHARS + 1];

	if (!session_code_normalize(a, x) || !session_code_normalize(b, y))
		return false;
	return vault_equal(x, y, SESSION_CODE_CHARS);
}

void
session_set_cookie(char *out, size_t len, const char *token, bool secure)
{
	snprintf(
	    out, len, "%s=%s; HttpOnly; SameSite=Strict; Path=/; Max-Age=%d%s",
	    secure ? SESSION_COOKIE_HOST : SESSION_COOKIE, token ? token : "",
	    token ? SESSION_TTL_SECONDS : 0, secure ? "; Secure" : "");
}

/* --- the login rate limit ----------------------------------------------- */

void
session_limiter_init(struct session_limiter *l)
{
	memset(l, 0, sizeof(*l));
	pthread_mutex_init(&l->mu, NULL);
}

void
session_limiter_release(struct session_limiter *l)
{
	pthread_mutex_destroy(&l->mu);
}

/* addr's slot; with make, a free one or the one whose last failure is
 * the oldest.  Under l->mu. */
static struct session_slot *
slot_find(struct session_limiter *l, const char *addr, int64_t now, bool make)
{
	struct session_slot *old = NULL;
	int64_t oldest = INT64_MAX;

	for (int i = 0; i < SESSION_LIMIT_SLOTS_MAX; i++) {
		struct session_slot *s = &l->slot[i];
		int64_t last = s->addr[0] ? s->last : INT64_MIN;
		if (s->addr[0] && strcmp(s->addr, addr) == 0) {
			if (now - s->last >= SESSION_LOGIN_FORGET_S)
				s->fails = 0;
			return s;
		}
		if (make && last < oldest) {
			old = s;
			oldest = last;
		}
	}
	if (old) {
		snprintf(old->addr, sizeof(old->addr), "%s", addr);
		old->last = now;
		old->fails = 0;
	}
	return old;
}

/* The window of every address's failures, under l->mu. */
static void
global_window(struct session_limiter *l, int64_t now)
{
	if (now - l->gstart >= SESSION_LOGIN_WINDOW_S) {
		l->gstart = now;
		l->gfails = 0;
	}
}

int
session_limit_check(struct session_limiter *l, const char *addr, int64_t now)
{
	struct session_slot *s;
	int free_fails, over, delay = 0, wait = 0;

	pthread_mutex_lock(&l->mu);
	global_window(l, now);
	free_fails =
	    l->gfails >= SESSION_LOGIN_GLOBAL_MAX ? 1 : SESSION_LOGIN_FREE;
	s = slot_find(l, addr, now, false);
	if (s && s->fails >= free_fails) {
		over = s->fails - free_fails;
		/* From SESSION_LOGIN_DELAY_MIN: both times are whole
		 * seconds, so a wait of 1 s could end at once. */
		delay = over >= 4 ? SESSION_LOGIN_DELAY_MAX
		                  : SESSION_LOGIN_DELAY_MIN << over;
		if (delay > SESSION_LOGIN_DELAY_MAX)
			delay = SESSION_LOGIN_DELAY_MAX;
		wait = (int)(s->last + delay - now);
	}
	pthread_mutex_unlock(&l->mu);
	return wait > 0 ? wait : 0;
}

void
session_limit_fail(struct session_limiter *l, const char *addr, int64_t now)
{
	struct session_slot *s;

	pthread_mutex_lock(&l->mu);
	global_window(l, now);
	l->gfails++;
	s = slot_find(l, addr, now, true);
	if (s) {
		s->last = now;
		s->fails++;
	}
	pthread_mutex_unlock(&l->mu);
}

void
session_limit_clear(struct session_limiter *l, const char *addr)
{
	struct session_slot *s;

	pthread_mutex_lock(&l->mu);
	s = slot_find(l, addr, 0, false);
	if (s)
		memset(s, 0, sizeof(*s));
	pthread_mutex_unlock(&l->mu);
}

bool
session_hash_enter(struct session_limiter *l)
{
	bool ok;

	pthread_mutex_lock(&l->mu);
	ok = l->hashing < SESSION_HASHING_MAX;
	if (ok)
		l->hashing++;
	pthread_mutex_unlock(&l->mu);
	return ok;
}

void
session_hash_leave(struct session_limiter *l)
{
	pthread_mutex_lock(&l->mu);
	l->hashing--;
	pthread_mutex_unlock(&l->mu);
}
