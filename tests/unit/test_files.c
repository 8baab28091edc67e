/* The files API's entity tag lists (If-Match, If-None-Match). */
#include "api/api.h"
#include "unit.h"

#define T "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"

static void
strong_and_weak(void)
{
	CHECK(api_etag_listed("\"" T "\"", T, false) == 1);
	CHECK(api_etag_listed("  \"" T "\"  ", T, false) == 1);
	CHECK(api_etag_listed("\"x\", \"" T "\"", T, false) == 1);
	CHECK(api_etag_listed("\"x\",\"y\"", T, false) == 0);
	CHECK(api_etag_listed("\"" T "x\"", T, false) == 0);
	CHECK(api_etag_listed("\"" T "\"", T "0", false) == 0);
	/* If-Match compares strongly: a weak tag never matches */
	CHECK(api_etag_listed("W/\"" T "\"", T, false) == 0);
	CHECK(api_etag_listed("W/\"" T "\"", T, true) == 1);
	CHECK(api_etag_listed("*", T, false) == 1);
	CHECK(api_etag_listed(" * ", "", false) == 1);
}

static void
malformed(void)
{
	CHECK(api_etag_listed("", T, false) == -1);
	CHECK(api_etag_listed("   ", T, false) == -1);
	CHECK(api_etag_listed(",", T, false) == -1);
	CHECK(api_etag_listed(T, T, false) == -1); /* no quotes */
	CHECK(api_etag_listed("\"" T, T, false) == -1);
	CHECK(api_etag_listed("\"a\" \"b\"", T, false) == -1);
	CHECK(api_etag_listed("*, \"a\"", T, false) == -1);
	CHECK(api_etag_listed("w/\"a\"", T, false) == -1);
	CHECK(api_etag_listed("\"a b\"", T, false) == -1);
	CHECK(api_etag_listed("\"a\x7f\"", T, false) == -1);
}

static const struct unit_test tests[] = {
    {"strong and weak comparison", strong_and_weak},
    {"malformed lists", malformed},
};

int
main(void)
{
	return UNIT_RUN("files", tests);
}
