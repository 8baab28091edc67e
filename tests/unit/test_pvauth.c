/*
 * Unit tests of private previews' core (src/preview/pvauth.c): the view the
 * edge asks for, the cookie's format and checks, the one-time codes.  A
 * real store (sealed, so the cookie key is derived from its vault) and
 * a real routing table.
 */
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "preview/pvauth.h"
#include "sandbox/routes.h"
#include "lib/clock.h"
#include "store_fixture.h"
#include "unit.h"

static struct config cfg;
static struct core c;
static struct sandbox sb;

static void
setup(const char *default_visibility)
{
	memset(&cfg, 0, sizeof(cfg));
	memset(&c, 0, sizeof(c));
	snprintf(cfg.preview_visibility, sizeof(cfg.preview_visibility), "%s",
	         default_visibility);
	c.cfg = &cfg;
	c.store = store_fixture_open_sealed();
	c.routes = routes_new();
	CHECK(c.store != NULL && c.routes != NULL);
	CHECK(pvauth_init(&c) == 0);
	memset(&sb, 0, sizeof(sb));
	ulid_new(sb.id);
	ulid_new(sb.app_id);
	sb.status = SANDBOX_RUNNING;
	sb.ports[0] = 3000;
	sb.nports = 1;
	CHECK(routes_put(c.routes, &sb) == 0);
}

static void
teardown(void)
{
	pvauth_release(&c);
	routes_free(c.routes);
	store_fixture_close(c.store);
}

static void
view_follows_the_table(void)
{
	struct pvauth_view v;
	uint64_t g;

	setup("public");
	CHECK(!pvauth_view(&c, "01ARZ3NDEKTSV4RRFFQ69G5FAV", &v));
	CHECK(pvauth_view(&c, sb.id, &v));
	CHECK_STR(v.app_id, sb.app_id);
	CHECK(!v.private_); /* not in the table yet: the default */
	g = pvauth_generation(&c);
	pvauth_put(&c, sb.app_id, "private", 3);
	CHECK(pvauth_generation(&c) > g);
	CHECK(pvauth_view(&c, sb.id, &v) && v.private_ && v.epoch == 3);
	pvauth_put(&c, sb.app_id, "", 4);
	CHECK(pvauth_view(&c, sb.id, &v) && !v.private_ && v.epoch == 4);
	g = pvauth_generation(&c);
	pvauth_drop(&c, sb.app_id);
	CHECK(pvauth_generation(&c) > g);
	CHECK(pvauth_view(&c, sb.id, &v) && !v.private_ && v.epoch == 0);
	CHECK_STR(pvauth_effective(&c, ""), "public");
	CHECK_STR(pvauth_effective(&c, "private"), "private");
	CHECK(pvauth_visibility_ok("") && pvauth_visibility_ok("public") &&
	      pvauth_visibility_ok("private"));
	CHECK(!pvauth_visibility_ok("Private") && !pvauth_visibility_ok("x"));
	teardown();

	setup("private");
	CHECK(pvauth_view(&c, sb.id, &v) && v.private_);
	pvauth_put(&c, sb.app_id, "public", 1);
	CHECK(pvauth_view(&c, sb.id, &v) && !v.private_);
	pvauth_put(&c, sb.app_id, "", 2);
	CHECK(pvauth_view(&c, sb.id, &v) && v.private_);
	CHECK_STR(pvauth_effective(&c, ""), "private");
	teardown();
}

static void
cookie_checks(void)
{
	char ck[PVAUTH_COOKIE_MAX], bad[PVAUTH_COOKIE_MAX + 8],
	    other[ULID_LEN + 1];
	int64_t now = clock_now(), exp = now + 600;
	size_t n;

	setup("public");
	pvauth_cookie(&c, sb.app_id, 7, exp, ck);
	n = strlen(ck);
	CHECK(n < PVAUTH_COOKIE_MAX - 1);
	CHECK(strncmp(ck, sb.app_id, ULID_LEN) == 0 && ck[ULID_LEN] == '.');
	CHECK(pvauth_cookie_ok(&c, sb.app_id, 7, ck, n, now, NULL));
	/* another app, another epoch, after the expiry */
	ulid_new(other);
	CHECK(!pvauth_cookie_ok(&c, other, 7, ck, n, now, NULL));
	CHECK(!pvauth_cookie_ok(&c, sb.app_id, 8, ck, n, now, NULL));
	CHECK(!pvauth_cookie_ok(&c, sb.app_id, 7, ck, n, exp, NULL));
	/* a flipped MAC byte, cut short, longer, a moved expiry */
	memcpy(bad, ck, n + 1);
	bad[n - 1] = bad[n - 1] == 'A' ? 'B' : 'A';
	CHECK(!pvauth_cookie_ok(&c, sb.app_id, 7, bad, n, now, NULL));
	CHECK(!pvauth_cookie_ok(&c, sb.app_id, 7, ck, n - 1, now, NULL));
	snprintf(bad, sizeof(bad), "%sA", ck);
	CHECK(!pvauth_cookie_ok(&c, sb.app_id, 7, bad, n + 1, now, NULL));
	snprintf(bad, sizeof(bad), "%s.7.%lld.%s", sb.app_id,
	         (long long)exp + 1000, strrchr(ck, '.') + 1);
	CHECK(!pvauth_cookie_ok(&c, sb.app_id, 7, bad, strlen(bad), now, NULL));
	snprintf(bad, sizeof(bad), "%s.7.99999999999999999999999.%s", sb.app_id,
	         strrchr(ck, '.') + 1);
	CHECK(!pvauth_cookie_ok(&c, sb.app_id, 7, bad, strlen(bad), now, NULL));
	CHECK(!pvauth_cookie_ok(&c, sb.app_id, 7, "", 0, now, NULL));
	CHECK(!pvauth_cookie_ok(&c, sb.app_id, 7, sb.app_id, ULID_LEN, now,
	                        NULL));
	teardown();

	/* The key is the vault's: another store (another key) refuses it. */
	setup("public");
	CHECK(!pvauth_cookie_ok(&c, sb.app_id, 7, ck, n, now, NULL));
	teardown();
}

static void
codes_are_one_time_and_app_scoped(void)
{
	char code[PVAUTH_CODE_LEN + 1], code2[PVAUTH_CODE_LEN + 1];
	char other[ULID_LEN + 1];
	int64_t now = clock_now(), exp = 0;

	setup("public");
	ulid_new(other);
	CHECK(pvauth_mint(&c, "t", sb.app_id, now + 60, code) == 0);
	CHECK(strlen(code) == PVAUTH_CODE_LEN);
	CHECK(!pvauth_redeem(&c, code, PVAUTH_CODE_LEN, other, &exp));
	CHECK(!pvauth_redeem(&c, code, PVAUTH_CODE_LEN - 1, sb.app_id, &exp));
	CHECK(pvauth_redeem(&c, code, PVAUTH_CODE_LEN, sb.app_id, &exp));
	CHECK(exp == now + 60);
	CHECK(!pvauth_redeem(&c, code, PVAUTH_CODE_LEN, sb.app_id, &exp));
	/* expired: refused, and gone */
	CHECK(pvauth_mint(&c, "t", sb.app_id, now - 1, code) == 0);
	CHECK(!pvauth_redeem(&c, code, PVAUTH_CODE_LEN, sb.app_id, &exp));
	/* forgotten with the app's epoch */
	CHECK(pvauth_mint(&c, "t", sb.app_id, now + 60, code) == 0);
	CHECK(pvauth_mint(&c, "t", other, now + 60, code2) == 0);
	pvauth_forget_codes(&c, sb.app_id);
	CHECK(!pvauth_redeem(&c, code, PVAUTH_CODE_LEN, sb.app_id, &exp));
	CHECK(pvauth_redeem(&c, code2, PVAUTH_CODE_LEN, other, &exp));
	teardown();
}

/* A tenant's quota: its own oldest go, another tenant's stay. */
static void
codes_have_a_quota_per_tenant(void)
{
	char first[PVAUTH_CODE_LEN + 1], theirs[PVAUTH_CODE_LEN + 1];
	char code[PVAUTH_CODE_LEN + 1], second[PVAUTH_CODE_LEN + 1];
	char tenant[16];
	int64_t now = clock_now(), exp = 0;
	int made = 0;

	setup("public");
	CHECK(pvauth_mint(&c, "b", sb.app_id, now + 60, theirs) == 0);
	CHECK(pvauth_mint(&c, "a", sb.app_id, now + 60, first) == 0);
	CHECK(pvauth_mint(&c, "a", sb.app_id, now + 60, second) == 0);
	for (int i = 0; i < PVAUTH_CODES_TENANT; i++)
		made += pvauth_mint(&c, "a", sb.app_id, now + 60, code) == 0;
	CHECK(made == PVAUTH_CODES_TENANT);
	/* a's two oldest made room; b's and a's newest still open */
	CHECK(!pvauth_redeem(&c, first, PVAUTH_CODE_LEN, sb.app_id, &exp));
	CHECK(!pvauth_redeem(&c, second, PVAUTH_CODE_LEN, sb.app_id, &exp));
	CHECK(pvauth_redeem(&c, code, PVAUTH_CODE_LEN, sb.app_id, &exp));
	CHECK(pvauth_redeem(&c, theirs, PVAUTH_CODE_LEN, sb.app_id, &exp));
	/* the whole table is bounded: many tenants fill it, then 503 */
	made = 0;
	for (int t = 0; made < PVAUTH_CODES_MAX + 1; t++) {
		snprintf(tenant, sizeof(tenant), "t%d", t);
		for (int i = 0; i < PVAUTH_CODES_TENANT; i++) {
			if (pvauth_mint(&c, tenant, sb.app_id, now + 60, code) <
			    0)
				goto full;
			made++;
		}
	}
full:
	CHECK(made == PVAUTH_CODES_MAX - PVAUTH_CODES_TENANT + 1);
	/* a tenant at its quota still mints: its own oldest make room */
	CHECK(pvauth_mint(&c, "t0", sb.app_id, now + 60, code) == 0);
	teardown();
}

int
main(void)
{
	static const struct unit_test tests[] = {
	    {"view: the table, the default, generations",
	     view_follows_the_table},
	    {"cookie: app, epoch, expiry and MAC checked", cookie_checks},
	    {"codes: once, for their app", codes_are_one_time_and_app_scoped},
	    {"codes: a quota per tenant, its own oldest go first",
	     codes_have_a_quota_per_tenant},
	};

	vault_init();
	return UNIT_RUN("pvauth", tests);
}
