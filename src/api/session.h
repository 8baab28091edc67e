/*
 * Console sessions: the second way to authenticate to /v1, beside
 * bearer tokens.  A session belongs to the tenant "default" (an
 * operator).  The pure parts (cookie and header parsing, the Origin
 * check, the setup code's format, the login rate limiter) are here for
 * the unit tests; the handlers are in api.h's list.
 *
 * Threads: everything may be called from any API thread.  The limiter
 * has its own mutex, held for a table walk only, never while a
 * password is hashed.
 */
#ifndef API_SESSION_H
#define API_SESSION_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "vault/vault.h"

#define SESSION_COOKIE           "sbx_session"
#define SESSION_TOKEN_LEN        VAULT_B64URL_32_LEN /* 256 random bits */
#define SESSION_TTL_SECONDS      (30 * 86400)        /* sliding */
#define SESSION_RENEW_SECONDS    3600 /* renewed on use at most this often */
#define SESSION_PASSWORD_MIN     8    /* bytes */
#define SESSION_PASSWORD_MAX     1024 /* bytes */
#define SESSION_HEADER_MAX_BYTES 512  /* Origin, X-CSRF-Token, X-F-F hop */
#define SESSION_LOGIN_FREE       5    /* failures of an address before a wait */
#define SESSION_LOGIN_DELAY_MIN  4    /* s: the first wait */
#define SESSION_LOGIN_DELAY_MAX  30   /* s: the longest wait, doubling to it */
#define SESSION_LOGIN_FORGET_S   900  /* s without a failure: forgotten */
#define SESSION_LOGIN_GLOBAL_MAX 50   /* failures of all a window: pressure */
#define SESSION_LOGIN_WINDOW_S   60
#define SESSION_LIMIT_SLOTS_MAX  256 /* client addresses remembered */
#define SESSION_HASHING_MAX      2   /* passwords hashed at once */
#define SESSION_CODE_FILE        "console-setup-code"
#define SESSION_CODE_CHARS       16 /* 80 bits: 16 of 32 symbols */
#define SESSION_CODE_LEN         (SESSION_CODE_CHARS + 3) /* with dashes */
#define SESSION_SET_COOKIE_BYTES 256

/* A Cookie header: the edge's whole head may be cookies
 * (EDGE_MAX_HEADER_BYTES). */
#define SESSION_COOKIE_HOST      "__Host-sbx_session" /* over HTTPS */
#define SESSION_COOKIE_MAX_BYTES (16u << 10) /* a longer one is not read */
#define SESSION_COOKIES_MAX      32 /* session cookies looked up a request */

/* --- pure parts ---------------------------------------------------------- */

/*
 * The next token of a cookie named name (SESSION_COOKIE_HOST or
 * SESSION_COOKIE) in a Cookie header (NULL: none), from *pos on (0 at
 * first): true when a well-formed one (SESSION_TOKEN_LEN base64url
 * characters) is found, *pos then past it; malformed ones are skipped.
 * A header over SESSION_COOKIE_MAX_BYTES is not read.
 */
bool session_cookie_next(const char *header, const char *name, size_t *pos,
                         char out[SESSION_TOKEN_LEN + 1]);
/*
 * The CSRF Origin check: an absent Origin passes; else it must be
 * exactly "<scheme>://<host>" for the request's Host (https when the
 * request came over TLS, else http).  "null" and every other origin fail.
 */
bool session_origin_ok(const char *origin, const char *host, bool https);
/*
 * The client address the rate limit counts: the peer's, or, when the
 * peer is loopback (the edge, or the TLS proxy in front of it), the last
 * hop of X-Forwarded-For (what the edge wrote), if it is an IP address.
 * An IPv6 address counts by its /64 ("2001:db8::/64").
 */
void session_client_addr(const char *peer, bool peer_loopback, const char *xff,
                         char *out, size_t len);
/* A new setup code "ABCD-EFGH-JKLM-NPQR" (no I, O, 0, 1). */
void session_code_new(char out[SESSION_CODE_LEN + 1]);
/*
 * A typed code in canonical form (upper case, dashes and spaces
 * dropped): false when it cannot be one.
 */
bool session_code_normalize(const char *in, char out[SESSION_CODE_CHARS + 1]);
/* Constant-time equality of two codes as typed (normalized first). */
bool session_code_equal(const char *a, const char *b);
/* "sbx_session=…; HttpOnly; SameSite=Strict; Path=/; Max-Age=…", or
 * with secure "__Host-sbx_session=…; …; Secure"; token NULL clears the
 * cookie. */
void session_set_cookie(char *out, size_t len, const char *token, bool secure);

/* --- the login rate limit ----------------------------------------------- */

/*
 * Slows a source, never locks out a password: an address's failures
 * past SESSION_LOGIN_FREE make it wait 4, 8, 16 ... SESSION_LOGIN_DELAY_MAX
 * seconds after its last failure before its next try.  While all
 * addresses together failed SESSION_LOGIN_GLOBAL_MAX times in a window
 * (a guess spread over many addresses), an address waits from its
 * first failure.  An address with no failure is never refused, so the
 * operator signs in while strangers guess from elsewhere, and from the
 * strangers' own address after at most SESSION_LOGIN_DELAY_MAX.
 */
struct session_slot {
	char addr[48];
	int64_t last; /* its last failure, Unix seconds */
	int fails;
};

struct session_limiter {
	pthread_mutex_t mu;
	struct session_slot slot[SESSION_LIMIT_SLOTS_MAX];
	int64_t gstart;
	int gfails;
	int hashing; /* passwords being hashed now */
};

void session_limiter_init(struct session_limiter *l);
void session_limiter_release(struct session_limiter *l);
/* 0 when addr may try now, else the seconds to wait (Retry-After). */
int session_limit_check(struct session_limiter *l, const char *addr,
                        int64_t now);
void session_limit_fail(struct session_limiter *l, const char *addr,
                        int64_t now);
/* A success forgets addr's failures. */
void session_limit_clear(struct session_limiter *l, const char *addr);
/* A hashing slot (SESSION_HASHING_MAX): false when all are taken. */
bool session_hash_enter(struct session_limiter *l);
void session_hash_leave(struct session_limiter *l);

/* --- the setup code on disk --------------------------------------------- */

/*
 * At start: with no password set, makes <data>/console-setup-code (0600)
 * when missing and prints the code once ("Console setup code: …"); when
 * it exists, prints where to find it.  With a password, removes a
 * leftover file.  0, or -1 (logged).
 */
int session_code_init(struct store *st, const char *data_dir);
/*
 * `sandboxd setup-code`: prints the code (making one if no password is
 * set and none exists); with a password set, says so on stderr and
 * returns 1.
 */
int session_code_print(struct store *st, const char *data_dir);
/* The stored code; -1 when there is none. */
int session_code_read(const char *data_dir, char out[SESSION_CODE_LEN + 1]);

#endif
