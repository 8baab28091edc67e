/*
 * The credential proxy: the only way a sandbox reaches a model provider
 * with a key.  Agents in sandboxes get a base URL pointing here and their
 * sandbox's own proxy token in place of a key; the proxy checks the token,
 * replaces it with the real credential (which never enters a sandbox) and
 * streams the provider's answer back unbuffered.
 *
 * It listens on the sandbox network's gateway address (what containers
 * reach the host at), not on the API's address.  Requests go to
 * /<agent>/<upstream>/<path> (src/core/providers.h).
 *
 * Each request is one libmicrohttpd connection and one worker thread
 * doing the upstream transfer (src/net/http).  The connection is
 * suspended until the upstream's head arrives, then its body is handed
 * over through a bounded buffer: when the client reads slowly the worker
 * waits (backpressure reaches the provider's TCP window), and when the
 * buffer is empty the connection is suspended until the worker has more.
 * Permanent provider errors (bad key, no credit) are rewritten to a 400
 * that no agent CLI retries, with the provider's message.
 */
#include "api/proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/credentials.h"
#include "core/providers.h"
#include "core/sbnet.h"
#include "docker/docker.h"
#include "lib/buf.h"
#include "lib/limits.h"
#include "lib/log.h"
#include "net/http.h"
#include "task/task.h"

struct proxy {
	struct core *core;
	struct MHD_Daemon *mhd; /* NULL until bound */
	pthread_t binder;
	atomic_bool stopping;
};

enum preq_state {
	PR_BODY,    /* reading the request */
	PR_WAIT,    /* suspended until the upstream's head */
	PR_SENDING, /* the response is queued */
};

struct preq {
	pthread_mutex_t mu;
	pthread_cond_t space; /* the ring has room again */
	int refs;             /* the connection's and the worker's */
	struct proxy *px;
	struct MHD_Connection *conn;
	enum preq_state st;
	struct buf body;
	bool too_big;
	struct proxy_path path;
	char url[PROVIDER_PATH_MAX + 1024];
	char **hdrs; /* upstream request headers, NULL-terminated */
	size_t nhdrs;
	char sandbox[ULID_LEN + 1];
	char method[16];
	/* The answer (under mu). */
	struct buf head; /* upstream header lines */
	long status;     /* the final status line's code */
	bool head_ready; /* the connection may queue its response */
	bool errored;    /* status >= 400: body collected, then sent */
	struct buf ring; /* body bytes not yet sent */
	bool up_done;    /* the transfer ended */
	bool up_broken;  /* it ended in the middle */
	bool suspended;  /* the connection waits for resume */
	bool closed;     /* the client is gone */
};

static void
preq_unref(struct preq *r)
{
	bool last;

	pthread_mutex_lock(&r->mu);
	last = --r->refs == 0;
	pthread_mutex_unlock(&r->mu);
	if (!last)
		return;
	for (size_t i = 0; i < r->nhdrs; i++) {
		explicit_bzero(r->hdrs[i], strlen(r->hdrs[i]));
		free(r->hdrs[i]);
	}
	free(r->hdrs);
	buf_release(&r->body);
	buf_release(&r->head);
	buf_release(&r->ring);
	pthread_cond_destroy(&r->space);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

/*
 * Set before the listener stops: a worker still in a transfer must not
 * touch libmicrohttpd's connections any more.
 */
static atomic_bool proxy_down;
/* volatile: a store the compiler may not drop, so the block stays
 * reachable (leak checkers see it kept on purpose) */
static struct proxy *volatile proxy_stopped;

/* Called with r->mu held. */
static void
wake_conn(struct preq *r)
{
	if (r->suspended && !atomic_load(&proxy_down)) {
		r->suspended = false;
		MHD_resume_connection(r->conn);
	}
}

static int
add_hdr(struct preq *r, const char *fmt, const char *a, const char *b)
{
	char **n;
	char *line;

	if (asprintf(&line, fmt, a, b) < 0)
		return -1;
	n = realloc(r->hdrs, (r->nhdrs + 2) * sizeof(*n));
	if (n == NULL) {
		free(line);
		return -1;
	}
	r->hdrs = n;
	r->hdrs[r->nhdrs++] = line;
	r->hdrs[r->nhdrs] = NULL;
	return 0;
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
		add_hdr(hc->r, "%s: %s", k, v);
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

/* ---- the worker: the upstream transfer ---------------------------------- */

static size_t
on_up_header(const char *p, size_t n, void *arg)
{
	struct preq *r = arg;

	pthread_mutex_lock(&r->mu);
	if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) {
		/* A new status line (after a 1xx, the real one). */
		const char *sp = memchr(p, ' ', n);
		buf_reset(&r->head);
		r->status = sp ? strtol(sp, NULL, 10) : 0;
	}
	if (buf_append(&r->head, p, n) < 0) {
		pthread_mutex_unlock(&r->mu);
		return 0;
	}
	if ((n == 2 && p[0] == '\r') || (n == 1 && p[0] == '\n')) {
		if (r->status >= 200 && r->status < 400) {
			r->head_ready = true;
			wake_conn(r);
		} else if (r->status >= 400) {
			r->errored = true;
		}
	}
	pthread_mutex_unlock(&r->mu);
	return n;
}

static size_t
on_up_body(const char *p, size_t n, void *arg)
{
	struct preq *r = arg;
	size_t rc = n;

	pthread_mutex_lock(&r->mu);
	if (r->errored) {
		/* Kept to classify; beyond the cap only counted. */
		if (r->ring.len + n <= PROXY_ERROR_BODY_MAX)
			buf_append(&r->ring, p, n);
	} else {
		while (!r->closed && r->ring.len > 0 &&
		       r->ring.len + n > PROXY_RING_BYTES)
			pthread_cond_wait(&r->space, &r->mu);
		if (r->closed || buf_append(&r->ring, p, n) < 0)
			rc = 0; /* the client is gone: stop the transfer */
		else
			wake_conn(r);
	}
	pthread_mutex_unlock(&r->mu);
	return rc;
}

/* An error of our own, as JSON in the providers' usual shape, into out. */
static void
error_json(const char *type, const char *msg, struct buf *out)
{
	struct jv *o = jv_obj(), *e = jv_obj();

	jv_set_str(e, "type", type);
	jv_set_str(e, "message", msg);
	jv_set_str(o, "type", "error");
	jv_set(o, "error", e);
	jv_dump(o, out);
	jv_free(o);
}

/* Replaces the upstream's answer with an error of our own. */
static void
own_error(struct preq *r, long status, const char *type, const char *msg)
{
	r->status = status;
	r->errored = false;
	buf_reset(&r->ring);
	error_json(type, msg, &r->ring);
	buf_reset(&r->head);
	buf_appendf(&r->head, "Content-Type: application/json\r\n");
}

static void *
worker_main(void *arg)
{
	struct preq *r = arg;
	struct http_call h = {0};
	char msg[512];
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
	rc = http_perform(&h);
	pthread_mutex_lock(&r->mu);
	if (rc < 0 && !r->head_ready && !r->errored) {
		log_warn("proxy: sandbox %s: %s: %s", r->sandbox,
		         r->path.up.name, h.err);
		snprintf(msg, sizeof(msg), "%s: upstream unreachable: %s",
		         r->path.up.name, h.err);
		own_error(r, 502, "api_error", msg);
	} else if (r->errored) {
		if (provider_permanent_error(r->path.up.name, r->status,
		                             r->ring.data ? r->ring.data : "",
		                             r->ring.len, msg, sizeof(msg))) {
			log_warn("proxy: sandbox %s: %s (HTTP %ld)", r->sandbox,
			         msg, r->status);
			own_error(r, 400, "invalid_request_error", msg);
			task_provider_error(r->px->core, r->sandbox, msg);
		}
		r->errored = false;
	}
	r->up_broken = rc < 0 && r->head_ready;
	r->up_done = true;
	r->head_ready = true;
	wake_conn(r);
	pthread_mutex_unlock(&r->mu);
	preq_unref(r);
	return NULL;
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
	return n;
}

/* Response headers worth passing on (not the connection's own). */
static bool
kept_response_header(const char *line, size_t n)
{
	static const char *const drop[] = {
	    "content-length:", "transfer-encoding:",
	    "connection:",     "keep-alive:",
	    "proxy-",          "upgrade:",
	    "set-cookie:",     "alt-svc:",
	    "date:",           "server:"};

	if (n < 3 || (n >= 5 && memcmp(line, "HTTP/", 5) == 0))
		return false;
	for (size_t i = 0; i < sizeof(drop) / sizeof(*drop); i++)
		if (strncasecmp(line, drop[i], strlen(drop[i])) == 0)
			return false;
	return memchr(line, ':', n) != NULL;
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
		if (!kept_response_header(p, n))
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
reply_now(struct MHD_Connection *conn, unsigned status, const char *type,
          const char *msg)
{
	struct MHD_Response *mr;
	enum MHD_Result ret;
	struct buf b;

	buf_init(&b, 0);
	error_json(type, msg, &b);
	mr = MHD_create_response_from_buffer(b.len, b.data ? b.data : "",
	                                     MHD_RESPMEM_MUST_COPY);
	buf_release(&b);
	if (mr == NULL)
		return MHD_NO;
	MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE,
	                        "application/json");
	ret = MHD_queue_response(conn, status, mr);
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

/* The caller's proxy token: x-api-key, or Authorization: Bearer. */
static const char *
token_of(struct MHD_Connection *conn)
{
	const char *t =
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "x-api-key");
	const char *a;

	if (t && *t)
		return t;
	a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	                                MHD_HTTP_HEADER_AUTHORIZATION);
	if (a && strncasecmp(a, "Bearer ", 7) == 0)
		return a + 7;
	return NULL;
}

/*
 * A token works only from its own sandbox's address, so one copied into
 * another sandbox is useless there.
 */
static bool
from_sandbox(struct MHD_Connection *conn, const struct sandbox *sb)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr_in *sin;
	char ip[INET_ADDRSTRLEN];

	if (ci == NULL || ci->client_addr == NULL ||
	    ci->client_addr->sa_family != AF_INET)
		return false;
	sin = (const struct sockaddr_in *)ci->client_addr;
	if (inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip)) == NULL)
		return false;
	return sb->container_ip[0] && strcmp(ip, sb->container_ip) == 0;
}

/* Everything before the transfer: path, token, credential, URL. */
static enum MHD_Result
begin(struct preq *r, const char *path)
{
	struct MHD_Connection *conn = r->conn;
	char msg[384], qs[1024] = "";
	struct query q = {.out = qs, .len = sizeof(qs)};
	struct cred cred;
	struct beta_in beta = {.n = 0};
	struct header_copy hc = {.r = r};
	struct sandbox sb;
	const char *token = token_of(conn);
	pthread_t t;
	pthread_attr_t attr;
	int rc;

	if (r->too_big)
		return reply_now(conn, 413, "request_too_large",
		                 "the request body is over the proxy's limit");
	if (token == NULL ||
	    cred_sandbox_for_token(r->px->core, token, &sb) < 0 ||
	    !from_sandbox(conn, &sb))
		return reply_now(conn, 401, "authentication_error",
		                 "sandboxd proxy: missing or invalid sandbox "
		                 "token");
	snprintf(r->sandbox, sizeof(r->sandbox), "%s", sb.id);
	if (provider_path(r->px->core->cfg, path, &r->path, msg, sizeof(msg)) <
	    0)
		return reply_now(conn, 404, "not_found_error", msg);
	MHD_get_connection_values(conn, MHD_HEADER_KIND, join_beta, &beta);
	rc = cred_for(r->px->core, r->path.agent, &r->path.up,
	              beta.n ? beta.s : NULL, &cred, msg, sizeof(msg));
	if (rc < 0)
		return reply_now(conn, 401, "authentication_error", msg);
	if (cred.sets_beta && beta.too_long) {
		cred_wipe(&cred);
		return reply_now(conn, 400, "invalid_request_error",
		                 "the anthropic-beta headers are too long");
	}
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, copy_arg, &q);
	if (q.bad) {
		cred_wipe(&cred);
		return reply_now(conn, 400, "invalid_request_error",
		                 "the query string is too long");
	}
	snprintf(r->url, sizeof(r->url), "%s%s%s", cred.base_url, r->path.rest,
	         qs);
	hc.drop_beta = cred.sets_beta;
	MHD_get_connection_values(conn, MHD_HEADER_KIND, copy_header, &hc);
	if ((cred.header[0] &&
	     add_hdr(r, "%s: %s", cred.header, cred.value) < 0) ||
	    add_hdr(r, "%s%s", "Expect:", "") < 0 ||
	    add_hdr(r, "%s%s", "Accept-Encoding: identity", "") < 0) {
		cred_wipe(&cred);
		return MHD_NO;
	}
	for (size_t i = 0; i < cred.nextra; i++)
		add_hdr(r, "%s%s", cred.extra[i], "");
	cred_wipe(&cred);
	/* Suspended until the worker has the upstream's head. */
	pthread_mutex_lock(&r->mu);
	r->refs++;
	r->st = PR_WAIT;
	r->suspended = true;
	MHD_suspend_connection(conn);
	pthread_mutex_unlock(&r->mu);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, worker_main, r);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		pthread_mutex_lock(&r->mu);
		r->refs--;
		own_error(r, 503, "overloaded_error",
		          "sandboxd proxy: cannot start a transfer");
		r->up_done = r->head_ready = true;
		wake_conn(r);
		pthread_mutex_unlock(&r->mu);
	}
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
			return reply_now(conn, 405, "invalid_request_error",
			                 "the proxy takes GET and POST");
		r = calloc(1, sizeof(*r));
		if (r == NULL)
			return MHD_NO;
		pthread_mutex_init(&r->mu, NULL);
		pthread_cond_init(&r->space, NULL);
		r->refs = 1;
		r->px = px;
		r->conn = conn;
		snprintf(r->method, sizeof(r->method), "%s", method);
		buf_init(&r->body, PROXY_MAX_BODY_BYTES);
		buf_init(&r->head, PROXY_MAX_HEAD_BYTES);
		buf_init(&r->ring, 0);
		*ctx = r;
		return MHD_YES;
	}
	if (r->st == PR_BODY && *upload_size) {
		if (!r->too_big &&
		    buf_append(&r->body, upload, *upload_size) < 0)
			r->too_big = true;
		*upload_size = 0;
		return MHD_YES;
	}
	if (r->st == PR_BODY)
		return begin(r, url);
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
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
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
	        MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
	    0, NULL, NULL, on_proxy, px, MHD_OPTION_EXTERNAL_LOGGER, on_log, px,
	    MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_THREAD_POOL_SIZE,
	    (unsigned)PROXY_THREADS, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned)PROXY_CONN_TIMEOUT_S, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)PROXY_MAX_CONNECTIONS, MHD_OPTION_NOTIFY_COMPLETED,
	    on_done, px, MHD_OPTION_END);
	if (px->mhd == NULL) {
		close(fd);
		snprintf(why, len, "cannot start the proxy's server on %s:%u",
		         addr, port);
		return -1;
	}
	core_set_proxy_url(px->core, addr, port);
	snprintf(url, sizeof(url), "http://%s:%u", addr, port);
	sbnet_proxy_state(px->core, true, url, "");
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
		else if (sbnet_wait_gateway(px->core, gw, sizeof(gw),
		                            &px->stopping) < 0)
			break;
		if (gw[0] == '\0') {
			sbnet_proxy_state(
			    px->core, false, "",
			    "SANDBOXD_NETWORK=none: sandboxes have "
			    "no network to reach it on");
			return NULL;
		}
		if (listen_on(px, gw, why, sizeof(why)) == 0)
			return NULL;
		sbnet_proxy_state(px->core, false, "", why);
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
	if (pthread_create(&px->binder, NULL, binder_main, px) != 0) {
		free(px);
		return -1;
	}
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
	atomic_store(&proxy_down, true);
	if (px->mhd)
		MHD_stop_daemon(px->mhd);
	/* px stays (still referenced here): workers of unfinished
	 * transfers may still read it, and the process is exiting. */
	proxy_stopped = px;
}
