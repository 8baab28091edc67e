/*
 * libFuzzer target: what a hostile preview client controls at the edge.
 * The input is fed, in pieces whose size its first byte picks, to the
 * edge's request parser (http_parser with src/edge/head.c's callbacks)
 * and, separately, as an app's response; its text is also tried as a
 * Host header (src/edge/host.c).  Invariants: nothing crashes or reads
 * out of bounds (ASan); a request head the edge accepts
 * (edge_head_check) is rewritten into a head that http_parser reads
 * back whole, with the same method and the same framing (chunked, or
 * the same Content-Length), and no header name with white space; a
 * rewritten response parses back and never carries X-Frame-Options; a
 * host that parses names a canonical id and a port in 1-65535, and
 * writing it back parses to the same.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "edge/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct edge *
fz_edge(void)
{
	static struct edge *e;

	if (e == NULL) {
		e = calloc(1, sizeof(*e));
		edge_head_settings(&e->req_settings, &e->res_settings);
		snprintf(e->console_origin, sizeof(e->console_origin),
		         "http://console.localhost");
		snprintf(e->domain, sizeof(e->domain), "localhost");
	}
	return e;
}

static struct edge_conn *
fz_conn(struct edge *e)
{
	struct edge_conn *c = calloc(1, sizeof(*c));

	c->e = e;
	buf_init(&c->rq.out, EDGE_MAX_OUT_BYTES);
	buf_init(&c->rs.out, EDGE_MAX_OUT_BYTES);
	http_parser_init(&c->req, HTTP_REQUEST);
	c->req.data = c->res.data = c;
	snprintf(c->ip, sizeof(c->ip), "10.0.0.5");
	c->t.port = 3000;
	edge_head_begin(c, &c->req);
	return c;
}

static void
fz_free(struct edge_conn *c)
{
	edge_head_release(c);
	buf_release(&c->rq.out);
	buf_release(&c->rs.out);
	free(c);
}

/* Feeds until the head is complete or the parser fails. */
static bool
fz_feed(struct edge_conn *c, http_parser *p, const char *s, size_t n,
        size_t step)
{
	const http_parser_settings *set =
	    p == &c->req ? &c->e->req_settings : &c->e->res_settings;
	size_t off = 0;

	while (off < n && HTTP_PARSER_ERRNO(p) == HPE_OK) {
		size_t k = step < n - off ? step : n - off;
		off += http_parser_execute(p, set, s + off, k);
	}
	if (!(HTTP_PARSER_ERRNO(p) == HPE_PAUSED && c->head_complete))
		return false;
	/* take the head's last byte, as conn.c does */
	http_parser_pause(p, 0);
	c->head_complete = false;
	if (off < n)
		http_parser_execute(p, set, s + off, 1);
	return true;
}

struct reparse {
	bool done;
	int spaced; /* header names with white space */
};

static int
rp_field(http_parser *p, const char *at, size_t len)
{
	struct reparse *r = p->data;

	for (size_t i = 0; i < len; i++)
		if (at[i] == ' ' || at[i] == '\t')
			r->spaced++;
	return 0;
}

static int
rp_done(http_parser *p)
{
	((struct reparse *)p->data)->done = true;
	return 1; /* stop at the head: the body is not ours to check */
}

static int
rp_response_done(http_parser *p)
{
	((struct reparse *)p->data)->done = true;
	return 2; /* no body, no upgrade: only the head is checked */
}

static void
fz_request(const char *s, size_t n, size_t step)
{
	struct edge *e = fz_edge();
	struct edge_conn *c = fz_conn(e);
	const char *host = NULL, *why = NULL;
	size_t hostlen = 0;
	http_parser_settings set = {.on_header_field = rp_field,
	                            .on_headers_complete = rp_done};
	struct reparse r = {0};
	http_parser p;

	if (!fz_feed(c, &c->req, s, n, step) || edge_head_check(c, &why) < 0) {
		fz_free(c);
		return;
	}
	if (edge_head_find(c->head, "host", &host, &hostlen) != 1)
		host = "x", hostlen = 1;
	if (edge_head_request(c, host, hostlen) < 0) {
		fz_free(c);
		return;
	}
	http_parser_init(&p, HTTP_REQUEST);
	p.data = &r;
	http_parser_execute(&p, &set, c->rq.out.data, c->rq.out.len);
	if (!r.done || r.spaced || p.method != c->req.method ||
	    (p.flags & F_CHUNKED) != (c->req.flags & F_CHUNKED) ||
	    ((c->req.flags & F_CONTENTLENGTH) &&
	     p.content_length != c->req.content_length))
		__builtin_trap();
	fz_free(c);
}

static void
fz_response(const char *s, size_t n, size_t step)
{
	struct edge *e = fz_edge();
	struct edge_conn *c = fz_conn(e);
	http_parser_settings set = {.on_headers_complete = rp_response_done};
	struct reparse r = {0};
	http_parser p;

	c->req.method = HTTP_GET;
	edge_head_begin(c, &c->res);
	http_parser_init(&c->res, HTTP_RESPONSE);
	c->res.data = c;
	/* the head struct is the request's, kept for the response */
	c->head = edge_head_get(e);
	if (c->head == NULL || !fz_feed(c, &c->res, s, n, step) ||
	    edge_head_response(c) < 0) {
		fz_free(c);
		return;
	}
	http_parser_init(&p, HTTP_RESPONSE);
	p.data = &r;
	http_parser_execute(&p, &set, c->rs.out.data, c->rs.out.len);
	if (!r.done || strcasestr(c->rs.out.data, "\nx-frame-options:"))
		__builtin_trap();
	fz_free(c);
}

static void
fz_host(const char *s, size_t n)
{
	char id[ULID_LEN + 1], again[ULID_LEN + 1], back[128];
	int port = 0, port2 = 0;

	if (!edge_host_parse("localhost", s, n, id, &port))
		return;
	if (strlen(id) != ULID_LEN || port < 1 || port > 65535)
		__builtin_trap();
	snprintf(back, sizeof(back), "s-%s-%d.preview.localhost", id, port);
	if (!edge_host_parse("localhost", back, strlen(back), again, &port2) ||
	    strcmp(id, again) != 0 || port != port2)
		__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t step;

	if (size < 1)
		return 0;
	step = (size_t)(data[0] % 64) + 1;
	fz_request((const char *)data + 1, size - 1, step);
	fz_response((const char *)data + 1, size - 1, step);
	fz_host((const char *)data + 1, size - 1);
	return 0;
}
