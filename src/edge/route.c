/*
 * Routing: which app a request goes to, once its head is parsed.
 *
 * A request is routed by its Host header (edge_host_parse): the
 * console's host goes to console.c, a private preview through its gate
 * (private.c), any other host to published.c (a published app's, or
 * the page of an unknown host).  When the connection
 * already holds an idle keep-alive connection to the same sandbox and
 * port, the request goes there without asking the control plane again:
 * that connection closes when the container stops, and the next request
 * then resolves afresh (preview_resolve is a lookup in the routing
 * table, under its lock, and a keep-alive benchmark should not pay even
 * that per request).  Otherwise upstream.c resolves the target and
 * connects.
 *
 * Apart from upstream.c so that the console, which opens upstream
 * connections of its own, sits between the two instead of in a cycle.
 */
#include <string.h>

#include "config/hosts.h"
#include "edge/internal.h"

/* The request head is parsed: answer it or send it on. */
void
edge_route(struct edge_conn *c)
{
	const char *host = NULL;
	size_t hostlen = 0;
	char id[ULID_LEN + 1];
	int port = 0, n;
	bool reuse;

	n = edge_head_find(c->head, "host", &host, &hostlen);
	if (n < 0) {
		edge_page(c, EDGE_PAGE_BAD_REQUEST,
		          "more than one Host header");
		return;
	}
	if (c->req.method == HTTP_CONNECT) {
		edge_page(c, EDGE_PAGE_BAD_METHOD, NULL);
		return;
	}
	edge_host_port(c, host, hostlen);
	if (n == 1 && console_host_match(c->e->domain, host, hostlen)) {
		edge_console_route(c, host, hostlen);
		return;
	}
	if (n == 0) {
		edge_page(c, EDGE_PAGE_NO_PREVIEW, NULL);
		return;
	}
	if (!edge_host_parse(c->e->domain, host, hostlen, id, &port)) {
		edge_published_route(c, host, hostlen);
		return;
	}
	if (edge_private_gate(c, id) < 0)
		return;
	reuse = c->up.fd >= 0 && !c->up.eof && !c->up_api &&
	        c->t.port == port && strcmp(c->t.id, id) == 0;
	if (reuse) {
		edge_touch(c);
	} else { /* for the head below; open() resolves */
		memcpy(c->t.id, id, sizeof(c->t.id));
		c->t.port = port;
	}
	if (edge_head_request(c, host, hostlen) < 0) {
		edge_page(c, EDGE_PAGE_TOO_LARGE, NULL);
		return;
	}
	edge_head_begin(c, &c->res); /* keeps the head struct for it */
	http_parser_init(&c->res, HTTP_RESPONSE);
	c->res.data = c;
	if (reuse) {
		c->up_reused = true;
		c->phase = EDGE_EXCHANGE;
		return;
	}
	edge_upstream_open(c, id, port);
}
