/*
 * Upstream: the connection to the app a request goes to (route.c
 * decides which).  The target is resolved, and anything but PREVIEW_UP
 * is answered with a page; PREVIEW_UP gets a non-blocking connect whose
 * failure (refused, unreachable, EDGE_CONNECT_TIMEOUT_MS) asks
 * preview_connect_failed() whether the app is still starting or will
 * not listen.  The connection's close is io.c's (edge_upstream_close).
 *
 * A reused connection may be closed by the app just as a request goes
 * out (Node closes idle sockets after 5 s).  When that happens before a
 * byte of the answer came back, and the request has no body and is not a
 * POST, PATCH or LOCK (nginx's rule), it is sent again on a new
 * connection, once; anything else gets a 502.
 *
 * A sandbox on another node is reached through the node tunnel on
 * loopback (orch_target): the target carries a preamble, "SBX <id>
 * <port>\n", written once the connection is made and before any byte
 * of the request, on every new connection (a retry's too).
 */
#include <errno.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "edge/internal.h"

void
edge_touch(struct edge_conn *c)
{
	if (c->console || c->t.port == 0)
		return; /* the API, a published release: no sandbox */
	if (c->e->now - c->activity_at < EDGE_ACTIVITY_INTERVAL_MS)
		return;
	c->activity_at = c->e->now;
	activity_touch(c->e->core->act, c->t.id);
}

void
edge_upstream_connect(struct edge_conn *c, const struct sockaddr *sa,
                      socklen_t len)
{
	int fd, one = 1;

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	            0);
	if (fd < 0) {
		edge_page(c, EDGE_PAGE_BAD_GATEWAY, "out of sockets");
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->up = (struct edge_side){.fd = fd, .c = c};
	c->phase = EDGE_CONNECT;
	c->since = c->e->now;
	if (edge_watch(c->e, &c->up) < 0) {
		edge_upstream_close(c);
		edge_page(c, EDGE_PAGE_BAD_GATEWAY, "out of resources");
		return;
	}
	if (connect(fd, sa, len) == 0)
		c->up.wr = true; /* at once (loopback); the loop takes it on */
	else if (errno != EINPROGRESS)
		edge_upstream_failed(c);
}

/* Resolves id:port into c->t and connects, or answers with a page (the
 * console's API: connects to the API listener). */
void
edge_upstream_open(struct edge_conn *c, const char *id, int port)
{
	char copy[ULID_LEN + 1];

	c->t.preamble_len = 0; /* a preview's own, set by preview_resolve */
	if (c->console) {
		edge_upstream_close(c);
		edge_upstream_connect(
		    c, (const struct sockaddr *)&c->e->console.api,
		    c->e->console.api_len);
		c->up_api = c->up.fd >= 0;
		if (c->up_api) { /* given back by edge_upstream_close */
			c->e->api_conns++;
			if (c->client)
				c->client->api++;
		}
		return;
	}
	if (port == 0) { /* a server release: published.c set c->t.addr */
		edge_upstream_close(c);
		c->t.state = PREVIEW_UP;
		edge_upstream_connect(c, (const struct sockaddr *)&c->t.addr,
		                      sizeof(c->t.addr));
		return;
	}
	memcpy(copy, id, sizeof(copy)); /* id may point into c->t */
	edge_upstream_close(c);
	preview_resolve(c->e->core, copy, port, &c->t);
	c->activity_at = c->e->now; /* resolving counts as activity */
	if (c->t.state != PREVIEW_UP) {
		edge_page(c, EDGE_PAGE_TARGET, NULL);
		return;
	}
	edge_upstream_connect(c, (const struct sockaddr *)&c->t.addr,
	                      sizeof(c->t.addr));
}

/* The connect finished (up.wr): in EDGE_EXCHANGE now, or answered. */
int
edge_upstream_connected(struct edge_conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->up.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err) {
		edge_upstream_failed(c);
		return 1;
	}
	/* A sandbox on another node: the tunnel's preamble goes first.  The
	 * socket is new and its buffer empty: 96 bytes go whole or not. */
	if (c->t.preamble_len &&
	    send(c->up.fd, c->t.preamble, c->t.preamble_len, MSG_NOSIGNAL) !=
	        (ssize_t)c->t.preamble_len) {
		edge_upstream_failed(c);
		return 1;
	}
	c->phase = EDGE_EXCHANGE;
	c->last_io = c->e->now;
	return 1;
}

void
edge_upstream_failed(struct edge_conn *c)
{
	edge_upstream_close(c);
	if (c->console) {
		edge_page(c, EDGE_PAGE_BAD_GATEWAY,
		          "The API listener did not answer.");
		return;
	}
	if (c->t.port == 0) {
		edge_page(c, EDGE_PAGE_BAD_GATEWAY,
		          "The app's server did not answer.");
		return;
	}
	preview_connect_failed(c->e->core, &c->t);
	if (c->t.state == PREVIEW_UP)
		c->t.state = PREVIEW_FAILED;
	edge_page(c, EDGE_PAGE_TARGET, NULL);
}

/* As nginx: every method but these may be sent twice. */
static bool
idempotent(unsigned method)
{
	return method != HTTP_POST && method != HTTP_PATCH &&
	       method != HTTP_LOCK;
}

/*
 * The app closed (or reset) its connection before the response was
 * complete.  Before any answer: retry once or 502.  During an answer
 * without a length, EOF is its end; otherwise the client gets what came
 * and the connection closes.
 */
void
edge_upstream_lost(struct edge_conn *c)
{
	if (!c->res_started) {
		if (c->up_reused && !c->retried && !c->req_body &&
		    idempotent(c->req.method)) {
			c->retried = true;
			c->rq.out_sent = 0; /* the head goes out again */
			c->rs.off = c->rs.parsed = c->rs.len = 0;
			http_parser_init(&c->res, HTTP_RESPONSE);
			edge_head_begin(c, &c->res);
			edge_upstream_open(c, c->t.id, c->t.port);
			return;
		}
		edge_upstream_close(c);
		edge_page(c, EDGE_PAGE_BAD_GATEWAY,
		          "The app closed the connection without answering.");
		return;
	}
	if (HTTP_PARSER_ERRNO(&c->res) == HPE_OK)
		http_parser_execute(&c->res, &c->e->res_settings, NULL, 0);
	edge_upstream_close(c);
	c->res_msg = false;
	c->res_done = true;
	c->close_after = true;
}
