/*
 * Private previews' links (preview/pvauth.h).  POST
 * /v1/apps/{id}/preview-link mints a one-time code and answers the URL
 * on the app's preview host that exchanges it for a cookie there: the
 * console opens it in its preview frame, a user may send it to one
 * person.  Each tenant has its quota of unopened links
 * (PVAUTH_CODES_TENANT): a new link past it forgets the tenant's own
 * oldest, so one tenant cannot fill the instance's table.  DELETE
 * /v1/apps/{id}/preview-links revokes every link and cookie of the app (a new
 * epoch).
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "preview/pvauth.h"
#include "lib/clock.h"

/* next=: the path the link lands on, percent-encoded for the query. */
static int
path_field(const struct jv *v, char *out, size_t len, struct err *e)
{
	static const char hex[] = "0123456789ABCDEF";
	const char *p;
	size_t k = 0;

	if (v == NULL) {
		snprintf(out, len, "%%2F");
		return 0;
	}
	if (jv_type(v) != JV_STRING || jv_str_len(v) == 0 ||
	    jv_str(v)[0] != '/' || jv_str(v)[1] == '/' ||
	    jv_str_len(v) > PVAUTH_PATH_MAX)
		return ERR_BAD(e,
		               "path must be a path on the app's host, "
		               "\"/...\", at most %d bytes",
		               PVAUTH_PATH_MAX);
	for (p = jv_str(v); *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch <= 0x20 || ch >= 0x7f || ch == '\\')
			return ERR_BAD(e, "path must be printable ASCII "
			                  "without spaces or \"\\\"");
		if (k + 4 > len)
			return ERR_BAD(e, "path is too long");
		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		    (ch >= '0' && ch <= '9') || strchr("-._~", ch)) {
			out[k++] = (char)ch;
		} else {
			out[k++] = '%';
			out[k++] = hex[ch >> 4];
			out[k++] = hex[ch & 15];
		}
	}
	out[k] = '\0';
	return 0;
}

/* The link's answer, and its event (never the code) on the timeline. */
static void
link_reply(struct req *r, struct resp *w, const struct app *a,
           const char *sandbox_id, const char *url, int web, int64_t exp)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "url", url);
	jv_set_str(o, "app_id", a->id);
	jv_set_str(o, "sandbox_id", sandbox_id);
	jv_set_int(o, "port", web);
	jv_set_str(o, "visibility",
	           pvauth_effective(r->core, a->preview_visibility));
	api_set_time(o, "expires_at", exp);
	api_note(r, a->id, "app.link_issued", sandbox_id, NULL,
	         "A preview link was issued for port %d.", web);
	api_reply_json(w, 201, o);
}

void
apps_preview_link(struct req *r, struct resp *w)
{
	struct jv *body, *ttl, *port;
	struct err e = {0};
	struct app a;
	struct sandbox sb;
	char code[PVAUTH_CODE_LEN + 1], base[512],
	    next[PVAUTH_PATH_MAX * 3 + 8];
	char url[4096];
	int64_t seconds = PVAUTH_TTL_DEFAULT, exp;
	int web, rc;

	if (api_body_object(r, w, true, &body) < 0)
		return;
	ttl = jv_get(body, "ttl_seconds");
	port = jv_get(body, "port");
	if (ttl && (jv_type(ttl) != JV_INT || jv_int(ttl) < PVAUTH_TTL_MIN ||
	            jv_int(ttl) > PVAUTH_TTL_MAX)) {
		ERR_BAD(&e, "ttl_seconds must be an integer from %d to %d",
		        PVAUTH_TTL_MIN, PVAUTH_TTL_MAX);
		goto fail;
	}
	if (ttl)
		seconds = jv_int(ttl);
	if (path_field(jv_get(body, "path"), next, sizeof(next), &e) < 0)
		goto fail;
	if (api_load_app(r, w, &a) < 0) {
		jv_free(body);
		return;
	}
	rc = store_sandbox_by_app(r->core->store, a.id, &sb);
	if (rc < 0) {
		ERR_INTERNAL(&e, "cannot read the app");
		goto fail;
	}
	if (rc != 0) {
		err_set(&e, 409, "preview_no_sandbox",
		        "the app has no sandbox, so no preview to link to: "
		        "create one (POST /v1/apps/%s/sandbox)",
		        a.id);
		goto fail;
	}
	web = sb.nports ? sb.ports[0] : 3000;
	if (port) {
		bool declared = false;
		for (int i = 0; i < sb.nports; i++)
			declared |= jv_type(port) == JV_INT &&
			            jv_int(port) == sb.ports[i];
		if (!declared) {
			ERR_BAD(&e, "port must be one the sandbox declares");
			goto fail;
		}
		web = (int)jv_int(port);
	}
	exp = clock_now() + seconds;
	if (pvauth_mint(r->core, r->owner, a.id, exp, code) < 0) {
		err_set(&e, 503, "preview_links_full",
		        "%d preview links of all tenants wait to be opened; "
		        "try again when some were used or expired",
		        PVAUTH_CODES_MAX);
		goto fail;
	}
	jv_free(body);
	api_preview_url(r->core, sb.id, web, base, sizeof(base));
	snprintf(url, sizeof(url), "%s" PVAUTH_AUTH_PATH "?code=%s&next=%s",
	         base, code, next);
	link_reply(r, w, &a, sb.id, url, web, exp);
	return;
fail:
	jv_free(body);
	api_reply_err(w, &e);
}

void
apps_preview_revoke(struct req *r, struct resp *w)
{
	struct app a;

	if (api_load_app(r, w, &a) < 0)
		return;
	a.preview_epoch++;
	a.updated_at = clock_now();
	if (store_app_set_preview(r->core->store, &a) != 0) {
		api_fail(w, 500, "internal", "cannot store the app");
		return;
	}
	pvauth_put(r->core, a.id, a.preview_visibility, a.preview_epoch);
	pvauth_forget_codes(r->core, a.id);
	api_reply_empty(w, 204);
}

/* The routes of this file, in the router's order (routes.c). */
const struct route pvlinks_routes[] = {
    {.method = "POST",
     .pattern = "/v1/apps/{id}/preview-link",
     .fn = apps_preview_link},
    {.method = "DELETE",
     .pattern = "/v1/apps/{id}/preview-links",
     .fn = apps_preview_revoke},
    {0},
};
