/*
 * Private previews at the edge (preview/pvauth.h): the gate before a
 * request for a preview host is routed, and the code exchange on the
 * edge's own path, /__sandboxd/auth?code=…&next=/path.
 *
 * The gate asks pvauth_view (two in-memory lookups) once per connection
 * and sandbox, then again only when any app's visibility changed since
 * (pvauth_generation), so a keep-alive stream of a public preview pays
 * an atomic load per request.  A private preview's request passes with
 * a valid preview cookie (an HMAC check); any other gets the page of an
 * unknown host, byte for byte (pages.c), before its sandbox is resolved
 * (nothing is woken for a stranger), so the answer tells nobody whether
 * the app exists.  Nothing under /__sandboxd/ reaches an app.
 *
 * The exchange takes the code once (another app's code, an expired or a
 * used one: the unknown-host page), sets the cookie on this host only
 * (no Domain), HttpOnly, and answers 302 to next, a path on the same
 * host.  SameSite: the console (console.<domain>) frames the preview
 * (s-…​.preview.<domain>), and browsers take the two for different sites
 * whenever <domain> is not a registrable name of a public suffix
 * (localhost, a .internal name), where a Lax cookie is neither set nor
 * sent in the frame.  So where the browser can hold a Secure cookie
 * (https, or a *.localhost host, which browsers count as secure) the
 * cookie is "SameSite=None; Secure; Partitioned" (kept per top-level
 * site: the console's frame has its own, a browser that blocks
 * third-party cookies keeps it), else SameSite=Lax (plain http on a
 * real name, where console and previews are one site).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "preview/pvauth.h"
#include "edge/internal.h"
#include "lib/clock.h"

static bool
starts_with(const char *p, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && memcmp(p, prefix, k) == 0;
}

void
edge_target_path(const char **url, size_t *n)
{
	const char *p = *url, *end = *url + *n, *s;

	if (*n == 0 || *p == '/')
		return;
	/* absolute-form, "http://host/path": the path */
	s = memchr(p, ':', *n);
	if (s == NULL || end - s < 3 || s[1] != '/' || s[2] != '/')
		return;
	for (s += 3; s < end && *s != '/' && *s != '?'; s++)
		;
	*url = s;
	*n = (size_t)(end - s);
}

/* The value of the request's query parameter name, raw; false: none. */
bool
edge_query_param(const char *url, size_t n, const char *name, const char **v,
                 size_t *vlen)
{
	const char *q = memchr(url, '?', n), *end = url + n;
	size_t k = strlen(name);

	if (q == NULL)
		return false;
	for (const char *p = q + 1; p < end;) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		const char *stop = amp ? amp : end;
		if ((size_t)(stop - p) > k && memcmp(p, name, k) == 0 &&
		    p[k] == '=') {
			*v = p + k + 1;
			*vlen = (size_t)(stop - p) - k - 1;
			return true;
		}
		p = stop + 1;
	}
	return false;
}

static int
hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/*
 * next=, percent-decoded, if it is a path on this host: "/" and no
 * second "/" or "\" (which browsers read as another host), printable
 * ASCII without spaces.  Else "/".
 */
void
edge_next_path(const char *v, size_t n, char out[PVAUTH_PATH_MAX + 1])
{
	size_t k = 0;

	for (size_t i = 0; i < n && k < PVAUTH_PATH_MAX; i++) {
		int ch = (unsigned char)v[i];
		if (ch == '%' && i + 2 < n && hexval(v[i + 1]) >= 0 &&
		    hexval(v[i + 2]) >= 0) {
			ch = hexval(v[i + 1]) * 16 + hexval(v[i + 2]);
			i += 2;
		}
		if (ch <= 0x20 || ch >= 0x7f || ch == '\\')
			goto root;
		out[k++] = (char)ch;
	}
	out[k] = '\0';
	if (k == 0 || k == PVAUTH_PATH_MAX || out[0] != '/' || out[1] == '/')
		goto root;
	return;
root:
	snprintf(out, PVAUTH_PATH_MAX + 1, "/");
}

/* The request came over https: PREVIEW_TLS, or a proxy in front says so. */
static bool
over_https(const struct edge_conn *c)
{
	const char *v = NULL;
	size_t n = 0;

	if (c->e->tls)
		return true;
	return edge_head_find(c->head, "x-forwarded-proto", &v, &n) == 1 &&
	       n == 5 && strncasecmp(v, "https", 5) == 0;
}

static bool
localhost_domain(const char *d)
{
	size_t n = strlen(d);

	return strcasecmp(d, "localhost") == 0 ||
	       (n > 10 && strcasecmp(d + n - 10, ".localhost") == 0);
}

/* The code's exchange: a cookie and a redirect, or the unknown page.
 * found: view is the host's app (a sandbox's, or a published app). */
static void
exchange(struct edge_conn *c, bool found, const struct pvauth_view *v,
         const char *url, size_t n)
{
	struct core *core = c->e->core;
	const struct pvauth_view view = *v;
	struct buf *o = &c->rs.out;
	char next[PVAUTH_PATH_MAX + 1], cookie[PVAUTH_COOKIE_MAX];
	const char *code = NULL, *nv = NULL;
	size_t clen = 0, nlen = 0;
	int64_t exp = 0, now = clock_now();
	bool keep, https = over_https(c);
	int bad = 0;

	if (!edge_query_param(url, n, "code", &code, &clen) || !found ||
	    !pvauth_redeem(core, code, clen, view.app_id, &exp)) {
		edge_page(c, EDGE_PAGE_NO_PREVIEW, NULL);
		return;
	}
	if (edge_query_param(url, n, "next", &nv, &nlen))
		edge_next_path(nv, nlen, next);
	else
		snprintf(next, sizeof(next), "/");
	pvauth_cookie(core, view.app_id, view.epoch, exp, cookie);
	keep = c->req_done && !c->cl.eof && http_should_keep_alive(&c->req);
	bad |= buf_appendf(o,
	                   "HTTP/1.1 302 Found\r\nLocation: %s\r\n"
	                   "Set-Cookie: " PVAUTH_COOKIE
	                   "=%s; Path=/; Max-Age=%lld; HttpOnly; %s\r\n"
	                   "Cache-Control: no-store\r\n"
	                   "Referrer-Policy: no-referrer\r\n"
	                   "Content-Length: 0\r\n",
	                   next, cookie, (long long)(exp - now),
	                   https || localhost_domain(c->e->domain)
	                       ? "SameSite=None; Secure; Partitioned"
	                       : "SameSite=Lax");
	if (!keep)
		bad |= buf_appendf(o, "Connection: close\r\n");
	bad |= buf_append(o, "\r\n", 2);
	edge_local_finish(c, keep && !bad);
}

/*
 * One preview cookie's value.  The one this connection proved last is
 * taken again without its HMAC while no visibility changed (the same
 * bytes, the same epoch) and it has not expired: a keep-alive stream of
 * a private preview pays a compare per request, not a MAC.
 */
static bool
cookie_one(struct edge_conn *c, const char *v, size_t n, int64_t now)
{
	int64_t exp = 0;

	if (n == c->ck_len && c->ck_gen == c->view_gen && c->ck_exp > now &&
	    memcmp(v, c->ck, n) == 0)
		return true;
	if (!pvauth_cookie_ok(c->e->core, c->view.app_id, c->view.epoch, v, n,
	                      now, &exp))
		return false;
	memcpy(c->ck, v, n); /* n < PVAUTH_COOKIE_MAX: checked */
	c->ck_len = n;
	c->ck_exp = exp;
	c->ck_gen = c->view_gen;
	return true;
}

/* Whether one of the request's cookies is a valid preview cookie. */
static bool
cookie_valid(struct edge_conn *c)
{
	const struct edge_head *h = c->head;
	static const char name[] = PVAUTH_COOKIE "=";
	const size_t k = sizeof(name) - 1;
	int64_t now = clock_now();

	for (int i = 0; i < h->n; i++) {
		const char *v = h->bytes + h->value[i].off, *end;
		if (h->name[i].len != 6 ||
		    strncasecmp(h->bytes + h->name[i].off, "cookie", 6) != 0)
			continue;
		end = v + h->value[i].len;
		for (const char *p = v; p < end;) {
			const char *semi = memchr(p, ';', (size_t)(end - p));
			const char *stop = semi ? semi : end;
			while (p < stop && (*p == ' ' || *p == '\t'))
				p++;
			if ((size_t)(stop - p) > k && memcmp(p, name, k) == 0 &&
			    cookie_one(c, p + k, (size_t)(stop - p) - k, now))
				return true;
			p = stop + 1;
		}
	}
	return false;
}

/*
 * The view of the host's app (key: a sandbox id, or a published app's
 * id), asked again only when any app's visibility changed since or the
 * key is another.
 */
static void
view_refresh(struct edge_conn *c, const char *key, bool app, bool gated)
{
	uint64_t gen = pvauth_generation(c->e->core);

	if (gen == c->view_gen && strcmp(c->view_sb, key) == 0 &&
	    (!app || c->view.private_ == gated))
		return;
	if (app) {
		c->view_found = true;
		memset(&c->view, 0, sizeof(c->view));
		snprintf(c->view.app_id, sizeof(c->view.app_id), "%s", key);
		c->view.private_ = gated;
		c->view.epoch = pvauth_app_epoch(c->e->core, key);
	} else {
		c->view_found = pvauth_view(c->e->core, key, &c->view);
	}
	c->ck_len = 0; /* proved for another app or epoch */
	c->view_gen = gen;
	snprintf(c->view_sb, sizeof(c->view_sb), "%s", key);
}

static int
gate(struct edge_conn *c, const char *key, bool app, bool gated)
{
	const char *url = c->head->bytes + c->head->first.off;
	size_t n = c->head->first.len;

	if (c->e->core == NULL)
		return 0; /* unit tests: no control plane */
	edge_target_path(&url, &n);
	view_refresh(c, key, app, gated);
	if (starts_with(url, n, PVAUTH_PATH)) {
		size_t k = strlen(PVAUTH_AUTH_PATH);
		if (n >= k && memcmp(url, PVAUTH_AUTH_PATH, k) == 0 &&
		    (n == k || url[k] == '?'))
			exchange(c, c->view_found, &c->view, url, n);
		else
			edge_page(c, EDGE_PAGE_NO_PREVIEW, NULL);
		return -1;
	}
	if (!c->view_found || !c->view.private_ || cookie_valid(c))
		return 0;
	edge_page(c, EDGE_PAGE_NO_PREVIEW, NULL);
	return -1;
}

int
edge_private_gate(struct edge_conn *c, const char *id)
{
	return gate(c, id, false, false);
}

int
edge_private_gate_app(struct edge_conn *c, const char *app_id, bool gated)
{
	return gate(c, app_id, true, gated);
}
