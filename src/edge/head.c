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
 * Requests go on with Host: localhost:<port> (dev servers such as Vite
 * refuse other hosts), X-Forwarded-For (appended to), X-Forwarded-Proto
 * (kept when present) and X-Forwarded-Host (always ours); responses lose
 * X-Frame-Options, so the console can show the app in an iframe.
 * Everything else is passed as it came, Connection and Upgrade included.
 */
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

/*
 * The client's headers minus Host and X-Forwarded-Host (ours follow);
 * the client's address goes after the last X-Forwarded-For, if any.
 */
static void
put_request_headers(struct out *o, const struct edge_conn *c, bool *xff,
                    bool *proto)
{
	const struct edge_head *h = c->head;
	int last_xff = -1;

	for (int i = 0; i < h->n; i++)
		if (span_is(h, h->name[i], "x-forwarded-for"))
			last_xff = i;
	*xff = last_xff >= 0;
	for (int i = 0; i < h->n; i++) {
		if (span_is(h, h->name[i], "host") ||
		    span_is(h, h->name[i], "x-forwarded-host"))
			continue;
		if (span_is(h, h->name[i], "x-forwarded-proto"))
			*proto = true;
		if (i != last_xff) {
			put_header(o, h, i);
			continue;
		}
		put_span(o, h, h->name[i]);
		put(o, ": ", 2);
		put_span(o, h, h->value[i]);
		put(o, ", ", 2);
		puts_(o, c->ip);
		put(o, "\r\n", 2);
	}
}

int
edge_head_request(struct edge_conn *c, const char *host, size_t hostlen)
{
	struct out o = {&c->rq.out, false};
	bool xff = false, proto = false;

	buf_reset(o.b);
	c->rq.out_sent = 0;
	puts_(&o, http_method_str((enum http_method)c->req.method));
	put(&o, " ", 1);
	put_span(&o, c->head, c->head->first);
	put(&o, " ", 1);
	put_version(&o, &c->req);
	puts_(&o, "\r\nHost: localhost:");
	put_uint(&o, (unsigned)c->t.port);
	put(&o, "\r\n", 2);
	put_request_headers(&o, c, &xff, &proto);
	if (!xff) {
		puts_(&o, "X-Forwarded-For: ");
		puts_(&o, c->ip);
		put(&o, "\r\n", 2);
	}
	if (!proto)
		puts_(&o, "X-Forwarded-Proto: http\r\n");
	puts_(&o, "X-Forwarded-Host: ");
	put(&o, host, hostlen);
	put(&o, "\r\n\r\n", 4);
	return o.bad ? -1 : 0;
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
	for (int i = 0; i < h->n; i++)
		if (!span_is(h, h->name[i], "x-frame-options"))
			put_header(&o, h, i);
	put(&o, "\r\n", 2);
	return o.bad ? -1 : 0;
}
