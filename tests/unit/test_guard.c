/*
 * The cross-site walls of a write (api/guard.c): Origin, Sec-Fetch-Site
 * and the body's Content-Type, on bare heads.
 */
#include "api/guard.h"
#include "unit.h"

#define HOST "console.localhost:8080"

static enum guard_verdict
check(const char *method, const char *origin, const char *site,
      const char *ctype, bool body, bool raw)
{
	const struct guard_head h = {
	    .method = method,
	    .host = HOST,
	    .origin = origin,
	    .sec_fetch_site = site,
	    .ctype = ctype,
	    .has_body = body,
	    .raw_body = raw,
	};

	return guard_check(&h);
}

static void
reads_pass(void)
{
	CHECK(check("GET", "http://evil.example", "cross-site", "text/plain",
	            true, false) == GUARD_OK);
	CHECK(check("HEAD", "null", "same-site", NULL, false, false) ==
	      GUARD_OK);
	CHECK(!guard_writes("OPTIONS") && guard_writes("DELETE") &&
	      guard_writes("PATCH"));
}

static void
origins(void)
{
	const char *j = "application/json";

	/* The CLI and curl send neither header. */
	CHECK(check("POST", NULL, NULL, j, true, false) == GUARD_OK);
	CHECK(check("POST", "http://" HOST, "same-origin", j, true, false) ==
	      GUARD_OK);
	CHECK(check("POST", "http://evil.example", NULL, j, true, false) ==
	      GUARD_FOREIGN_ORIGIN);
	CHECK(check("DELETE", "null", NULL, NULL, false, false) ==
	      GUARD_FOREIGN_ORIGIN);
	CHECK(check("POST", "http://app.localhost:8080", NULL, j, true,
	            false) == GUARD_FOREIGN_ORIGIN);
	CHECK(check("POST", NULL, "cross-site", j, true, false) ==
	      GUARD_FOREIGN_SITE);
	/* A preview is the console's site on a real domain. */
	CHECK(check("POST", NULL, "same-site", j, true, false) ==
	      GUARD_FOREIGN_SITE);
	CHECK(check("POST", NULL, "none", j, true, false) == GUARD_OK);
	CHECK(check("PUT", NULL, "Same-Origin", j, true, false) == GUARD_OK);
	CHECK(guard_site_ok(NULL) && !guard_site_ok("") &&
	      !guard_site_ok("same-originx"));
}

static void
types(void)
{
	CHECK(check("POST", NULL, NULL, "text/plain", true, false) ==
	      GUARD_SIMPLE_TYPE);
	CHECK(check("POST", NULL, NULL, "Text/Plain; charset=UTF-8", false,
	            false) == GUARD_SIMPLE_TYPE);
	CHECK(check("PUT", NULL, NULL, " multipart/form-data; boundary=x", true,
	            true) == GUARD_SIMPLE_TYPE);
	CHECK(check("POST", NULL, NULL, "application/x-www-form-urlencoded",
	            false, false) == GUARD_SIMPLE_TYPE);
	CHECK(check("POST", NULL, NULL, NULL, true, false) == GUARD_NO_TYPE);
	CHECK(check("PUT", NULL, NULL, "", true, true) == GUARD_NO_TYPE);
	CHECK(check("POST", NULL, NULL, NULL, false, false) == GUARD_OK);
	CHECK(check("POST", NULL, NULL, "application/json; charset=utf-8", true,
	            false) == GUARD_OK);
	CHECK(check("POST", NULL, NULL, "APPLICATION/JSON", true, false) ==
	      GUARD_OK);
	CHECK(check("POST", NULL, NULL, "application/jsonx", true, false) ==
	      GUARD_NOT_JSON);
	CHECK(check("POST", NULL, NULL, "application/octet-stream", true,
	            false) == GUARD_NOT_JSON);
	/* A file's bytes: any type a page cannot send without a preflight. */
	CHECK(check("PUT", NULL, NULL, "application/octet-stream", true,
	            true) == GUARD_OK);
	CHECK(check("PUT", NULL, NULL, "application/json", true, true) ==
	      GUARD_OK);
	CHECK(guard_simple_type("text/plain;") &&
	      !guard_simple_type("text/plainx") &&
	      !guard_simple_type("text/html"));
}

static const struct unit_test tests[] = {
    {"reads pass every wall", reads_pass},
    {"a write from another origin or site is refused", origins},
    {"a write's body: JSON, or bytes on a raw route, never a simple type",
     types},
};

int
main(void)
{
	return UNIT_RUN("guard", tests);
}
