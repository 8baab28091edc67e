/*
 * The Claude subscription login's pure parts: the token endpoint's
 * answer and the stored row, read from bytes with jv, every copy of a
 * token wiped before it is freed.  No store, no network, no locks, so
 * a fuzz target (tests/fuzz/fuzz_oauth.c) runs them on any bytes; the
 * endpoint's answer comes from the network and is hostile.  explicit_bzero
 * rather than the vault's wipe keeps this file free of libsodium.
 */
#include "cred/credentials.h"
#include "cred/oauth_internal.h"

#include <stdio.h>
#include <string.h>

#include "lib/jv.h"

void
cred_oauth_wipe(struct cred_oauth *o)
{
	explicit_bzero(o, sizeof(*o));
}

/* Frees an object after wiping its strings (tokens, codes). */
void
cred_jv_free_wiped(struct jv *o)
{
	void *it = NULL;
	const char *k;
	struct jv *v;

	if (o == NULL)
		return;
	if (jv_type(o) == JV_OBJECT)
		while (jv_each(o, &it, &k, &v))
			if (jv_type(v) == JV_STRING)
				explicit_bzero((char *)jv_str(v),
				               jv_str_len(v));
	jv_free(o);
}

/* Printable ASCII only: a token goes into a header line. */
static int
take_token(const struct jv *o, const char *key,
           char out[CRED_OAUTH_TOKEN_MAX + 1])
{
	const struct jv *v = jv_get(o, key);
	const char *s = jv_str(v);
	size_t n = jv_str_len(v);

	if (s == NULL || n == 0 || n > CRED_OAUTH_TOKEN_MAX)
		return -1;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return -1;
	memcpy(out, s, n + 1);
	return 0;
}

static void
take_scope(const struct jv *o, struct cred_oauth *out)
{
	const struct jv *v = jv_get(o, "scope");

	if (jv_str(v) && jv_str_len(v) < sizeof(out->scope))
		memcpy(out->scope, jv_str(v), jv_str_len(v) + 1);
}

int
cred_oauth_row_parse(const char *text, size_t len, struct cred_oauth *o)
{
	char err[128];
	struct jv *j = jv_parse(text, len, 4, err, sizeof(err));
	const struct jv *r;
	int rc = -1;

	memset(o, 0, sizeof(*o));
	if (j && jv_type(j) == JV_OBJECT &&
	    take_token(j, "access_token", o->access_token) == 0) {
		r = jv_get(j, "refresh_token");
		rc = jv_str_len(r) == 0 || take_token(j, "refresh_token",
		                                      o->refresh_token) == 0
		         ? 0
		         : -1;
		o->expires_at = jv_int(jv_get(j, "expires_at"));
		o->needs_login = jv_is_true(jv_get(j, "needs_login"));
		take_scope(j, o);
	}
	cred_jv_free_wiped(j);
	return rc;
}
int
cred_oauth_parse(const char *text, size_t len, int64_t now_ms,
                 const struct cred_oauth *old, struct cred_oauth *out,
                 char *why, size_t whylen)
{
	char err[128];
	struct jv *j = jv_parse(text, len, 8, err, sizeof(err));
	const struct jv *r;
	double secs;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (old) {
		memcpy(out->refresh_token, old->refresh_token,
		       sizeof(out->refresh_token));
		memcpy(out->scope, old->scope, sizeof(out->scope));
	}
	r = j ? jv_get(j, "refresh_token") : NULL;
	if (j == NULL || jv_type(j) != JV_OBJECT) {
		snprintf(why, whylen, "it is not a JSON object");
	} else if (take_token(j, "access_token", out->access_token) < 0) {
		snprintf(why, whylen, "it has no usable access_token");
	} else if (r && jv_type(r) != JV_NULL && jv_str_len(r) != 0 &&
	           take_token(j, "refresh_token", out->refresh_token) < 0) {
		snprintf(why, whylen, "its refresh_token is not usable");
	} else {
		secs = jv_num(jv_get(j, "expires_in"));
		out->expires_at = secs > 0 && secs < 1e9
		                      ? now_ms + (int64_t)(secs * 1000)
		                      : 0;
		take_scope(j, out);
		rc = 0;
	}
	cred_jv_free_wiped(j);
	if (rc < 0)
		cred_oauth_wipe(out);
	return rc;
}
