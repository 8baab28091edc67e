/*
 * The edge's loop: one thread, one epoll set, edge-triggered.  It owns
 * the listener, every client connection and every connection to an app;
 * nothing else touches them, so nothing is locked.  The control plane is
 * reached only through preview/preview.h, which never blocks.
 *
 * Every socket is registered once (in, out, rdhup; edge-triggered) and
 * never modified: readiness is remembered per socket (io.c), which
 * costs no epoll_ctl per request.  A socket closed while the batch that
 * epoll_wait returned is being handled may still appear later in that
 * batch; edge_forget() blanks those entries, so no event reaches freed
 * or reused memory.  Deadlines are checked every EDGE_TICK_MS by walking
 * the connections (a few thousand at most); the loop sleeps without a
 * timeout when there are none.  edge_stop() wakes the loop through an
 * eventfd.
 *
 * Connections beyond EDGE_MAX_CONNECTIONS are accepted and closed at
 * once, so the backlog never fills with clients we will not serve.  When
 * accept fails for lack of descriptors the listener is retried each tick.
 *
 * One client cannot take the edge for itself: each address (an IPv6
 * client's /64, which one host is routinely given) holds at most
 * EDGE_MAX_CLIENT_CONNECTIONS (counted in clients.c), a small part of
 * the global cap; more get a canned 429 and are closed at accept.
 * Behind the TLS proxy (PREVIEW_TLS) loopback peers are that proxy,
 * which carries every browser, so they are not counted.  The edge's buffers
 * share one budget (pool.c); when it is spent, the tick closes the connections
 * whose peer has taken no byte for EDGE_SHED_STALL_MS (non-reading
 * clients pin what they were sent), and runs again the connections
 * whose reads waited for it.
 */
#include "edge/edge.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "edge/internal.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/metrics.h"

_Static_assert(EDGE_MAX_CLIENT_CONNECTIONS * 8 <= EDGE_MAX_CONNECTIONS,
               "one client address must not fill the edge");

static const char edge_too_many[] =
    "HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain\r\n"
    "Content-Length: 38\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
    "Too many connections from your address\n";

/* Answers 429 and closes: what the client sent is dropped first, so
 * that the close is a FIN after our answer rather than a reset. */
static void
refuse(int fd)
{
	char junk[4096];

	if (send(fd, edge_too_many, sizeof(edge_too_many) - 1,
	         MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		close(fd);
		return;
	}
	shutdown(fd, SHUT_WR);
	for (int i = 0; i < 16; i++) /* bounded: a flood is not drained */
		if (recv(fd, junk, sizeof(junk), MSG_DONTWAIT) <= 0)
			break;
	close(fd);
}

static void
edge_add(struct edge *e, int fd, const struct sockaddr_storage *peer)
{
	struct edge_conn *c;
	struct edge_client *cl = NULL;
	unsigned char key[16];
	int one = 1;

	if (e->nconns >= EDGE_MAX_CONNECTIONS) {
		close(fd);
		return;
	}
	if (edge_client_key(e, peer, key) &&
	    (cl = edge_client_get(e, key)) == NULL) {
		close(fd);
		return;
	}
	if (cl && cl->n >= EDGE_MAX_CLIENT_CONNECTIONS) {
		refuse(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c = edge_conn_new(e, fd, peer);
	if (c == NULL || edge_watch(e, &c->cl) < 0) {
		free(c);
		close(fd);
		if (cl) {
			cl->n++;
			edge_client_put(e, cl); /* frees a count made for us */
		}
		return;
	}
	if (cl)
		cl->n++;
	c->client = cl;
	c->next = e->conns;
	if (e->conns)
		e->conns->prev = c;
	e->conns = c;
	e->nconns++;
}

static void
edge_accept(struct edge *e)
{
	struct sockaddr_storage peer;
	socklen_t len;
	int fd;

	e->accept_retry = false;
	for (;;) {
		len = sizeof(peer);
		fd = accept4(e->lfd, (struct sockaddr *)&peer, &len,
		             SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			metric_inc(METRIC_EDGE_CONNECTIONS);
			edge_add(e, fd, &peer);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			/* EMFILE and kin: the pending ones wait for a tick. */
			if (e->now - e->accept_warned >= 10000) {
				log_warn("edge: accept: %s", strerror(errno));
				e->accept_warned = e->now;
			}
			e->accept_retry = true;
		}
		return;
	}
}

static void
edge_event(struct edge *e, const struct epoll_event *ev)
{
	struct edge_side *s = ev->data.ptr;
	uint32_t m = ev->events;

	if (s == NULL)
		return;
	if (s == &e->lside) {
		edge_accept(e);
		return;
	}
	if (s == &e->wside) {
		e->stop = true;
		return;
	}
	if (m & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		s->rd = true;
	if (m & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		s->rdhup = true;
	if (m & (EPOLLOUT | EPOLLHUP | EPOLLERR))
		s->wr = true;
	edge_conn_run(s->c);
}

/*
 * Over the budget: close connections that hold bytes their peer has not
 * taken for EDGE_SHED_STALL_MS, until a sixteenth of the budget is free
 * again.  They are the non-reading clients (or apps); everyone else's
 * reads wait for the room meanwhile.
 */
static void
edge_shed(struct edge *e)
{
	struct edge_conn *c, *next;
	int shed = 0;

	for (c = e->conns;
	     c && edge_buf_budget(e) < EDGE_MEMORY_BUDGET_BYTES / 16;
	     c = next) {
		next = c->next;
		if (e->now - c->last_io < EDGE_SHED_STALL_MS ||
		    (c->rq.off == c->rq.len && c->rs.off == c->rs.len))
			continue;
		edge_conn_close(c);
		shed++;
	}
	if (shed && e->now - e->shed_warned >= 10000) {
		log_warn("edge: memory budget spent: closed %d stalled "
		         "connection(s)",
		         shed);
		e->shed_warned = e->now;
	}
}

static void
edge_tick(struct edge *e)
{
	struct edge_conn *c, *next;

	if (edge_buf_budget(e) < EDGE_MEMORY_BUDGET_BYTES / 16)
		edge_shed(e);
	for (c = e->conns; c; c = next) {
		next = c->next;
		if (c->starved && edge_buf_budget(e) >= EDGE_PAGE_SIZE) {
			c->starved = false;
			edge_conn_run(c); /* may close it; next is kept */
			continue;
		}
		edge_conn_tick(c);
	}
	if (e->accept_retry)
		edge_accept(e);
	e->next_tick = e->now + EDGE_TICK_MS;
}

static void *
edge_main(void *arg)
{
	struct edge *e = arg;
	int n, timeout;

	e->now = clock_mono_ms();
	e->next_tick = e->now + EDGE_TICK_MS;
	while (!e->stop) {
		timeout = e->conns || e->accept_retry ? EDGE_TICK_MS : -1;
		n = epoll_wait(e->efd, e->events, EDGE_MAX_EVENTS, timeout);
		if (n < 0 && errno != EINTR) {
			log_error("edge: epoll_wait: %s; previews stop",
			          strerror(errno));
			break;
		}
		e->now = clock_mono_ms();
		e->nev = n > 0 ? n : 0;
		for (e->cur = 0; e->cur < e->nev; e->cur++)
			edge_event(e, &e->events[e->cur]);
		e->nev = 0;
		if (e->now >= e->next_tick)
			edge_tick(e);
	}
	return NULL;
}

/* SANDBOXD_EDGE_ADDR is an IPv4 or IPv6 literal (config checks it). */
static int
edge_listen(struct edge *e, const char *addr, uint16_t port)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	int one = 1;

	if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		len = sizeof(*in4);
	} else if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		len = sizeof(*in6);
	} else {
		log_error("SANDBOXD_EDGE_ADDR: %s is not an IP address", addr);
		return -1;
	}
	e->lfd =
	    socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (e->lfd < 0 ||
	    setsockopt(e->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) <
	        0 ||
	    bind(e->lfd, (struct sockaddr *)&ss, len) < 0 ||
	    listen(e->lfd, EDGE_LISTEN_BACKLOG) < 0) {
		log_error("edge: cannot listen on %s port %u: %s", addr, port,
		          strerror(errno));
		return -1;
	}
	return 0;
}

static int
edge_setup(struct edge *e)
{
	const struct config *cfg = e->core->cfg;
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET};

	if (edge_listen(e, cfg->edge_addr, (uint16_t)cfg->edge_port) < 0)
		return -1;
	e->efd = epoll_create1(EPOLL_CLOEXEC);
	e->wfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	e->lside = (struct edge_side){.fd = e->lfd};
	e->wside = (struct edge_side){.fd = e->wfd};
	ev.data.ptr = &e->lside;
	if (e->efd < 0 || e->wfd < 0 ||
	    epoll_ctl(e->efd, EPOLL_CTL_ADD, e->lfd, &ev) < 0)
		goto fail;
	ev.data.ptr = &e->wside;
	if (epoll_ctl(e->efd, EPOLL_CTL_ADD, e->wfd, &ev) < 0)
		goto fail;
	return 0;
fail:
	log_error("edge: cannot set up its event loop: %s", strerror(errno));
	return -1;
}

static void
edge_free(struct edge *e)
{
	while (e->conns)
		edge_conn_close(e->conns);
	if (e->lfd >= 0)
		close(e->lfd);
	if (e->wfd >= 0)
		close(e->wfd);
	if (e->efd >= 0)
		close(e->efd);
	edge_pool_release(e, &e->bufs, EDGE_MAX_BUFFERED);
	edge_pool_release(e, &e->heads, sizeof(struct edge_head));
	edge_console_free(e);
	free(e);
}

/* The console's origin, as the API's preview URLs spell the edge's. */
static void
edge_configure(struct edge *e, const struct config *cfg)
{
	bool default_port = cfg->http_port == (cfg->preview_tls ? 443 : 80);

	snprintf(e->domain, sizeof(e->domain), "%s", cfg->preview_domain);
	for (char *p = e->domain; *p; p++) /* as X-Forwarded-Host says it */
		*p = (char)tolower((unsigned char)*p);
	e->tls = cfg->preview_tls;
	e->tls_proxy_exempt = cfg->preview_tls;
	if (default_port)
		snprintf(e->console_origin, sizeof(e->console_origin),
		         "%s://console.%s", cfg->preview_tls ? "https" : "http",
		         cfg->preview_domain);
	else
		snprintf(e->console_origin, sizeof(e->console_origin),
		         "%s://console.%s:%u",
		         cfg->preview_tls ? "https" : "http",
		         cfg->preview_domain, cfg->http_port);
}

int
edge_start(struct edge **out, struct core *core)
{
	struct edge *e = calloc(1, sizeof(*e));

	*out = NULL;
	if (e == NULL)
		return -1;
	e->core = core;
	e->lfd = e->efd = e->wfd = -1;
	edge_head_settings(&e->req_settings, &e->res_settings);
	edge_configure(e, core->cfg);
	edge_console_load(e, core->cfg->console_dir, core->cfg);
	if (edge_setup(e) < 0)
		goto fail;
	if (pthread_create(&e->thread, NULL, edge_main, e) != 0)
		goto fail;
	log_info("preview edge listening on %s port %u", core->cfg->edge_addr,
	         (unsigned)core->cfg->edge_port);
	*out = e;
	return 0;
fail:
	edge_free(e);
	return -1;
}

void
edge_stop(struct edge *e)
{
	uint64_t one = 1;

	if (e == NULL)
		return;
	if (write(e->wfd, &one, sizeof(one)) != sizeof(one))
		log_warn("edge: cannot wake the loop: %s", strerror(errno));
	pthread_join(e->thread, NULL);
	edge_free(e);
}
