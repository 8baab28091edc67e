/*
 * The cross-site walls of a write (guard.c): Origin, Sec-Fetch-Site and
 * the body's Content-Type, checked from the head on every
 * state-changing request whatever the authentication mode.  Pure and
 * thread-safe.
 */
#ifndef API_GUARD_H
#define API_GUARD_H

#include <stdbool.h>

/* What guard_check looks at; NULL for a header that is absent. */
struct guard_head {
	const char *method;
	const char *host;           /* Host */
	const char *origin;         /* Origin */
	const char *sec_fetch_site; /* Sec-Fetch-Site */
	const char *ctype;          /* Content-Type */
	bool https;                 /* the origin's scheme is https */
	bool has_body;              /* Content-Length > 0, or chunked */
	bool raw_body;              /* the route takes bytes, not JSON */
};

enum guard_verdict {
	GUARD_OK,
	GUARD_FOREIGN_ORIGIN, /* Origin is not <scheme>://<Host> */
	GUARD_FOREIGN_SITE,   /* Sec-Fetch-Site neither same-origin nor none */
	GUARD_SIMPLE_TYPE,    /* text/plain, form-urlencoded, multipart */
	GUARD_NO_TYPE,        /* a body without Content-Type */
	GUARD_NOT_JSON,       /* a JSON route's body of another type */
};

/* Whether a request of this method changes state (not GET/HEAD/OPTIONS). */
bool guard_writes(const char *method);
/* Whether Sec-Fetch-Site (NULL: absent) is absent, same-origin or none. */
bool guard_site_ok(const char *sec_fetch_site);
/* Whether the Content-Type is one a cross-site form or fetch sends freely. */
bool guard_simple_type(const char *ctype);
/* The first wall h does not pass, or GUARD_OK. */
enum guard_verdict guard_check(const struct guard_head *h);

#endif
