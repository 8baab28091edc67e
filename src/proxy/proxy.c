/*
 * The credential proxy: the only way a sandbox reaches a model provider
 * with a key.  Agents in sandboxes get a base URL pointing here and their
 * sandbox's own proxy token in place of a key; the proxy checks the token,
 * replaces it with the real credential (which never enters a sandbox) and
 * streams the provider's answer back unbuffered.
 *
 * This file is the server and the connection side: the listener, the
 * checks once the body is in, the request headers that go on, and the
 * response as the connection sends it (only the headers
 * provider_header_passed allows).
 *
 * What a request's head alone decides (the caps per sandbox, the token,
 * the path) is admit.c's, before a byte of the body is read; the request
 * shared with the upstream side and its reference count are preq.c's.
 *
 * The transfer itself is upstream.c's; providers.c says where a path
 * goes, which endpoints exist and which errors are permanent; wire.c
 * puts the credential on the wire.
 *
 * It listens on the sandbox network's gateway address (what containers
 * reach the host at), not on the API's address, with a socket of its own
 * so a failed bind says why; its state is published for GET /v1/status.
 * Requests go to /<agent>/<upstream>/<path> (proxy/providers.h).
 *
 * Each request is one libmicrohttpd connection and one worker thread
 * doing the upstream transfer.  The connection is suspended until the
 * upstream's head arrives, then its body is handed over through a
 * bounded buffer: when the client reads slowly the worker waits
 * (backpressure reaches the provider's TCP window), and when the buffer
 * is empty the connection is suspended until the worker has more.
 * Permanent provider errors (bad key, no credit) are rewritten to a 400
 * that no agent CLI retries, with the provider's message.
 *
 * Stopping: the binder first, then every transfer is aborted and its
 * worker waited for (each resumes its connection as it ends), then the
 * server stops, then the struct is freed: nothing outlives proxy_stop.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cred/credentials.h"
#include "sbnet/sbnet.h"
#include "spend/spend.h"
#include "lib/jv.h"
#include "lib/limits.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "net/http.h"
#include "proxy/internal.h"
#include "proxy/wire.h"
#include "task/task.h"

/* Adds line (malloc'd, taken) to the upstream request's headers. */
static int
push_hdr(struct preq *r, char *line)
{
	char **n;

	if (line == NULL)
		return -1;
	n = realloc(r->hdrs, (r->nhdrs + 2) * sizeof(*n));
	if (n == NULL) {
		explicit_bzero(line, strlen(line));
		free(line);
		return -1;
	}
	r->hdrs = n;
	r->hdrs[r->nhdrs++] = line;
	r->hdrs[r->nhdrs] = NULL;
	return 0;
}

/* A whole header line ("Expect:", one of the credential's). */
static int
add_line(struct preq *r, const char *line)
{
	return push_hdr(r, strdup(line));
}

static int
add_hdr(struct preq *r, const char *k, const char *v)
{
	char *line;

	return push_hdr(r, asprintf(&line, "%s: %s", k, v) < 0 ? NULL : line);
}

/* Request headers that are ours, the connection's, or the credential's. */
static bool
dropped_request_header(const char *k)
{
	static const char *const drop[] = {"host",
	                                   "content-length",
	                                   "connection",
	                                   "keep-alive",
	                                   "proxy-connection",
	                                   "proxy-authorization",
	                                   "te",
	                                   "trailer",
	                                   "transfer-encoding",
	                                   "upgrade",
	                                   "x-api-key",
	                                   "authorization",
	                                   "accept-encoding",
	                                   "expect",
	                                   "x-forwarded-for",
	                                   "x-forwarded-host",
	                                   "x-forwarded-proto",
	                                   "forwarded"};

	for (size_t i = 0; i < sizeof(drop) / sizeof(*drop); i++)
		if (strcasecmp(k, drop[i]) == 0)
			return true;
	return false;
}

struct header_copy {
	struct preq *r;
	bool drop_beta; /* the credential sends its own anthropic-beta */
};

static enum MHD_Result
copy_header(void *cls, enum MHD_ValueKind kind, const char *k, const char *v)
{
	struct header_copy *hc = cls;

	(void)kind;
	if (k && v && !dropped_request_header(k) && !strpbrk(v, "\r\n") &&
	    !(hc->drop_beta && strcasecmp(k, "anthropic-beta") == 0))
		add_hdr(hc->r, k, v);
	return MHD_YES;
}

/* The request's anthropic-beta headers, comma-joined, for cred_for. */
struct beta_in {
	char s[CRED_BETA_MAX];
	size_t n;
	bool too_long;
};

static enum MHD_Result
join_beta(void *cls, enum MHD_ValueKind kind, const char *k, const char *v)
{
	struct beta_in *b = cls;
	int n;

	(void)kind;
	if (k == NULL || v == NULL || strcasecmp(k, "anthropic-beta") != 0)
		return MHD_YES;
	n = snprintf(b->s + b->n, sizeof(b->s) - b->n, "%s%s", b->n ? "," : "",
	             v);
	if (n < 0 || (size_t)n >= sizeof(b->s) - b->n) {
		b->too_long = true;
		return MHD_NO;
	}
	b->n += (size_t)n;
	return MHD_YES;
}

struct query {
	char *out;
	size_t len, used;
	bool bad;
};

static enum MHD_Result
copy_arg(void *cls, enum MHD_ValueKind kind, const char *k, const char *v)
{
	struct query *q = cls;
	char ek[512], ev[1024];
	int n;

	(void)kind;
	if (http_escape(k, ek, sizeof(ek)) < 0 ||
	    (v && http_escape(v, ev, sizeof(ev)) < 0)) {
		q->bad = true;
		return MHD_NO;
	}
	n = snprintf(q->out + q->used, q->len - q->used, "%c%s%s%s",
	             q->used ? '&' : '?', ek, v ? "=" : "", v ? ev : "");
	if (n < 0 || (size_t)n >= q->len - q->used) {
		q->bad = true;
		return MHD_NO;
	}
	q->used += (size_t)n;
	return MHD_YES;
}

/* ---- the connection side -------------------------------------------- */

static ssize_t
read_body(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct preq *r = cls;
	ssize_t n;

	(void)pos;
	pthread_mutex_lock(&r->mu);
	if (r->ring.len) {
		n = (ssize_t)(r->ring.len < max ? r->ring.len : max);
		memcpy(buf, r->ring.data, (size_t)n);
		memmove(r->ring.data, r->ring.data + n,
		        r->ring.len - (size_t)n);
		r->ring.len -= (size_t)n;
		pthread_cond_signal(&r->space);
	} else if (r->up_done) {
		n = r->up_broken ? MHD_CONTENT_READER_END_WITH_ERROR
		                 : MHD_CONTENT_READER_END_OF_STREAM;
	} else {
		r->suspended = true;
		MHD_suspend_connection(r->conn);
		n = 0;
	}
	pthread_mutex_unlock(&r->mu);
	if (n > 0)
		metric_add(METRIC_PROXY_BYTES_DOWN, (uint64_t)n);
	return n;
}

static enum MHD_Result
queue_answer(struct preq *r)
{
	struct MHD_Response *mr;
	enum MHD_Result ret;
	long status;
	char *p, *end;

	mr = MHD_create_response_from_callback(
	    MHD_SIZE_UNKNOWN, PROXY_WRITE_BLOCK, read_body, r, NULL);
	if (mr == NULL)
		return MHD_NO;
	pthread_mutex_lock(&r->mu);
	status = r->status ? r->status : 502;
	for (p = r->head.data; p && *p; p = end) {
		char *colon, *v;
		size_t n;
		end = strstr(p, "\r\n");
		n = end ? (size_t)(end - p) : strlen(p);
		end = end ? end + 2 : p + n;
		if ((n >= 5 && memcmp(p, "HTTP/", 5) == 0) ||
		    !provider_header_passed(p, n))
			continue;
		colon = memchr(p, ':', n);
		*colon = '\0';
		v = colon + 1;
		while (*v == ' ')
			v++;
		p[n] = '\0';
		MHD_add_response_header(mr, p, v);
	}
	r->st = PR_SENDING;
	pthread_mutex_unlock(&r->mu);
	ret = MHD_queue_response(r->conn, (unsigned)status, mr);
	MHD_destroy_response(mr);
	return ret;
}

static enum MHD_Result
reply_ok(struct MHD_Connection *conn)
{
	struct MHD_Response *mr = MHD_create_response_from_buffer(
	    3, (void *)"ok\n", MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (mr == NULL)
		return MHD_NO;
	MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain");
	ret = MHD_queue_response(conn, 200, mr);
	MHD_destroy_response(mr);
	return ret;
}

/*
 * The upstream URL and headers, the credential among them.  -1 with why
 * for a 400, or with why NULL when out of memory.
 */
static int
prepare(struct preq *r, const struct cred *cred, const struct beta_in *beta,
        const char **why)
{
	char qs[1024] = "";
	struct query q = {.out = qs, .len = sizeof(qs)};
	struct header_copy hc = {.r = r, .drop_beta = cred->sets_beta};

	*why = NULL;
	if (cred->sets_beta && beta->too_long) {
		*why = "the anthropic-beta headers are too long";
		return -1;
	}
	MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, copy_arg, &q);
	if (q.bad) {
		*why = "the query string is too long";
		return -1;
	}
	snprintf(r->url, sizeof(r->url), "%s%s%s", cred->base_url, r->path.rest,
	         qs);
	MHD_get_connection_values(r->conn, MHD_HEADER_KIND, copy_header, &hc);
	if ((cred->header[0] && add_hdr(r, cred->header, cred->value) < 0) ||
	    add_line(r, "Expect:") < 0 ||
	    add_line(r, "Accept-Encoding: identity") < 0)
		return -1;
	for (size_t i = 0; i < cred->nextra; i++)
		if (add_line(r, cred->extra[i]) < 0)
			return -1;
	return 0;
}

/* The endpoints whose answers cost tokens (not counting, not listing). */
static bool
model_call(const struct proxy_path *p)
{
	return strcmp(p->rest, "/v1/messages") == 0 ||
	       strcmp(p->rest, "/chat/completions") == 0 ||
	       strcmp(p->rest, "/responses") == 0;
}

/* The body is in: the budgets, the credential, the URL, the transfer. */
static enum MHD_Result
begin(struct preq *r)
{
	struct MHD_Connection *conn = r->conn;
	char msg[384];
	struct cred cred;
	struct beta_in beta = {.n = 0};
	const char *why;
	int rc;

	if (r->too_big)
		return proxy_reply_now(
		    conn, 413, "request_too_large",
		    "the request body is over the proxy's limit");
	if (r->over_budget)
		return proxy_reply_err(conn, 429, "rate_limit_error",
		                       admit_over_budget_msg, true);
	if (r->px->core->cfg->spend_counting && model_call(&r->path)) {
		char refused[SPEND_REASON_MAX + 128];
		/* Refused (a budget, a call that cannot be metered): 403
		 * permission_error, which neither CLI re-sends (Claude Code
		 * re-sends a 400 up to five times at once); for a budget the
		 * task ends saying which. */
		if (charge_begin(r, refused, sizeof(refused)) != 0)
			return proxy_reply_now(conn, 403, "permission_error",
			                       refused);
	}
	MHD_get_connection_values(conn, MHD_HEADER_KIND, join_beta, &beta);
	if (cred_for(r->px->core, r->owner, r->path.agent, &r->path.up,
	             beta.n ? beta.s : NULL, &cred, msg, sizeof(msg)) < 0)
		/* 400, not 401: the CLIs retry a 401 for minutes, and no
		 * retry connects the agent. */
		return proxy_reply_now(conn, 400, "invalid_request_error", msg);
	rc = prepare(r, &cred, &beta, &why);
	cred_wipe(&cred);
	if (rc < 0)
		return why ? proxy_reply_now(conn, 400, "invalid_request_error",
		                             why)
		           : MHD_NO;
	/* Suspended until the worker has the upstream's head. */
	pthread_mutex_lock(&r->mu);
	r->st = PR_WAIT;
	r->suspended = true;
	MHD_suspend_connection(conn);
	pthread_mutex_unlock(&r->mu);
	metric_inc(METRIC_PROXY_REQUESTS);
	metric_add(METRIC_PROXY_BYTES_UP, r->body.len);
	upstream_start(r);
	return MHD_YES;
}

static enum MHD_Result
on_proxy(void *cls, struct MHD_Connection *conn, const char *url,
         const char *method, const char *version, const char *upload,
         size_t *upload_size, void **ctx)
{
	struct proxy *px = cls;
	struct preq *r = *ctx;
	bool ready;

	(void)version;
	if (r == NULL) {
		if (strcmp(url, "/healthz") == 0 && strcmp(method, "GET") == 0)
			return reply_ok(conn);
		if (strcmp(method, "POST") != 0 && strcmp(method, "GET") != 0)
			return proxy_reply_now(conn, 405,
			                       "invalid_request_error",
			                       "the proxy takes GET and POST");
		if (admit_over_cap(conn))
			return proxy_reply_err(
			    conn, 429, "rate_limit_error",
			    "sandboxd proxy: this sandbox has as many "
			    "connections open to the proxy as it may "
			    "(PROXY_ADDR_MAX_CONNS, 16); close idle ones or "
			    "wait for its other requests",
			    true);
		if ((r = preq_new(px, conn, method)) == NULL)
			return MHD_NO;
		*ctx = r;
		return admit_head(r, url);
	}
	if (r->st == PR_BODY && *upload_size) {
		admit_body(r, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (r->st == PR_BODY)
		return begin(r);
	pthread_mutex_lock(&r->mu);
	ready = r->st == PR_WAIT && r->head_ready;
	if (r->st == PR_WAIT && !ready) { /* a spurious call: wait more */
		r->suspended = true;
		MHD_suspend_connection(conn);
	}
	pthread_mutex_unlock(&r->mu);
	return ready ? queue_answer(r) : MHD_YES;
}

static void
on_done(void *cls, struct MHD_Connection *conn, void **ctx,
        enum MHD_RequestTerminationCode toe)
{
	struct preq *r = *ctx;

	(void)cls, (void)conn, (void)toe;
	if (r == NULL)
		return;
	pthread_mutex_lock(&r->mu);
	r->closed = true;
	pthread_cond_broadcast(&r->space);
	pthread_mutex_unlock(&r->mu);
	preq_unref(r);
	*ctx = NULL;
}

static void
on_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	log_warn("proxy: %s", line);
}

/* A listening socket on addr:port; -1 with why (errno's words). */
static int
bind_socket(const char *addr, uint16_t port, char *why, size_t len)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	int fd, one = 1;

	sin.sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
		snprintf(why, len, "\"%s\" is not an IPv4 address", addr);
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	/* IP_FREEBIND: on a node the bridge (and so the gateway address)
	 * exists only while a sandbox there uses it. */
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(fd, PROXY_BACKLOG) < 0) {
		snprintf(why, len, "cannot listen on %s:%u: %s", addr, port,
		         strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Listens on addr; 0, or -1 with why. */
static int
listen_on(struct proxy *px, const char *addr, char *why, size_t len)
{
	uint16_t port = px->core->cfg->proxy_port;
	char url[96];
	int fd = bind_socket(addr, port, why, len);

	if (fd < 0)
		return -1;
	px->mhd = MHD_start_daemon(
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
	        MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG |
	        /* relayed connections are added (relay.c) and must wake
	         * the server's thread */
	        (px->relay_wanted ? MHD_USE_ITC : 0),
	    0, NULL, NULL, on_proxy, px, MHD_OPTION_EXTERNAL_LOGGER, on_log, px,
	    MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_THREAD_POOL_SIZE,
	    (unsigned)PROXY_THREADS, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned)PROXY_CONN_TIMEOUT_S, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)PROXY_MAX_CONNECTIONS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	    (unsigned)PROXY_ADDR_MAX_OPEN, MHD_OPTION_NOTIFY_CONNECTION,
	    admit_on_conn, px, MHD_OPTION_NOTIFY_COMPLETED, on_done, px,
	    MHD_OPTION_END);
	if (px->mhd == NULL) {
		close(fd);
		snprintf(why, len, "cannot start the proxy's server on %s:%u",
		         addr, port);
		return -1;
	}
	core_set_proxy_url(px->core, addr, port);
	snprintf(url, sizeof(url), "http://%s:%u", addr, port);
	sbnet_proxy_state(px->core->net, true, url, "");
	log_info("credential proxy listening on %s:%u", addr, port);
	return 0;
}

/*
 * The sandboxes' side of the host is the gateway of their network, known
 * once the network is ready: wait for it, then listen there, retrying a
 * bind that fails (the port taken) until it works or the daemon stops.
 */
static void *
binder_main(void *arg)
{
	struct proxy *px = arg;
	const struct config *cfg = px->core->cfg;
	char gw[64], why[256];
	bool warned = false;

	while (!atomic_load(&px->stopping)) {
		if (cfg->proxy_addr[0])
			snprintf(gw, sizeof(gw), "%s", cfg->proxy_addr);
		else if (sbnet_wait_gateway(px->core->net, gw, sizeof(gw),
		                            &px->stopping) < 0)
			break;
		if (gw[0] == '\0') {
			sbnet_proxy_state(
			    px->core->net, false, "",
			    "SANDBOXD_NETWORK=none: sandboxes have "
			    "no network to reach it on");
			return NULL;
		}
		if (listen_on(px, gw, why, sizeof(why)) == 0)
			return NULL;
		sbnet_proxy_state(px->core->net, false, "", why);
		if (!warned)
			log_warn("proxy: %s; retrying", why);
		warned = true;
		for (int i = 0; i < 8 && !atomic_load(&px->stopping); i++)
			usleep(250 * 1000);
	}
	return NULL;
}

int
proxy_start(struct proxy **out, struct core *core)
{
	struct proxy *px = calloc(1, sizeof(*px));

	if (px == NULL)
		return -1;
	px->core = core;
	pthread_mutex_init(&px->mu, NULL);
	pthread_cond_init(&px->idle, NULL);
	px->relay_wanted = strcmp(core->cfg->orchestrator, "swarm") == 0;
	if (pthread_create(&px->binder, NULL, binder_main, px) != 0) {
		pthread_cond_destroy(&px->idle);
		pthread_mutex_destroy(&px->mu);
		free(px);
		return -1;
	}
	/* Swarm mode: sandboxes on other nodes come in relayed (relay.c). */
	if (px->relay_wanted)
		(void)proxy_relay_start(px, core->cfg->data_dir);
	*out = px;
	return 0;
}

void
proxy_stop(struct proxy *px)
{
	if (px == NULL)
		return;
	atomic_store(&px->stopping, true);
	pthread_join(px->binder, NULL);
	proxy_relay_stop(px);
	/* Workers end first: each resumes its connection as it goes, so
	 * the server stops with no connection left suspended. */
	upstream_halt(px);
	if (px->mhd)
		MHD_stop_daemon(px->mhd);
	pthread_cond_destroy(&px->idle);
	pthread_mutex_destroy(&px->mu);
	free(px);
}
