/*
 * libFuzzer target: what a preview's visitor sends for a private app
 * (preview/pvauth.c): the sbx_preview cookie's value and a link's
 * one-time code.  A real store (in a new directory under /tmp) and a
 * real cookie key, set up once.  No input is a valid code (none was
 * minted), no input is a valid cookie but the one minted for the app,
 * byte for byte; that cookie with any byte changed (the input picks
 * which and to what) or cut short fails, and so does the app's cookie
 * for another app or another epoch.  Nothing may crash, leak or read
 * out of bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/store_fixture.h"
#include "config/config.h"
#include "lib/clock.h"
#include "lib/ulid.h"
#include "preview/pvauth.h"
#include "sandbox/routes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct config cfg;
static struct core c;
static char app[ULID_LEN + 1], other[ULID_LEN + 1];
static char cookie[PVAUTH_COOKIE_MAX];
static int64_t now;

static void
cleanup(void)
{
	pvauth_release(&c);
	routes_free(c.routes);
	store_fixture_close(c.store);
}

static void
setup(void)
{
	snprintf(cfg.preview_visibility, sizeof(cfg.preview_visibility),
	         "private");
	c.cfg = &cfg;
	if (vault_init() < 0)
		__builtin_trap();
	c.store = store_fixture_open_sealed();
	c.routes = routes_new();
	if (c.store == NULL || c.routes == NULL || pvauth_init(&c) < 0)
		__builtin_trap();
	atexit(cleanup);
	ulid_new(app);
	ulid_new(other);
	pvauth_put(&c, app, "private", 7);
	now = clock_now();
	pvauth_cookie(&c, app, 7, now + 3600, cookie);
	if (!pvauth_cookie_ok(&c, app, 7, cookie, strlen(cookie), now, NULL))
		__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char v[PVAUTH_COOKIE_MAX];
	int64_t exp;
	size_t n = strlen(cookie), at;
	char *in;

	if (c.store == NULL)
		setup();
	in = malloc(size ? size : 1);
	memcpy(in, data, size);
	if (pvauth_redeem(&c, in, size, app, &exp))
		__builtin_trap();
	if ((size != n || memcmp(in, cookie, n) != 0) &&
	    pvauth_cookie_ok(&c, app, 7, in, size, now, &exp))
		__builtin_trap();
	free(in);
	if (pvauth_cookie_ok(&c, other, 7, cookie, n, now, NULL) ||
	    pvauth_cookie_ok(&c, app, 8, cookie, n, now, NULL))
		__builtin_trap();
	if (size >= 2) {
		memcpy(v, cookie, n + 1);
		at = data[0] % n;
		if (v[at] != (char)data[1]) {
			v[at] = (char)data[1];
			if (pvauth_cookie_ok(&c, app, 7, v, n, now, NULL))
				__builtin_trap();
		}
		if (pvauth_cookie_ok(&c, app, 7, cookie, at, now, NULL))
			__builtin_trap();
	}
	return 0;
}
