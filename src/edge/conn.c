/*
 * One client connection and, while it proxies, its connection to the
 * app: a state machine driven by edge-triggered readiness.
 *
 * Each socket remembers what epoll reported (rd, wr) until a short read
 * or write, or EAGAIN, uses it up, so the connection is simply "run":
 * a fixed sequence of steps (read the client, parse, write the app, read
 * the app, parse, write the client, settle) repeats until none of them
 * makes progress.  Backpressure falls out of it: a direction's buffer
 * holds at most EDGE_MAX_BUFFERED bytes, a full buffer is not read into,
 * and it empties only as fast as the other side takes bytes.  Nothing
 * waits to fill a buffer, so every SSE event is written as soon as it is
 * read.
 *
 * Both parsers only find boundaries.  Heads are copied (head.c) and
 * rewritten; body bytes are written from the buffer they were read into,
 * raw, chunked framing and trailers included.  The request parser pauses
 * at the end of each message, so pipelined requests wait in the buffer
 * until the answer before them is out.  The response parser does the
 * same and also marks 1xx answers (passed on, then the real answer
 * follows) and 101, after which both directions are a raw tunnel.
 *
 * An exchange ends when the request was read to its end and the answer
 * written; then both connections stay for the next request if both
 * sides keep alive.  A client that closes after a complete request (a
 * half-close) still gets its answer; one that closes in the middle of a
 * request ends everything.  A request we refuse before its body is read
 * is answered with "close", and the connection lingers, dropping what
 * still arrives, so the client reads the answer rather than a reset.
 *
 * The steps' reads and writes (and the epoll registration) are io.c's,
 * routing a parsed head is route.c's, and the connection to the app
 * upstream.c's; this file keeps the states and their transitions, one
 * state machine, since each step's outcome decides the next phase.
 *
 * Rejected: a ring buffer per direction (http_parser wants contiguous
 * bytes, and the buffer is almost always written out whole, so the
 * rare compaction costs less than split parsing); level-triggered epoll
 * (an epoll_ctl for every change of interest); a thread per connection.
 *
 * Phases and their deadlines (checked by edge_conn_tick every tick):
 * HEAD (idle keep-alive: EDGE_IDLE_TIMEOUT_MS; once a byte arrived, the
 * whole head within EDGE_HEADER_TIMEOUT_MS), CONNECT
 * (EDGE_CONNECT_TIMEOUT_MS), EXCHANGE and TUNNEL (no byte either way for
 * EDGE_STREAM_IDLE_TIMEOUT_MS), LINGER (EDGE_LINGER_MS).  Every step
 * that frees the connection returns -1 and nothing touches it after.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "edge/internal.h"
#include "lib/metrics.h"

/* The client's address for X-Forwarded-For; IPv4 on a dual-stack
 * listener shows as IPv4, not ::ffff:a.b.c.d. */
static void
peer_text(const struct sockaddr_storage *peer, char *out, size_t len)
{
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)peer;
	const void *a = NULL;
	int af = peer->ss_family;

	if (af == AF_INET) {
		a = &((const struct sockaddr_in *)peer)->sin_addr;
	} else if (af == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
		a = &in6->sin6_addr.s6_addr[12];
		af = AF_INET;
	} else if (af == AF_INET6) {
		a = &in6->sin6_addr;
	}
	if (a == NULL || inet_ntop(af, a, out, (socklen_t)len) == NULL)
		snprintf(out, len, "unknown");
}

struct edge_conn *
edge_conn_new(struct edge *e, int fd, const struct sockaddr_storage *peer)
{
	struct edge_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->e = e;
	c->cl = (struct edge_side){.fd = fd, .wr = true, .c = c};
	c->up = (struct edge_side){.fd = -1, .c = c};
	buf_init(&c->rq.out, EDGE_MAX_OUT_BYTES);
	buf_init(&c->rs.out, EDGE_MAX_OUT_BYTES);
	http_parser_init(&c->req, HTTP_REQUEST);
	c->req.data = c;
	c->res.data = c;
	edge_head_begin(c, &c->req);
	c->phase = EDGE_HEAD;
	c->since = c->last_io = e->now;
	peer_text(peer, c->ip, sizeof(c->ip));
	return c;
}

/* The request without credentials is no longer in flight (console.c). */
static void
preauth_end(struct edge_conn *c)
{
	if (c->preauth && c->client)
		c->client->preauth--;
	c->preauth = false;
}

void
edge_conn_close(struct edge_conn *c)
{
	struct edge *e = c->e;

	preauth_end(c);
	edge_upstream_close(c);
	edge_forget(e, &c->cl);
	close(c->cl.fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		e->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	e->nconns--;
	edge_client_put(e, c->client);
	edge_io_release(c, &c->rq);
	edge_io_release(c, &c->rs);
	edge_head_release(c);
	edge_published_release(c);
	free(c);
}

/* --- the request: client to app ------------------------------------- */

/*
 * The client is read only for what is wanted now: a head (in pieces of
 * EDGE_HEAD_READ_BYTES, once the parser took what came), the body of
 * the request in flight while the app takes it, a tunnel's bytes.  A
 * pipelined request stays in the client's socket, not in our memory,
 * until the answer before it is out.
 */
static size_t
client_limit(const struct edge_conn *c)
{
	const struct edge_io *io = &c->rq;

	switch (c->phase) {
	case EDGE_HEAD:
		return io->parsed < io->len ? 0
		                            : io->len + EDGE_HEAD_READ_BYTES;
	case EDGE_CONNECT:
	case EDGE_EXCHANGE:
		if (c->req_done || edge_io_blocked(io, &c->up))
			return 0;
		return EDGE_MAX_BUFFERED;
	case EDGE_TUNNEL:
		return edge_io_blocked(io, &c->up) ? 0 : EDGE_MAX_BUFFERED;
	case EDGE_LINGER:
		return EDGE_MAX_BUFFERED;
	}
	return 0;
}

static int
client_recv(struct edge_conn *c)
{
	size_t limit = client_limit(c);
	int r;

	if (limit == 0)
		return 0;
	r = edge_read(c, &c->cl, &c->rq, limit);

	if (r < 0) {
		edge_conn_close(c);
		return -1;
	}
	if (r > 0 && (c->phase == EDGE_EXCHANGE || c->phase == EDGE_TUNNEL) &&
	    !c->local)
		edge_touch(c);
	return r;
}

/* Runs the request parser over what waits; n bytes at most. */
static enum http_errno
request_parse(struct edge_conn *c, size_t n)
{
	struct edge_io *io = &c->rq;
	size_t used;

	used = http_parser_execute(&c->req, &c->e->req_settings,
	                           io->data + io->parsed, n);
	io->parsed += used;
	if (c->phase == EDGE_HEAD) {
		c->head_raw += used;
		io->off = io->parsed; /* the head is copied, not forwarded */
	}
	return HTTP_PARSER_ERRNO(&c->req);
}

/* The head is complete: take its last byte, then route. */
static void
request_ready(struct edge_conn *c)
{
	enum http_errno err;
	const char *why = NULL;

	c->head_complete = false;
	http_parser_pause(&c->req, 0);
	err = request_parse(c, 1);
	if (err != HPE_OK && err != HPE_PAUSED) {
		edge_page(c, EDGE_PAGE_BAD_REQUEST, NULL);
		return;
	}
	c->rq.off = c->rq.parsed;
	if (edge_head_check(c, &why) < 0) {
		edge_page(c, EDGE_PAGE_BAD_REQUEST, why);
		return;
	}
	c->req_body =
	    (c->req.flags & F_CHUNKED) ||
	    (c->req.content_length > 0 && c->req.content_length != ULLONG_MAX);
	metric_inc(METRIC_EDGE_REQUESTS);
	edge_route(c);
}

static int
request_head(struct edge_conn *c)
{
	struct edge_io *io = &c->rq;
	size_t n = io->len - io->parsed;
	enum http_errno err;

	if (n == 0)
		return 0;
	if (c->head_raw == 0) /* the header deadline runs from here */
		c->since = c->head_at = c->e->now;
	if (n > EDGE_MAX_HEADER_BYTES - c->head_raw)
		n = EDGE_MAX_HEADER_BYTES - c->head_raw;
	err = request_parse(c, n);
	if (err == HPE_PAUSED && c->head_complete)
		request_ready(c);
	else if (c->head_too_many || c->head_raw >= EDGE_MAX_HEADER_BYTES ||
	         err == HPE_HEADER_OVERFLOW)
		edge_page(c, EDGE_PAGE_TOO_LARGE, NULL);
	else if (err == HPE_CB_message_begin && c->head == NULL)
		edge_page(c, EDGE_PAGE_BUSY, NULL); /* no head: the budget */
	else if (err != HPE_OK)
		edge_page(c, EDGE_PAGE_BAD_REQUEST, NULL);
	return 1;
}

static int
request_body(struct edge_conn *c)
{
	struct edge_io *io = &c->rq;
	enum http_errno err;

	if (c->req_done || io->parsed == io->len)
		return 0;
	err = request_parse(c, io->len - io->parsed);
	if (err != HPE_OK && !(err == HPE_PAUSED && c->req_done)) {
		/* Bad framing in the middle of a body: nothing to save. */
		edge_conn_close(c);
		return -1;
	}
	if (c->local)
		io->off = io->parsed;
	return 1;
}

static int
request_feed_once(struct edge_conn *c)
{
	struct edge_io *io = &c->rq;

	switch (c->phase) {
	case EDGE_HEAD:
		return request_head(c);
	case EDGE_CONNECT:
	case EDGE_EXCHANGE:
		return request_body(c);
	case EDGE_TUNNEL:
		if (io->parsed == io->len)
			return 0;
		io->parsed = io->len;
		return 1;
	case EDGE_LINGER:
		if (io->len == 0)
			return 0;
		io->off = io->parsed = io->len = 0;
		return 1;
	}
	return 0;
}

static int
upstream_send(struct edge_conn *c)
{
	int r;

	if (c->phase == EDGE_CONNECT)
		return c->up.wr ? edge_upstream_connected(c) : 0;
	if (c->phase != EDGE_EXCHANGE && c->phase != EDGE_TUNNEL)
		return 0;
	r = edge_write(c, &c->up, &c->rq);
	if (r >= 0)
		return r;
	if (c->phase == EDGE_TUNNEL) {
		edge_conn_close(c);
		return -1;
	}
	/* The app stopped reading: its answer (or EOF) tells the rest. */
	c->up.shut = true;
	return 1;
}

/* --- the response: app to client ------------------------------------ */

static int
upstream_recv(struct edge_conn *c)
{
	int r;

	if (c->up.fd < 0 || c->phase == EDGE_CONNECT)
		return 0;
	/* An answer is read only as fast as the client takes it. */
	if (edge_io_blocked(&c->rs, &c->cl))
		return 0;
	r = edge_read(c, &c->up, &c->rs, EDGE_MAX_BUFFERED);
	if (r < 0) {
		if (c->phase == EDGE_TUNNEL) {
			edge_conn_close(c);
			return -1;
		}
		c->up.eof = true; /* a reset: settle decides as for EOF */
		return 1;
	}
	if (r > 0 && (c->phase == EDGE_EXCHANGE || c->phase == EDGE_TUNNEL))
		edge_touch(c);
	return r;
}

static void
tunnel_begin(struct edge_conn *c)
{
	c->phase = EDGE_TUNNEL;
	c->rq.parsed = c->rq.len; /* what follows the upgrade is raw */
	c->rs.parsed = c->rs.len;
}

static int
response_done(struct edge_conn *c)
{
	unsigned s = c->res.status_code;

	c->res_msg = false;
	http_parser_pause(&c->res, 0);
	if (s == 101)
		tunnel_begin(c);
	else if (s >= 200)
		c->res_done = true;
	else /* 1xx: passed on; the real answer follows on this parser */
		edge_head_begin(c, &c->res);
	return 1;
}

static enum http_errno
response_parse(struct edge_conn *c, size_t n)
{
	struct edge_io *io = &c->rs;
	bool in_head = c->head_owner == &c->res;
	size_t used;

	used = http_parser_execute(&c->res, &c->e->res_settings,
	                           io->data + io->parsed, n);
	io->parsed += used;
	if (in_head) {
		c->head_raw += used;
		io->off = io->parsed;
	}
	return HTTP_PARSER_ERRNO(&c->res);
}

/* The app's head is complete: take its last byte, write ours. */
static int
response_head(struct edge_conn *c)
{
	enum http_errno err;

	c->head_complete = false;
	http_parser_pause(&c->res, 0);
	err = response_parse(c, 1);
	c->rs.off = c->rs.parsed;
	if ((err != HPE_OK && err != HPE_PAUSED) || edge_head_response(c) < 0)
		return -1;
	c->res_started = true;
	/* Answered: no longer a stranger's wait (a 100 Continue is no
	 * answer: the body it asks for may be what never comes). */
	if (c->res.status_code >= 200 || c->res.status_code == 101)
		preauth_end(c);
	edge_head_begin(c, NULL); /* trailers are not collected */
	edge_head_release(c);
	return c->res_msg ? response_done(c) : 1;
}

static int
response_bad(struct edge_conn *c, const char *why)
{
	edge_upstream_close(c);
	if (!c->res_started) {
		buf_reset(&c->rs.out); /* a head cut short by the cap */
		c->rs.out_sent = 0;
		edge_page(c, EDGE_PAGE_BAD_GATEWAY, why);
		return 1;
	}
	edge_conn_close(c);
	return -1;
}

static int
response_feed_once(struct edge_conn *c)
{
	struct edge_io *io = &c->rs;
	bool in_head = c->head_owner == &c->res;
	size_t n = io->len - io->parsed;
	enum http_errno err;

	if (c->phase == EDGE_TUNNEL) {
		if (io->parsed == io->len)
			return 0;
		io->parsed = io->len;
		return 1;
	}
	if (c->phase != EDGE_EXCHANGE || c->local || c->res_done || n == 0)
		return 0;
	if (in_head && n > EDGE_MAX_HEADER_BYTES - c->head_raw)
		n = EDGE_MAX_HEADER_BYTES - c->head_raw;
	err = response_parse(c, n);
	if (err == HPE_PAUSED && c->head_complete) {
		if (response_head(c) < 0)
			return response_bad(c,
			                    "The app's answer is malformed.");
		return 1;
	}
	if (err == HPE_PAUSED && c->res_msg)
		return response_done(c);
	if (err != HPE_OK)
		return response_bad(c, "The app's answer is malformed.");
	if (in_head &&
	    (c->head_too_many || c->head_raw >= EDGE_MAX_HEADER_BYTES))
		return response_bad(c, "The app's header block is too large.");
	return 1;
}

/*
 * Parses until nothing changes, so that a head and the body bytes behind
 * it in the same read go out in one write.
 */
static int
feed(struct edge_conn *c, int (*once)(struct edge_conn *))
{
	int r, any = 0;

	while ((r = once(c)) > 0)
		any = 1;
	return r < 0 ? -1 : any;
}

static int
request_feed(struct edge_conn *c)
{
	return feed(c, request_feed_once);
}

static int
response_feed(struct edge_conn *c)
{
	return feed(c, response_feed_once);
}

static int
client_send(struct edge_conn *c)
{
	int r = edge_write(c, &c->cl, &c->rs);

	if (r < 0) {
		edge_conn_close(c);
		return -1;
	}
	return r;
}

/* --- transitions ---------------------------------------------------- */

static void
exchange_reset(struct edge_conn *c)
{
	c->phase = EDGE_HEAD;
	c->req_done = c->req_body = false;
	c->res_started = c->res_done = c->res_msg = false;
	c->local = c->retried = false;
	c->served = true;
	preauth_end(c);
	http_parser_init(&c->req, HTTP_REQUEST);
	edge_head_release(c);
	edge_head_begin(c, &c->req);
	buf_reset(&c->rq.out);
	buf_reset(&c->rs.out);
	c->rq.out_sent = c->rs.out_sent = 0;
	c->rs.ext = NULL;
	c->rs.ext_len = c->rs.ext_sent = 0;
	c->rs.ext_file = false;
	c->console = false;
	c->published = false;
	edge_published_release(c);
	c->rq.off = c->rq.parsed; /* pipelined bytes stay */
	c->rs.off = c->rs.parsed = c->rs.len = 0;
	edge_io_idle(c, &c->rq);
	edge_io_idle(c, &c->rs);
	c->since = c->last_io = c->e->now;
}

/* The answer is out: keep both connections for the next request, or not. */
static int
exchange_end(struct edge_conn *c)
{
	bool keep, keep_up;

	keep = !c->close_after && c->req_done && !c->cl.eof &&
	       http_should_keep_alive(&c->req) &&
	       (c->local || http_should_keep_alive(&c->res));
	keep_up = c->up.fd >= 0 && !c->up.eof && !c->up.shut && !c->local &&
	          c->req_done && http_should_keep_alive(&c->res) &&
	          edge_io_flushed(&c->rq) && c->rs.parsed == c->rs.len;
	if (!keep_up)
		edge_upstream_close(c);
	if (!keep && !c->req_done) {
		c->phase = EDGE_LINGER; /* the request is still coming */
		c->since = c->e->now;
		return 1;
	}
	if (!keep) {
		edge_conn_close(c);
		return -1;
	}
	exchange_reset(c);
	return 1;
}

static int
exchange_settle(struct edge_conn *c)
{
	if (c->cl.eof && !c->req_done) {
		edge_conn_close(c); /* the request was cut short */
		return -1;
	}
	if (!c->local && !c->res_done && c->up.eof &&
	    c->rs.parsed == c->rs.len) {
		edge_upstream_lost(c);
		return 1;
	}
	if (!c->res_done || !(c->req_done || c->close_after) ||
	    !edge_io_flushed(&c->rs))
		return 0;
	return exchange_end(c);
}

/* A FIN is passed on once the bytes before it are; both: done. */
static int
tunnel_settle(struct edge_conn *c)
{
	int r = 0;

	if (c->cl.eof && !c->up.shut && c->rq.off == c->rq.len &&
	    edge_io_flushed(&c->rq)) {
		shutdown(c->up.fd, SHUT_WR);
		c->up.shut = true;
		r = 1;
	}
	if (c->up.eof && !c->cl.shut && c->rs.off == c->rs.len &&
	    edge_io_flushed(&c->rs)) {
		shutdown(c->cl.fd, SHUT_WR);
		c->cl.shut = true;
		r = 1;
	}
	if (c->cl.shut && c->up.shut) {
		edge_conn_close(c);
		return -1;
	}
	return r;
}

static int
conn_settle(struct edge_conn *c)
{
	switch (c->phase) {
	case EDGE_HEAD:
		if (c->cl.eof) {
			edge_conn_close(c);
			return -1;
		}
		if (c->up.fd >= 0 && (c->up.eof || c->rs.len > c->rs.off)) {
			edge_upstream_close(
			    c); /* an idle app connection ended */
			c->rs.off = c->rs.parsed = c->rs.len = 0;
		}
		return 0;
	case EDGE_CONNECT:
		if (c->cl.eof && !c->req_done) {
			edge_conn_close(c);
			return -1;
		}
		return 0;
	case EDGE_EXCHANGE:
		return exchange_settle(c);
	case EDGE_TUNNEL:
		return tunnel_settle(c);
	case EDGE_LINGER:
		if (c->cl.eof) {
			edge_conn_close(c);
			return -1;
		}
		if (!c->cl.shut && edge_io_flushed(&c->rs)) {
			shutdown(c->cl.fd, SHUT_WR);
			c->cl.shut = true;
			return 1;
		}
		return 0;
	}
	return 0;
}

/* --- running --------------------------------------------------------- */

static int (*const edge_steps[])(struct edge_conn *) = {
    client_recv,   request_feed, upstream_send, upstream_recv,
    response_feed, client_send,  conn_settle,
};

void
edge_conn_run(struct edge_conn *c)
{
	int progress;

	do {
		progress = 0;
		for (size_t i = 0;
		     i < sizeof(edge_steps) / sizeof(edge_steps[0]); i++) {
			int r = edge_steps[i](c);
			if (r < 0)
				return;
			progress |= r;
		}
	} while (progress);
}

static bool
expired(const struct edge_conn *c, int64_t now)
{
	switch (c->phase) {
	case EDGE_HEAD:
		if (c->head_raw > 0)
			return now - c->since >= EDGE_HEADER_TIMEOUT_MS;
		if (!c->served) /* connected and silent */
			return now - c->since >= EDGE_FIRST_BYTE_TIMEOUT_MS;
		return now - c->last_io >= EDGE_IDLE_TIMEOUT_MS;
	case EDGE_CONNECT:
		return now - c->since >= EDGE_CONNECT_TIMEOUT_MS;
	case EDGE_EXCHANGE:
	case EDGE_TUNNEL:
		return now - c->last_io >= (c->local
		                                ? EDGE_IDLE_TIMEOUT_MS
		                                : EDGE_STREAM_IDLE_TIMEOUT_MS);
	case EDGE_LINGER:
		return now - c->since >= EDGE_LINGER_MS;
	}
	return false;
}

void
edge_conn_tick(struct edge_conn *c)
{
	/* Without credentials, head to answer has the head's time. */
	bool late =
	    c->preauth && c->e->now - c->head_at >= EDGE_PREAUTH_TIMEOUT_MS;

	if (!late && !expired(c, c->e->now))
		return;
	if (late || c->phase != EDGE_CONNECT) {
		edge_conn_close(c);
		return;
	}
	edge_upstream_failed(c); /* a connect timeout: as if refused */
	edge_conn_run(c);
}
