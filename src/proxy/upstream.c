/*
 * The upstream side of a proxied request: one worker thread per request
 * runs the transfer to the provider (src/net/http) and hands the answer
 * to the connection side (proxy.c) through struct preq.
 *
 * The head is collected whole, then the connection is resumed to queue
 * the response.  Body bytes go through the ring, at most
 * PROXY_RING_BYTES: when it is full the worker waits on r->space, so a
 * slow client slows the provider down through its TCP window instead of
 * costing memory.  An error answer (status >= 400) is kept instead, up
 * to PROXY_ERROR_BODY_MAX, and classified when it is complete: a
 * permanent one becomes a 400 of our own and is reported to the
 * sandbox's running task.
 *
 * Workers are counted in struct proxy and their requests listed there,
 * so that upstream_halt can abort each transfer (http_call.stop, and a
 * broadcast for a worker waiting on a full ring) and wait for the last
 * worker before the server stops and the proxy is freed.  A worker
 * touches the connection only while the server runs; it never outlives
 * proxy_stop.  Rejected: a watchdog per transfer (the transfer's own
 * stop flag and low-speed limit already bound it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "task/task.h"
#include "lib/limits.h"
#include "lib/log.h"
#include "net/http.h"
#include "proxy/internal.h"

/* Called with r->mu held. */
static void
wake_conn(struct preq *r)
{
	if (r->suspended) {
		r->suspended = false;
		MHD_resume_connection(r->conn);
	}
}

static size_t
on_up_header(const char *p, size_t n, void *arg)
{
	struct preq *r = arg;
	size_t took = n; /* 0 ends the transfer */

	pthread_mutex_lock(&r->mu);
	if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) {
		/* A new status line (after a 1xx, the real one). */
		const char *sp = memchr(p, ' ', n);
		buf_reset(&r->head);
		r->status = sp ? strtol(sp, NULL, 10) : 0;
	}
	if (buf_append(&r->head, p, n) < 0) {
		took = 0;
		goto out;
	}
	if (r->metered && meter_is_stream(p, n))
		r->meter.sse = true;
	if ((n == 2 && p[0] == '\r') || (n == 1 && p[0] == '\n')) {
		if (r->status >= 200 && r->status < 400) {
			r->head_ready = true;
			wake_conn(r);
		} else if (r->status >= 400) {
			r->errored = true;
		}
	}
out:
	pthread_mutex_unlock(&r->mu);
	return took;
}

static size_t
on_up_body(const char *p, size_t n, void *arg)
{
	struct preq *r = arg;
	size_t rc = n;

	/* Counted as it goes by, on the worker, outside the lock: the
	 * meter is the worker's alone and looks at each byte once. */
	if (r->metered && !r->errored)
		meter_feed(&r->meter, p, n);
	pthread_mutex_lock(&r->mu);
	if (r->errored) {
		/* Kept to classify; beyond the cap only counted. */
		if (r->ring.len + n <= PROXY_ERROR_BODY_MAX)
			buf_append(&r->ring, p, n);
	} else {
		while (!r->closed && !r->px->halt && r->ring.len > 0 &&
		       r->ring.len + n > PROXY_RING_BYTES)
			pthread_cond_wait(&r->space, &r->mu);
		/* The client is gone or the proxy stops: end the transfer. */
		if (r->closed || r->px->halt || buf_append(&r->ring, p, n) < 0)
			rc = 0;
		else
			wake_conn(r);
	}
	pthread_mutex_unlock(&r->mu);
	return rc;
}

/* Replaces the upstream's answer with an error of our own. */
static void
own_error(struct preq *r, long status, const char *type, const char *msg)
{
	r->status = status;
	r->errored = false;
	buf_reset(&r->ring);
	proxy_error_json(type, msg, &r->ring);
	buf_reset(&r->head);
	buf_appendf(&r->head, "Content-Type: application/json\r\n");
}

/*
 * No answer came: the sandbox's task hears of it (task_upstream_failed),
 * before the connection does, so that a task the failure ends fails
 * with its reason whatever the agent does with the 502.  A name that
 * does not resolve, a refused or unreachable address and a failed TLS
 * handshake end the task (provider_unreachable): retrying cannot help
 * until someone fixes the network or the setting.  A timeout (a lost
 * packet, a slow link) may pass: the task module ends the task only at
 * the second in a row.
 */
static void
no_answer(struct preq *r, const struct http_call *h, char *msg, size_t len)
{
	char host[128];
	const char *fix;
	bool permanent = h->fail == HTTP_FAIL_RESOLVE ||
	                 h->fail == HTTP_FAIL_CONNECT ||
	                 h->fail == HTTP_FAIL_TLS;

	if (http_url_host(r->url, host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "?");
	fix = h->fail == HTTP_FAIL_RESOLVE ? "check DNS, the firewall or"
	      : h->fail == HTTP_FAIL_TLS
	          ? "check the clock, a TLS-intercepting proxy or"
	          : "check the firewall, the route to the provider or";
	snprintf(msg, len, "%s: %s %s (%s); %s %s", r->path.up.name, host,
	         http_fail_words(h->fail), h->err, fix, r->path.up.setting);
	log_warn("proxy: sandbox %s: %s", r->sandbox, msg);
	task_upstream_failed(
	    r->px->core, r->sandbox,
	    &(struct task_upstream){.upstream = r->path.up.name,
	                            .host = host,
	                            .kind = http_fail_name(h->fail),
	                            .reason = permanent ? "provider_unreachable"
	                                                : NULL,
	                            .msg = msg});
}

/* A permanent refusal (the key rejected, no credit): the task ends. */
static void
refused(struct preq *r, const char *msg)
{
	char host[128];

	if (http_url_host(r->url, host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "?");
	log_warn("proxy: sandbox %s: %s (HTTP %ld)", r->sandbox, msg,
	         r->status);
	task_upstream_failed(
	    r->px->core, r->sandbox,
	    &(struct task_upstream){.upstream = r->path.up.name,
	                            .host = host,
	                            .kind = "http",
	                            .status = r->status,
	                            .reason = "provider_refused",
	                            .msg = msg});
}

/* What the connection gets once the transfer ended (r->mu held). */
static void
finish(struct preq *r, int rc, const struct http_call *h)
{
	char msg[512];
	bool answered = h->status > 0 || r->status > 0;

	if (rc < 0 && !r->head_ready && !r->errored) {
		if (r->px->halt) {
			own_error(r, 503, "overloaded_error",
			          "sandboxd proxy: shutting down");
		} else if (answered) {
			/* An answer began, then broke: no news of the
			 * provider's reach. */
			log_warn("proxy: sandbox %s: %s: %s", r->sandbox,
			         r->path.up.name, h->err);
			snprintf(msg, sizeof(msg),
			         "%s: upstream unreachable: %s",
			         r->path.up.name, h->err);
			own_error(r, 502, "api_error", msg);
		} else {
			no_answer(r, h, msg, sizeof(msg));
			own_error(r, 502, "api_error", msg);
		}
	} else if (r->errored) {
		if (provider_permanent_error(r->path.up.name, r->status,
		                             r->ring.data ? r->ring.data : "",
		                             r->ring.len, msg, sizeof(msg))) {
			refused(r, msg);
			own_error(r, 400, "invalid_request_error", msg);
		}
		r->errored = false;
	}
	if (answered)
		task_upstream_answered(r->px->core, r->sandbox);
	r->up_broken = rc < 0 && r->head_ready;
	r->up_done = true;
	r->head_ready = true;
	wake_conn(r);
}

/* The worker's last acts: out of the list, its reference, the count. */
static void
worker_done(struct preq *r)
{
	struct proxy *px = r->px;

	pthread_mutex_lock(&px->mu);
	if (r->prev)
		r->prev->next = r->next;
	else
		px->live = r->next;
	if (r->next)
		r->next->prev = r->prev;
	pthread_mutex_unlock(&px->mu);
	preq_unref(r);
	pthread_mutex_lock(&px->mu);
	if (--px->workers == 0)
		pthread_cond_broadcast(&px->idle);
	pthread_mutex_unlock(&px->mu);
}

static void *
worker_main(void *arg)
{
	struct preq *r = arg;
	struct http_call h = {0};
	long status;
	int rc;

	h.method = r->method;
	h.url = r->url;
	h.https = true;
	h.headers = (const char *const *)r->hdrs;
	h.body = r->body.data;
	h.body_len = r->body.len;
	h.send_body =
	    strcmp(r->method, "GET") != 0 && strcmp(r->method, "HEAD") != 0;
	h.connect_timeout_ms = PROXY_CONNECT_TIMEOUT_MS;
	h.low_speed_s = PROXY_STALL_S;
	h.on_header = on_up_header;
	h.on_body = on_up_body;
	h.arg = r;
	h.stop = &r->px->halt;
	rc = http_perform(&h);
	pthread_mutex_lock(&r->mu);
	status = r->errored || (rc < 0 && !r->head_ready) ? 0 : r->status;
	finish(r, rc, &h);
	pthread_mutex_unlock(&r->mu);
	/* Off the stream's path, once the client has all of it. */
	charge_settle(r, status);
	worker_done(r);
	return NULL;
}

void
upstream_start(struct preq *r)
{
	struct proxy *px = r->px;
	pthread_attr_t attr;
	pthread_t t;
	bool counted = false;

	pthread_mutex_lock(&px->mu);
	if (!px->halt) {
		pthread_mutex_lock(&r->mu);
		r->refs++;
		pthread_mutex_unlock(&r->mu);
		r->prev = NULL;
		r->next = px->live;
		if (px->live)
			px->live->prev = r;
		px->live = r;
		px->workers++;
		counted = true;
	}
	pthread_mutex_unlock(&px->mu);
	if (counted) {
		int rc;

		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		rc = pthread_create(&t, &attr, worker_main, r);
		pthread_attr_destroy(&attr);
		if (rc == 0)
			return;
	}
	pthread_mutex_lock(&r->mu);
	own_error(r, 503, "overloaded_error",
	          counted ? "sandboxd proxy: cannot start a transfer"
	                  : "sandboxd proxy: shutting down");
	r->up_done = r->head_ready = true;
	wake_conn(r);
	pthread_mutex_unlock(&r->mu);
	if (counted)
		worker_done(r);
}

void
upstream_halt(struct proxy *px)
{
	pthread_mutex_lock(&px->mu);
	px->halt = true;
	for (struct preq *r = px->live; r; r = r->next) {
		pthread_mutex_lock(&r->mu);
		pthread_cond_broadcast(&r->space);
		pthread_mutex_unlock(&r->mu);
	}
	while (px->workers > 0)
		pthread_cond_wait(&px->idle, &px->mu);
	pthread_mutex_unlock(&px->mu);
}
