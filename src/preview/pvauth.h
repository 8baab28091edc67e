/*
 * pvauth: private previews.  Which apps' previews are private, the
 * one-time codes that let a viewer in, and the cookies that keep them in
 * (docs/design.md, "Private previews").
 *
 * The edge asks on every request for a preview host, so nothing here
 * touches the store after pvauth_init: the apps' visibility and epoch
 * live in a table in memory (its own read-write lock, a hash lookup and
 * a copy), which the API updates after it stored a change.  A cookie is
 * "<app id>.<epoch>.<expiry>.<HMAC>", the HMAC-SHA-256 under a key
 * derived from the sealing key (vault_derive), checked in constant
 * time: no state per viewer.  Bumping an app's epoch revokes every
 * cookie of it.  Codes (exchanged once for a cookie on the app's own
 * host) are kept only in memory, as their SHA-256, and die with the
 * daemon: a restart invalidates links not yet opened, never replays one.
 *
 * Every function may be called from any thread.
 */
#ifndef PREVIEW_PVAUTH_H
#define PREVIEW_PVAUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox/core.h"
#include "lib/ulid.h"

#define PVAUTH_COOKIE       "sbx_preview"
#define PVAUTH_PATH         "/__sandboxd/" /* the edge's own, never the app's */
#define PVAUTH_AUTH_PATH    "/__sandboxd/auth"
#define PVAUTH_CODES_MAX    4096   /* codes not yet redeemed, at once */
#define PVAUTH_CODES_TENANT 256    /* of those, one tenant's */
#define PVAUTH_TTL_DEFAULT  86400  /* a link's life when none is asked */
#define PVAUTH_TTL_MIN      10     /* shortest link */
#define PVAUTH_TTL_MAX      604800 /* longest link: a week */
#define PVAUTH_CODE_LEN     43     /* base64url of 32 random bytes */
#define PVAUTH_COOKIE_MAX   160    /* a cookie's value and its NUL */
#define PVAUTH_PATH_MAX     1000   /* a link's landing path (next=) */
#define PVAUTH_APPS_BUCKETS 1024

/* Reads every app's visibility and derives the cookie key (at start). */
int pvauth_init(struct core *c);
void pvauth_release(struct core *c);

/* "public" or "private": the app's own value, or the instance default
 * (SANDBOXD_PREVIEW_VISIBILITY) when it has none (""). */
const char *pvauth_effective(const struct core *c, const char *visibility);
/* Whether v is "", "public" or "private". */
bool pvauth_visibility_ok(const char *v);

/* The app's row changed (create, PATCH) or is gone. */
void pvauth_put(struct core *c, const char *app_id, const char *visibility,
                int64_t epoch);
void pvauth_drop(struct core *c, const char *app_id);

/*
 * The edge's question for a sandbox's host: false when there is no such
 * sandbox; else its app, whether its preview is private and the epoch
 * its cookies must carry.
 */
struct pvauth_view {
	char app_id[ULID_LEN + 1];
	bool private_;
	int64_t epoch;
};
bool pvauth_view(const struct core *c, const char *sandbox_id,
                 struct pvauth_view *out);
/* The epoch app_id's cookies must carry (0: not in the table). */
int64_t pvauth_app_epoch(const struct core *c, const char *app_id);
/* Grows with every change of any app's visibility or epoch. */
uint64_t pvauth_generation(const struct core *c);

/*
 * A one-time code for app_id of tenant owner, valid until expires_at
 * (Unix seconds), which is also when the cookie it gives ends.  When
 * the tenant has PVAUTH_CODES_TENANT codes waiting, its own oldest one
 * is forgotten to make room; another tenant's never are.  0, or -1 when
 * PVAUTH_CODES_MAX codes of all tenants wait already.
 */
int pvauth_mint(struct core *c, const char *owner, const char *app_id,
                int64_t expires_at, char code[PVAUTH_CODE_LEN + 1]);
/* Takes the code (once) when it is app_id's and not expired. */
bool pvauth_redeem(struct core *c, const char *code, size_t len,
                   const char *app_id, int64_t *expires_at);
/* Forgets every code of app_id (its epoch was bumped). */
void pvauth_forget_codes(struct core *c, const char *app_id);

/* The cookie value for app_id at epoch until expires_at. */
void pvauth_cookie(struct core *c, const char *app_id, int64_t epoch,
                   int64_t expires_at, char out[PVAUTH_COOKIE_MAX]);
/* Whether a cookie value is valid now for app_id at epoch; its expiry
 * in *expires_at (NULL: not wanted). */
bool pvauth_cookie_ok(struct core *c, const char *app_id, int64_t epoch,
                      const char *v, size_t len, int64_t now,
                      int64_t *expires_at);

#endif
