/*
 * The walls a state-changing request (POST, PUT, PATCH, DELETE) passes
 * whatever the authentication mode, decided from its head alone: is it
 * from another site, and is its body of a type a web page can send
 * anywhere without asking.
 *
 * A browser tells where a request comes from: Origin on every
 * cross-origin write (and on same-origin ones), Sec-Fetch-Site on every
 * request of a current browser.  A write is refused when Origin is there
 * and is not "<scheme>://<Host>" of the request (session_origin_ok: the
 * console's origin through the edge, the API's own host when called
 * straight), or when Sec-Fetch-Site is there and is neither
 * "same-origin" nor "none" (typed by the user).  "same-site" is refused
 * too: on a real domain the previews are the console's site.  A client
 * that is not a browser (the CLI, curl) sends neither and passes.
 *
 * The body: a web page may send text/plain, form-urlencoded or
 * multipart/form-data, or a body with no type, to any origin without a
 * preflight; those are refused on every route.  A JSON route's body must
 * be application/json; a route of raw bytes (a file's content) takes
 * any other type (application/octet-stream by convention), which a page
 * of another origin can only send after a CORS preflight that the API
 * never answers.  Media types are compared case-insensitively, their
 * parameters (charset) ignored.
 *
 * Pure functions: no request, no store, so the unit tests and the fuzz
 * target call them on bare strings.
 */
#include "api/guard.h"

#include <string.h>
#include <strings.h>

#include "api/session.h"

/* The media type's length without parameters and trailing blanks. */
static size_t
media_len(const char *ctype)
{
	size_t n = strcspn(ctype, ";");

	while (n && (ctype[n - 1] == ' ' || ctype[n - 1] == '\t'))
		n--;
	return n;
}

static bool
media_is(const char *ctype, const char *want)
{
	size_t n;

	while (*ctype == ' ' || *ctype == '\t')
		ctype++;
	n = media_len(ctype);
	return n == strlen(want) && strncasecmp(ctype, want, n) == 0;
}

bool
guard_simple_type(const char *ctype)
{
	return media_is(ctype, "text/plain") ||
	       media_is(ctype, "application/x-www-form-urlencoded") ||
	       media_is(ctype, "multipart/form-data");
}

bool
guard_site_ok(const char *sec_fetch_site)
{
	return sec_fetch_site == NULL ||
	       strcasecmp(sec_fetch_site, "same-origin") == 0 ||
	       strcasecmp(sec_fetch_site, "none") == 0;
}

bool
guard_writes(const char *method)
{
	return strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0 &&
	       strcmp(method, "OPTIONS") != 0;
}

enum guard_verdict
guard_check(const struct guard_head *h)
{
	if (!guard_writes(h->method))
		return GUARD_OK;
	if (!session_origin_ok(h->origin, h->host, h->https))
		return GUARD_FOREIGN_ORIGIN;
	if (!guard_site_ok(h->sec_fetch_site))
		return GUARD_FOREIGN_SITE;
	if (h->ctype && guard_simple_type(h->ctype))
		return GUARD_SIMPLE_TYPE;
	if (!h->has_body)
		return GUARD_OK;
	if (h->ctype == NULL || *h->ctype == '\0')
		return GUARD_NO_TYPE;
	if (!h->raw_body && !media_is(h->ctype, "application/json"))
		return GUARD_NOT_JSON;
	return GUARD_OK;
}
