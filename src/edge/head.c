/*
 * Heads: http_parser's callbacks copy a head (request line or status
 * line, header lines) into the connection's struct edge_head, and the
 * two writers below turn it into the head we send on.
 *
 * A head is copied rather than pointed into the read buffer so that the
 * buffer can be compacted and refilled freely while a head arrives in
 * pieces; it is at most EDGE_MAX_HEADER_BYTES, copied once, and lives in
 * a struct taken from a pool (pool.c) only while a head is read and
 * rewritten.  Heads are collected for one parser at a time
 * (c->head_owner): the request's until it is routed, then the
 * response's until its head is written.  Callbacks from the other
 * parser (a chunked request's trailers arriving while the response head
 * is read, or the response's trailers) are ignored; trailers pass
 * through with the body bytes anyway.
 *
 * Framing is strict (edge_head_check): a request whose length could be
 * read two ways by two parsers (ours and the app's) is refused with 400
 * before it is routed: white space in a header name (http_parser's lax
 * mode takes "Content-Length : 5" as a header of another name, which an
 * app may not), Transfer-Encoding other than exactly "chunked" (no
 * other coding is in use in requests; nginx refuses them too),
 * Transfer-Encoding with Content-Length, and Content-Lengths that
 * differ.  The framing the app sees is then ours, written afresh from
 * what http_parser decided: one "Transfer-Encoding: chunked" or one
 * "Content-Length", never the client's lines.
 *
 * Requests go on with Host: localhost:<port> (dev servers such as Vite
 * refuse other hosts) and the edge's own view in X-Forwarded-For (the
 * peer's address), X-Forwarded-Proto (https when PREVIEW_TLS says a TLS
 * proxy is in front, else http) and X-Forwarded-Host (the host the
 * request was routed by, written from its parsed parts in lower case:
 * never the client's bytes); the client's
 * X-Forwarded-*, Forwarded and X-Real-IP are dropped, never trusted:
 * the edge is the first hop it knows of (but for the console's host
 * behind the TLS proxy, whose X-Forwarded-For names the browser:
 * put_client).  Responses lose X-Frame-Options
 * and get "Content-Security-Policy: frame-ancestors <console origin>"
 * instead (the console's origin on the port the request came to), so
 * only the console may show the app in a frame; an app's
 * own policies keep every directive but frame-ancestors, which ours
 * replaces.  Everything else is passed as it came, Connection and
 * Upgrade included.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <string.h>
#include <strings.h>

#include "edge/internal.h"

void
edge_head_begin(struct edge_conn *c, const http_parser *owner)
{
	c->head_owner = owner;
	c->head_raw = 0;
	c->head_complete = false;
	c->head_too_many = false;
}

void
edge_head_release(struct edge_conn *c)
{
	edge_head_put(c->e, c->head);
	c->head = NULL;
}

static struct edge_head *
head_of(http_parser *p)
{
	struct edge_conn *c = p->data;

	return c->head_owner == p ? c->head : NULL;
}

/* Pieces of one span arrive back to back, so they stay contiguous. */
static int
head_add(struct edge_head *h, struct edge_span *s, const char *at, size_t len)
{
	if (len > sizeof(h->bytes) - h->len)
		return -1;
	if (s->len == 0)
		s->off = (uint32_t)h->len;
	memcpy(h->bytes + h->len, at, len);
	h->len += len;
	s->len += (uint32_t)len;
	return 0;
}

/* A head starts: take a head from the pool (or keep the one we hold). */
static int
on_message_begin(http_parser *p)
{
	struct edge_conn *c = p->data;
	struct edge_head *h;

	if (c->head_owner != p)
		return 0;
	if (c->head == NULL && (c->head = edge_head_get(c->e)) == NULL)
		return -1;
	h = c->head;
	h->len = 0;
	h->first = (struct edge_span){0, 0};
	h->n = 0;
	h->in_value = false;
	return 0;
}

static int
on_first(http_parser *p, const char *at, size_t len)
{
	struct edge_head *h = head_of(p);

	return h ? head_add(h, &h->first, at, len) : 0;
}

static int
on_field(http_parser *p, const char *at, size_t len)
{
	struct edge_head *h = head_of(p);

	if (h == NULL)
		return 0;
	if (h->in_value || h->n == 0) {
		if (h->n == EDGE_MAX_HEADER_COUNT) {
			((struct edge_conn *)p->data)->head_too_many = true;
			return -1;
		}
		h->name[h->n] = (struct edge_span){0, 0};
		h->value[h->n] = (struct edge_span){0, 0};
		h->n++;
		h->in_value = false;
	}
	return head_add(h, &h->name[h->n - 1], at, len);
}

static int
on_value(http_parser *p, const char *at, size_t len)
{
	struct edge_head *h = head_of(p);

	if (h == NULL || h->n == 0)
		return 0;
	h->in_value = true;
	return head_add(h, &h->value[h->n - 1], at, len);
}

/* Stops the parser on the head's last byte, so the caller sees where the
 * head ends and can write it before any body byte. */
static int
on_request_head(http_parser *p)
{
	struct edge_conn *c = p->data;

	if (c->head_owner == p) {
		c->head_complete = true;
		http_parser_pause(p, 1);
	}
	return 0;
}

/* As above; also tells the parser which answers have no body. */
static int
on_response_head(http_parser *p)
{
	struct edge_conn *c = p->data;
	unsigned s = p->status_code;

	on_request_head(p);
	if (c->req.method == HTTP_HEAD || s == 204 || s == 304 ||
	    (s >= 100 && s < 200))
		return 1;
	return 0;
}

/* Stops the parser at the end of a message: what follows is the next
 * request (or the other protocol after an upgrade). */
static int
on_request_done(http_parser *p)
{
	struct edge_conn *c = p->data;

	c->req_done = true;
	http_parser_pause(p, 1);
	return 0;
}

static int
on_response_done(http_parser *p)
{
	struct edge_conn *c = p->data;

	c->res_msg = true;
	http_parser_pause(p, 1);
	return 0;
}

void
edge_head_settings(http_parser_settings *req, http_parser_settings *res)
{
	memset(req, 0, sizeof(*req));
	req->on_message_begin = on_message_begin;
	req->on_url = on_first;
	req->on_header_field = on_field;
	req->on_header_value = on_value;
	req->on_headers_complete = on_request_head;
	req->on_message_complete = on_request_done;
	*res = *req;
	res->on_url = NULL;
	res->on_status = on_first;
	res->on_headers_complete = on_response_head;
	res->on_message_complete = on_response_done;
}

static bool
span_is(const struct edge_head *h, struct edge_span s, const char *name)
{
	size_t n = strlen(name);

	return s.len == n && strncasecmp(h->bytes + s.off, name, n) == 0;
}

static bool
span_has_space(const struct edge_head *h, struct edge_span s)
{
	for (uint32_t i = 0; i < s.len; i++) {
		char ch = h->bytes[s.off + i];
		if (ch == ' ' || ch == '\t')
			return true;
	}
	return false;
}

/* Skips optional white space; returns the new position. */
static size_t
ows(const char *v, size_t i, size_t n)
{
	while (i < n && (v[i] == ' ' || v[i] == '\t'))
		i++;
	return i;
}

/*
 * One Transfer-Encoding line: counts its codings into *codings and
 * whether each is "chunked"; false for anything else (empty members
 * of the list are allowed and skipped, as RFC 9110 says).
 */
static bool
te_codings(const char *v, size_t n, int *codings)
{
	size_t i = 0;

	while (i < n) {
		size_t start = ows(v, i, n), end = start;
		while (end < n && v[end] != ',')
			end++;
		i = end + 1;
		size_t last = end;
		while (last > start &&
		       (v[last - 1] == ' ' || v[last - 1] == '\t'))
			last--;
		if (last == start)
			continue;
		if (last - start != 7 || strncasecmp(v + start, "chunked", 7))
			return false;
		(*codings)++;
	}
	return true;
}

int
edge_head_check(const struct edge_conn *c, const char **why)
{
	const struct edge_head *h = c->head;
	const char *cl = NULL;
	size_t cllen = 0;
	int codings = 0, lengths = 0;

	for (int i = 0; i < h->n; i++) {
		const char *v = h->bytes + h->value[i].off;
		size_t vlen = h->value[i].len;

		if (h->name[i].len == 0 || span_has_space(h, h->name[i])) {
			*why = "A header name is empty or holds white space.";
			return -1;
		}
		if (span_is(h, h->name[i], "transfer-encoding") &&
		    !te_codings(v, vlen, &codings)) {
			*why = "Only the chunked transfer coding is accepted.";
			return -1;
		}
		if (!span_is(h, h->name[i], "content-length"))
			continue;
		if (lengths++ && (vlen != cllen || memcmp(v, cl, vlen) != 0)) {
			*why = "Content-Length is given twice, differently.";
			return -1;
		}
		cl = v;
		cllen = vlen;
	}
	if (codings > 1) {
		*why = "The chunked transfer coding is given twice.";
		return -1;
	}
	if (codings == 1 && lengths) {
		*why = "Both Transfer-Encoding and Content-Length are given.";
		return -1;
	}
	if ((codings == 1) != ((c->req.flags & F_CHUNKED) != 0)) {
		*why = "Transfer-Encoding is malformed.";
		return -1;
	}
	return 0;
}

int
edge_head_find(const struct edge_head *h, const char *name, const char **v,
               size_t *vlen)
{
	int found = 0;

	for (int i = 0; i < h->n; i++) {
		if (!span_is(h, h->name[i], name))
			continue;
		if (found++)
			return -1;
		*v = h->bytes + h->value[i].off;
		*vlen = h->value[i].len;
	}
	return found;
}

/* Appends, remembering a failure (the cap) for one check at the end. */
struct out {
	struct buf *b;
	bool bad;
};

static void
put(struct out *o, const void *p, size_t n)
{
	if (buf_append(o->b, p, n) < 0)
		o->bad = true;
}

static void
puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* Decimal, without printf: this runs twice per proxied request. */
static void
put_uint(struct out *o, unsigned v)
{
	char d[12];
	size_t i = sizeof(d);

	do
		d[--i] = (char)('0' + v % 10);
	while ((v /= 10) && i > 0);
	put(o, d + i, sizeof(d) - i);
}

static void
put_version(struct out *o, const http_parser *p)
{
	puts_(o, "HTTP/");
	put_uint(o, p->http_major);
	put(o, ".", 1);
	put_uint(o, p->http_minor);
}

static void
put_span(struct out *o, const struct edge_head *h, struct edge_span s)
{
	put(o, h->bytes + s.off, s.len);
}

static void
put_header(struct out *o, const struct edge_head *h, int i)
{
	put_span(o, h, h->name[i]);
	put(o, ": ", 2);
	put_span(o, h, h->value[i]);
	put(o, "\r\n", 2);
}

/* Headers the edge writes itself: the client's are never passed on. */
static const char *const edge_ours[] = {
    "host",      "x-forwarded-for", "x-forwarded-proto", "x-forwarded-host",
    "forwarded", "x-real-ip",       "content-length",    "transfer-encoding",
};

static bool
is_ours(const struct edge_head *h, struct edge_span name)
{
	for (size_t i = 0; i < sizeof(edge_ours) / sizeof(edge_ours[0]); i++)
		if (span_is(h, name, edge_ours[i]))
			return true;
	return false;
}

/* The framing http_parser read, written canonically. */
static void
put_framing(struct out *o, const http_parser *p)
{
	if (p->flags & F_CHUNKED) {
		puts_(o, "Transfer-Encoding: chunked\r\n");
	} else if (p->content_length != ULLONG_MAX &&
	           (p->flags & F_CONTENTLENGTH)) {
		char d[24];
		size_t i = sizeof(d);
		uint64_t v = p->content_length;

		do
			d[--i] = (char)('0' + v % 10);
		while ((v /= 10) && i > 0);
		puts_(o, "Content-Length: ");
		put(o, d + i, sizeof(d) - i);
		put(o, "\r\n", 2);
	}
}

/*
 * The client's address for X-Forwarded-For: the peer's.  Only on the
 * console's host behind the TLS proxy (PREVIEW_TLS, a loopback peer: the
 * proxy) is the last hop of the proxy's X-Forwarded-For taken instead,
 * when it is an IP address, so that the API's sign-in limit counts
 * browsers, not the proxy.
 */
static void
put_client(const struct edge_conn *c, struct out *o)
{
	const char *v = NULL, *last;
	size_t n = 0, k;
	char hop[INET6_ADDRSTRLEN];
	unsigned char a[16];

	if (!c->console || !c->e->tls_proxy_exempt ||
	    !(strncmp(c->ip, "127.", 4) == 0 || strcmp(c->ip, "::1") == 0) ||
	    edge_head_find(c->head, "x-forwarded-for", &v, &n) != 1) {
		puts_(o, c->ip);
		return;
	}
	last = v + n;
	while (last > v && last[-1] != ',')
		last--;
	k = (size_t)(v + n - last);
	while (k && (*last == ' ' || *last == '\t'))
		last++, k--;
	while (k && (last[k - 1] == ' ' || last[k - 1] == '\t'))
		k--;
	if (k == 0 || k >= sizeof(hop)) {
		puts_(o, c->ip);
		return;
	}
	memcpy(hop, last, k);
	hop[k] = '\0';
	if (inet_pton(AF_INET, hop, a) == 1 || inet_pton(AF_INET6, hop, a) == 1)
		puts_(o, hop);
	else
		puts_(o, c->ip);
}

static bool
our_cookie(const char *p, size_t n)
{
	static const char *const names[] = {PVAUTH_COOKIE "=", "sbx_session="};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t k = strlen(names[i]);
		if (n >= k && memcmp(p, names[i], k) == 0)
			return true;
	}
	return false;
}

/*
 * A Cookie line for an app: without our cookies (the preview cookie and
 * the console's session, which its host-only scope keeps away anyway),
 * dropped when nothing else is left.  The app never sees a credential
 * of ours.
 */
static void
put_cookies(struct out *o, const struct edge_head *h, int i)
{
	const char *v = h->bytes + h->value[i].off, *end = v + h->value[i].len;
	bool any = false;

	for (const char *p = v; p < end;) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *stop = semi ? semi : end, *last = stop;
		while (p < stop && (*p == ' ' || *p == '\t'))
			p++;
		while (last > p && (last[-1] == ' ' || last[-1] == '\t'))
			last--;
		if (last > p && !our_cookie(p, (size_t)(last - p))) {
			puts_(o, any ? "; " : "Cookie: ");
			put(o, p, (size_t)(last - p));
			any = true;
		}
		p = stop + 1;
	}
	if (any)
		put(o, "\r\n", 2);
}

static void
put_lower(struct out *o, const char *name, const char *v, size_t n)
{
	puts_(o, name);
	for (size_t i = 0; i < n; i++) {
		char ch = (char)tolower((unsigned char)v[i]);
		put(o, &ch, 1);
	}
	put(o, "\r\n", 2);
}

/*
 * X-Forwarded-Host: the host the request was routed by, from its parsed
 * parts (route.c: c->t, the domain, c->port), lower case, never the
 * client's bytes.
 */
static void
put_forwarded_host(const struct edge_conn *c, struct out *o)
{
	char id[ULID_LEN + 1];

	puts_(o, "X-Forwarded-Host: ");
	if (c->console) {
		puts_(o, "console.");
	} else {
		for (size_t i = 0; i <= ULID_LEN; i++)
			id[i] = (char)tolower((unsigned char)c->t.id[i]);
		puts_(o, "s-");
		puts_(o, id);
		put(o, "-", 1);
		put_uint(o, (unsigned)c->t.port);
		puts_(o, ".preview.");
	}
	puts_(o, c->e->domain);
	puts_(o, c->port);
	put(o, "\r\n", 2);
}

int
edge_head_request(struct edge_conn *c, const char *host, size_t hostlen)
{
	struct out o = {&c->rq.out, false};
	const struct edge_head *h = c->head;

	buf_reset(o.b);
	c->rq.out_sent = 0;
	puts_(&o, http_method_str((enum http_method)c->req.method));
	put(&o, " ", 1);
	put_span(&o, c->head, c->head->first);
	put(&o, " ", 1);
	put_version(&o, &c->req);
	if (c->console || c->published) {
		/* the API checks it; a published app answers its own name */
		puts_(&o, "\r\nHost: ");
		put(&o, host, hostlen);
	} else {
		puts_(&o, "\r\nHost: localhost:");
		put_uint(&o, (unsigned)c->t.port);
	}
	put(&o, "\r\n", 2);
	for (int i = 0; i < h->n; i++) {
		if (is_ours(h, h->name[i]))
			continue;
		if (!c->console && span_is(h, h->name[i], "cookie"))
			put_cookies(&o, h, i);
		else
			put_header(&o, h, i);
	}
	put_framing(&o, &c->req);
	puts_(&o, "X-Forwarded-For: ");
	put_client(c, &o);
	puts_(&o, c->e->tls ? "\r\nX-Forwarded-Proto: https\r\n"
	                    : "\r\nX-Forwarded-Proto: http\r\n");
	if (c->published) /* publish_route matched it: a known name */
		put_lower(&o, "X-Forwarded-Host: ", host, hostlen);
	else
		put_forwarded_host(c, &o);
	put(&o, "\r\n", 2);
	return o.bad ? -1 : 0;
}

/*
 * An app's Content-Security-Policy without its frame-ancestors (ours is
 * added as a policy of its own, and policies combine by intersection);
 * a policy left empty is dropped.
 */
static void
put_policy(struct out *o, const struct edge_head *h, int i)
{
	const char *v = h->bytes + h->value[i].off;
	size_t n = h->value[i].len, pos = 0;
	bool any = false;

	while (pos < n) {
		size_t start = ows(v, pos, n), end = start, name = start;
		while (end < n && v[end] != ';')
			end++;
		pos = end + 1;
		while (name < end && v[name] != ' ' && v[name] != '\t')
			name++;
		if (end == start ||
		    (name - start == 15 &&
		     strncasecmp(v + start, "frame-ancestors", 15) == 0))
			continue;
		if (!any) {
			put_span(o, h, h->name[i]);
			put(o, ": ", 2);
		} else {
			put(o, "; ", 2);
		}
		while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
			end--;
		put(o, v + start, end - start);
		any = true;
	}
	if (any)
		put(o, "\r\n", 2);
}

/*
 * The console's origin as the browser sees it: the scheme of the
 * previews, console.<domain>, and the port of this request's Host (the
 * console and its previews come through the same port, e.g. an ssh
 * tunnel's 8080); without one, the configured origin.
 */
static void
edge_put_console_origin(const struct edge_conn *c, struct out *o)
{
	const struct edge *e = c->e;

	if (c->port[0] == '\0' || e->domain[0] == '\0') {
		puts_(o, e->console_origin);
		return;
	}
	puts_(o, e->tls ? "https://console." : "http://console.");
	puts_(o, e->domain);
	if (!(strcmp(c->port, e->tls ? ":443" : ":80") == 0))
		puts_(o, c->port);
}

int
edge_head_response(struct edge_conn *c)
{
	const struct edge_head *h = c->head;
	struct out o = {&c->rs.out, false};

	put_version(&o, &c->res);
	put(&o, " ", 1);
	put_uint(&o, c->res.status_code);
	put(&o, " ", 1);
	if (h->first.len)
		put_span(&o, h, h->first);
	else
		puts_(&o,
		      http_status_str((enum http_status)c->res.status_code));
	put(&o, "\r\n", 2);
	if (c->console || c->published) {
		/* The API's answer on the console's host; a published app's
		 * own headers (it is not framed by the console). */
		for (int i = 0; i < h->n; i++)
			put_header(&o, h, i);
		if (c->console)
			edge_console_headers(c, o.b);
		put(&o, "\r\n", 2);
		return o.bad ? -1 : 0;
	}
	for (int i = 0; i < h->n; i++) {
		if (span_is(h, h->name[i], "x-frame-options"))
			continue;
		if (span_is(h, h->name[i], "content-security-policy"))
			put_policy(&o, h, i);
		else
			put_header(&o, h, i);
	}
	puts_(&o, "Content-Security-Policy: frame-ancestors ");
	edge_put_console_origin(c, &o);
	put(&o, "\r\n\r\n", 4);
	return o.bad ? -1 : 0;
}

/* --- the console host's headers (console.c) ------------------------ */

void
edge_console_headers(const struct edge_conn *c, struct buf *o)
{
	const struct edge *e = c->e;
	const char *s = e->tls ? "https" : "http";

	buf_appendf(
	    o,
	    "Content-Security-Policy: default-src 'self'; script-src "
	    "'self'; style-src 'self'; img-src 'self' data:; font-src "
	    "'self'; connect-src 'self'; frame-src %s://*.preview.%s%s; "
	    "frame-ancestors 'none'; base-uri 'none'; form-action "
	    "'self'; object-src 'none'\r\n"
	    "X-Content-Type-Options: nosniff\r\n"
	    "Referrer-Policy: no-referrer\r\n"
	    "X-Frame-Options: DENY\r\n",
	    s, e->domain, c->port);
}
