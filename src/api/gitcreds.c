/*
 * /v1/git-credentials: tokens for pushing (and later importing) over
 * https.  A credential belongs to the tenant that made it; another
 * tenant's id is a 404.  The token is sealed in the vault and never
 * answered: only its metadata and token_set.  Also the checks of git
 * URLs and branch names, shared with apps.c and gitpush.c.
 *
 * Host and URL rules: a credential names one host (a DNS name or an
 * address, with an optional port) and its token is given to the git
 * transport only for that host.  App URLs are https with a host and no
 * user information, so no token ever sits in a URL; plain http is
 * accepted only with SANDBOXD_GIT_ALLOW_HTTP=1, a knob for tests
 * against a loopback git server.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "sandbox/gitops.h"
#include "lib/clock.h"

static bool
printable(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

/* A DNS name or an IPv4 address, then an optional :port. */
bool
api_git_host_ok(const char *h, size_t n)
{
	const char *colon = memchr(h, ':', n);
	size_t name = colon ? (size_t)(colon - h) : n;

	if (name == 0 || name > 253 || h[0] == '.' || h[0] == '-' ||
	    h[name - 1] == '.' || h[name - 1] == '-')
		return false;
	for (size_t i = 0; i < name; i++)
		if (!isalnum((unsigned char)h[i]) && h[i] != '.' && h[i] != '-')
			return false;
	if (strstr(h, "..") != NULL && (size_t)(strstr(h, "..") - h) < name)
		return false;
	if (colon) {
		const char *p = colon + 1;
		size_t pl = n - name - 1;
		long port;

		if (pl == 0 || pl > 5 || strspn(p, "0123456789") != pl)
			return false;
		port = strtol(p, NULL, 10);
		if (port < 1 || port > 65535)
			return false;
	}
	return true;
}

int
api_git_url_check(const char *url, size_t n, struct err *e)
{
	bool http = gitops_test_http();
	const char *rest, *end;

	if (n == 0 || n > GIT_URL_MAX || strlen(url) != n)
		goto bad;
	for (size_t i = 0; i < n; i++)
		if (isspace((unsigned char)url[i]) ||
		    !isprint((unsigned char)url[i]))
			goto bad;
	if (strncmp(url, "https://", 8) == 0)
		rest = url + 8;
	else if (http && strncmp(url, "http://", 7) == 0)
		rest = url + 7;
	else
		goto bad;
	end = rest + strcspn(rest, "/?#");
	if (memchr(rest, '@', (size_t)(end - rest)) != NULL ||
	    !api_git_host_ok(rest, (size_t)(end - rest)))
		goto bad;
	return 0;
bad:
	return ERR_BAD(e,
	               "git.repo_url must be an https:// URL with a host, "
	               "no credentials, no whitespace, at most %d bytes",
	               GIT_URL_MAX);
}

bool
api_git_branch_ok(const char *b, size_t n)
{
	if (n == 0 || n > GIT_BRANCH_MAX || strlen(b) != n ||
	    !isalnum((unsigned char)b[0]) || strstr(b, "..") != NULL)
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isalnum((unsigned char)b[i]) && !strchr("._/-", b[i]))
			return false;
	/* what git itself refuses as a ref name */
	if (b[n - 1] == '/' || b[n - 1] == '.' || strstr(b, "//") ||
	    strstr(b, "/.") || (n >= 5 && strcmp(b + n - 5, ".lock") == 0))
		return false;
	return true;
}

static struct jv *
cred_json(const struct git_credential *c)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "id", c->id);
	jv_set_str(o, "name", c->name);
	jv_set_str(o, "host", c->host);
	jv_set_str(o, "username", c->username);
	jv_set_bool(o, "token_set", true);
	api_set_time(o, "created_at", c->created_at);
	return o;
}

/* A string field of at most max bytes, no NUL; NULL when absent. */
static const char *
field(const struct jv *body, const char *k, size_t max, bool required,
      size_t *len, struct err *e)
{
	struct jv *v = jv_get(body, k);

	*len = 0;
	if (v == NULL) {
		if (required)
			ERR_BAD(e, "%s is required", k);
		return NULL;
	}
	if (jv_type(v) != JV_STRING || jv_str_len(v) == 0 ||
	    jv_str_len(v) > max || strlen(jv_str(v)) != jv_str_len(v)) {
		ERR_BAD(e, "%s must be a string of 1 to %zu bytes without NUL",
		        k, max);
		return NULL;
	}
	*len = jv_str_len(v);
	return jv_str(v);
}

static int
cred_fields(const struct jv *body, struct git_credential *c, const char **token,
            size_t *tlen, struct err *e)
{
	const char *name, *host, *user, *k;
	size_t nl, hl, ul;
	struct jv *v;
	void *it = NULL;

	while (jv_each(body, &it, &k, &v))
		if (strcmp(k, "name") && strcmp(k, "host") &&
		    strcmp(k, "username") && strcmp(k, "token"))
			return ERR_BAD(
			    e,
			    "unknown field %.64s (known: name, host, "
			    "username, token)",
			    k);
	if ((name = field(body, "name", GIT_CRED_NAME_MAX, true, &nl, e)) ==
	    NULL)
		return -1;
	if (!printable(name, nl))
		return ERR_BAD(e, "name must not contain control characters");
	if ((host = field(body, "host", GIT_CRED_HOST_MAX, true, &hl, e)) ==
	    NULL)
		return -1;
	if (!api_git_host_ok(host, hl))
		return ERR_BAD(e, "host must be a DNS name or an IP address, "
		                  "with an optional :port (e.g. github.com)");
	user = field(body, "username", GIT_CRED_USER_MAX, false, &ul, e);
	if (e->status)
		return -1;
	if (user && (!printable(user, ul) || strchr(user, ':')))
		return ERR_BAD(e, "username must not contain control "
		                  "characters or ':'");
	if ((*token = field(body, "token", GIT_CRED_TOKEN_MAX, true, tlen,
	                    e)) == NULL)
		return -1;
	if (strpbrk(*token, "\r\n ") != NULL)
		return ERR_BAD(e, "token must not contain CR, LF or spaces");
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->host, sizeof(c->host), "%s", host);
	for (char *p = c->host; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	snprintf(c->username, sizeof(c->username), "%s", user ? user : "");
	return 0;
}

void
gitcreds_create(struct req *r, struct resp *w)
{
	struct git_credential c = {0};
	struct err e = {0};
	const char *token = NULL;
	struct jv *body;
	size_t tlen = 0;
	int rc;

	if (api_body_object(r, w, false, &body) < 0)
		return;
	if (cred_fields(body, &c, &token, &tlen, &e) < 0) {
		jv_free(body);
		api_reply_err(w, &e);
		return;
	}
	ulid_new(c.id);
	snprintf(c.owner, sizeof(c.owner), "%s", r->owner);
	c.created_at = clock_now();
	rc = store_gitcred_insert(r->core->store, &c, token, tlen);
	jv_free(body); /* the token goes with it */
	if (rc == STORE_CONFLICT)
		api_fail(
		    w, 409, "conflict",
		    "a git credential named \"%s\" exists; delete it first",
		    c.name);
	else if (rc != 0)
		api_fail(w, 500, "internal", "cannot store the credential");
	else
		api_reply_json(w, 201, cred_json(&c));
}

static int
list_one(const struct git_credential *c, void *arg)
{
	jv_push(arg, cred_json(c));
	return 0;
}

void
gitcreds_list(struct req *r, struct resp *w)
{
	struct jv *arr = jv_arr(), *o;

	if (store_gitcred_list(r->core->store, r->owner, list_one, arr) < 0) {
		jv_free(arr);
		api_fail(w, 500, "internal", "cannot read credentials");
		return;
	}
	o = jv_obj();
	jv_set(o, "credentials", arr);
	api_reply_json(w, 200, o);
}

void
gitcreds_delete(struct req *r, struct resp *w)
{
	int rc = store_gitcred_delete(r->core->store, r->owner, r->ids[0]);

	if (rc == STORE_NOT_FOUND)
		api_fail(w, 404, "not_found", "no such git credential");
	else if (rc != 0)
		api_fail(w, 500, "internal", "cannot delete the credential");
	else
		api_reply_empty(w, 204);
}

/* The routes of this file, in the router's order (routes.c). */
const struct route gitcreds_routes[] = {
    {.method = "GET", .pattern = "/v1/git-credentials", .fn = gitcreds_list},
    {.method = "POST",
     .pattern = "/v1/git-credentials",
     .fn = gitcreds_create,
     .max_body = GIT_CRED_BODY_BYTES},
    {.method = "DELETE",
     .pattern = "/v1/git-credentials/{id}",
     .fn = gitcreds_delete},
    {0},
};
