/*
 * /v1/apps/{id}/domains: an app's custom domains (publish.h, "custom
 * domains"; docs/publish.md "Host names and custom domains").
 *
 * A domain belongs to its app's tenant: another tenant's app is a 404
 * as a missing one, and a host another app (of any tenant) has is 409
 * host_taken, which says no more about that app.  Adding and verifying
 * check at once (DNS, the HTTP check): the call waits for them, a few
 * seconds at most (publish/domain.h's timeouts), on this request thread.
 *
 * The host is read from the path itself, not from r->name: the router
 * copies {name} segments into 80 bytes and a host may have 253.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "publish/publish.h"

#define DOMAINS_BODY_BYTES 1024 /* {"host": …} */

static struct jv *
records_json(struct core *c, const struct domain *d)
{
	char a[46], cname[DOMAIN_HOST_MAX + 1];
	struct jv *arr = jv_arr(), *o;

	publish_domain_records(c, d, a, cname);
	if (a[0]) {
		o = jv_obj();
		jv_set_str(o, "type", strchr(a, ':') ? "AAAA" : "A");
		jv_set_str(o, "name", d->host);
		jv_set_str(o, "value", a);
		jv_push(arr, o);
	}
	if (cname[0]) {
		o = jv_obj();
		jv_set_str(o, "type", "CNAME");
		jv_set_str(o, "name", d->host);
		jv_set_str(o, "value", cname);
		jv_push(arr, o);
	}
	return arr;
}

static struct jv *
domain_json(struct core *c, const struct domain *d)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "host", d->host);
	jv_set_str(o, "app_id", d->app_id);
	jv_set_str(o, "status", d->status);
	jv_set_str(o, "method", d->method);
	jv_set_str(o, "reason", d->reason);
	jv_set(o, "records", records_json(c, d));
	jv_set_str(o, "token", d->token);
	api_set_time(o, "created_at", d->created_at);
	api_set_time_or_null(o, "checked_at", d->checked_at);
	api_set_time_or_null(o, "verified_at", d->verified_at);
	jv_set_str(o, "tls",
	           c->cfg->traefik_dynamic_dir[0] ? "traefik" : "none");
	return o;
}

/* Who asks: the token's name, or "console" for a console session. */
static const char *
actor(const struct req *r)
{
	return r->via == API_VIA_SESSION ? "console" : r->owner;
}

/* The host segment of /v1/apps/{id}/domains/<host>[/verify]. */
static int
path_host(struct req *r, struct resp *w, char host[DOMAIN_HOST_MAX + 1])
{
	const char *p = strstr(r->path, "/domains/");
	size_t n;

	p = p ? p + 9 : "";
	n = strcspn(p, "/");
	if (n == 0 || n > DOMAIN_HOST_MAX) {
		api_fail(w, 400, "invalid_request",
		         "the host in the path must be 1 to %d bytes",
		         DOMAIN_HOST_MAX);
		return -1;
	}
	/* As the rows keep it: lower case, no trailing dot. */
	for (size_t i = 0; i < n; i++)
		host[i] =
		    (char)((p[i] >= 'A' && p[i] <= 'Z') ? p[i] + 32 : p[i]);
	if (n > 1 && host[n - 1] == '.')
		n--;
	host[n] = '\0';
	return 0;
}

static int
push_domain(const struct domain *d, void *arg)
{
	void **a = arg;

	jv_push(a[1], domain_json(a[0], d));
	return 0;
}

void
domains_list(struct req *r, struct resp *w)
{
	struct app a;
	struct jv *arr, *o;
	void *args[2];

	if (api_load_app(r, w, &a) < 0)
		return;
	arr = jv_arr();
	args[0] = r->core;
	args[1] = arr;
	if (store_domain_list(r->core->store, a.id, push_domain, args) < 0) {
		jv_free(arr);
		api_fail(w, 500, "internal", "cannot read the domains");
		return;
	}
	o = jv_obj();
	jv_set(o, "domains", arr);
	api_reply_json(w, 200, o);
}

void
domains_add(struct req *r, struct resp *w)
{
	struct jv *body = NULL;
	const struct jv *h;
	struct domain d;
	struct err e = {0};
	struct app a;
	int rc;

	if (api_load_app(r, w, &a) < 0 ||
	    api_body_object(r, w, false, &body) < 0)
		return;
	h = jv_get(body, "host");
	if (h == NULL || jv_type(h) != JV_STRING || jv_str_len(h) == 0 ||
	    jv_str_len(h) > DOMAIN_HOST_MAX + 1 ||
	    strlen(jv_str(h)) != jv_str_len(h)) {
		jv_free(body);
		api_fail(w, 400, "invalid_request",
		         "host must be a DNS name (shop.example.com)");
		return;
	}
	rc = publish_domain_add(r->core, &a, jv_str(h), actor(r), &d, &e);
	jv_free(body);
	if (rc < 0)
		api_reply_err(w, &e);
	else
		api_reply_json(w, 201, domain_json(r->core, &d));
}

void
domains_get(struct req *r, struct resp *w)
{
	char host[DOMAIN_HOST_MAX + 1];
	struct domain d;
	struct app a;

	if (api_load_app(r, w, &a) < 0 || path_host(r, w, host) < 0)
		return;
	if (store_domain_get(r->core->store, host, &d) != 0 ||
	    strcmp(d.app_id, a.id) != 0) {
		api_fail(w, 404, "not_found", "no such domain");
		return;
	}
	api_reply_json(w, 200, domain_json(r->core, &d));
}

void
domains_delete(struct req *r, struct resp *w)
{
	char host[DOMAIN_HOST_MAX + 1];
	struct err e = {0};
	struct app a;

	if (api_load_app(r, w, &a) < 0 || path_host(r, w, host) < 0)
		return;
	if (publish_domain_remove(r->core, &a, host, actor(r), &e) < 0)
		api_reply_err(w, &e);
	else
		api_reply_empty(w, 204);
}

void
domains_verify(struct req *r, struct resp *w)
{
	char host[DOMAIN_HOST_MAX + 1];
	struct err e = {0};
	struct domain d;
	struct app a;

	if (api_load_app(r, w, &a) < 0 || path_host(r, w, host) < 0)
		return;
	if (publish_domain_verify(r->core, &a, host, &d, &e) < 0)
		api_reply_err(w, &e);
	else
		api_reply_json(w, 200, domain_json(r->core, &d));
}

const struct route domains_routes[] = {
    {.method = "GET", .pattern = "/v1/apps/{id}/domains", .fn = domains_list},
    {.method = "POST",
     .pattern = "/v1/apps/{id}/domains",
     .fn = domains_add,
     .max_body = DOMAINS_BODY_BYTES},
    {.method = "GET",
     .pattern = "/v1/apps/{id}/domains/{name}",
     .fn = domains_get},
    {.method = "DELETE",
     .pattern = "/v1/apps/{id}/domains/{name}",
     .fn = domains_delete},
    {.method = "POST",
     .pattern = "/v1/apps/{id}/domains/{name}/verify",
     .fn = domains_verify},
    {0},
};
