/*
 * The API server on libmicrohttpd.
 *
 * Threads: MHD's internal pool of API_THREADS threads, each with its own
 * epoll loop; handlers run on them and may block on Docker.  A request is
 * handled once its body is complete: the body is collected into a buffer
 * capped at API_MAX_BODY_BYTES (or its route's cap).
 *
 * Order of checks for every request: request id, then, from the head
 * alone and before a byte of the body is read, the Host guard when
 * authentication is off (loopback names only: DNS rebinding) and
 * authentication (every /v1 path, known or not, needs a token, so the
 * API's shape is not visible to strangers; with authentication off, a
 * request straight from a loopback client needs none, one through the
 * edge or another proxy still does), then the cross-site walls of a
 * write (guard.h: Origin, Sec-Fetch-Site, Content-Type; 403 or 415) and
 * a cookie's CSRF token, then a declared Content-Length over the cap
 * (413, still unread); then routing (404, then 405 with Allow), the
 * path's ids (400 when malformed), then the handler.  A refusal from
 * the head is queued on libmicrohttpd's first call, so it answers
 * without reading the body and closes the connection: a stranger costs
 * the server a head, not 16 MiB.  Every error leaves through
 * api_reply_err() (reply.c): the one place that writes the envelope.
 *
 * With authentication off the listener must be a loopback address:
 * api_start refuses to start on another, rather than listen elsewhere
 * than SANDBOXD_API_ADDR says.
 *
 * The API is three files, called one way: this one (libmicrohttpd's
 * glue, the head's checks) calls the router (routes.c: the route tables
 * and the matching, then the handler), the handlers call the replies
 * (reply.c).
 */
#include "api/server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/api.h"
#include "api/auth.h"
#include "api/guard.h"
#include "api/routes.h"
#include "api/session.h"
#include "lib/limits.h"
#include "lib/log.h"
#include "task/evlog.h"

struct api {
	struct core *core;
	struct auth *auth;
	struct MHD_Daemon *mhd;
};

/* /metrics too: it tells a stranger how busy the host is. */
static bool
needs_token(const char *path)
{
	return strcmp(path, "/v1") == 0 || strncmp(path, "/v1/", 4) == 0 ||
	       strcmp(path, "/metrics") == 0;
}

struct cookie_walk {
	struct req *r;
	bool found;
};

static enum MHD_Result
each_cookie(void *cls, enum MHD_ValueKind kind, const char *key,
            const char *value)
{
	struct cookie_walk *cw = cls;

	(void)kind;
	if (strcasecmp(key, MHD_HTTP_HEADER_COOKIE) != 0 || value == NULL)
		return MHD_YES;
	cw->found = signin_session(cw->r, value) == 0;
	return cw->found ? MHD_NO : MHD_YES;
}

/*
 * Who the caller is: anyone when authentication is off for the request
 * (r->auth_off), else a bearer token when Authorization is given (the
 * cookie is then ignored), else a console session from any of the
 * Cookie headers.  0, or -1 when neither authenticates.
 */
static int
authenticate(struct api *a, struct MHD_Connection *conn, struct req *r)
{
	const char *hdr = MHD_lookup_connection_value(
	    conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	struct cookie_walk cw = {r, false};

	if (r->auth_off) {
		snprintf(r->owner, sizeof(r->owner), "%s",
		         AUTH_FIRST_TOKEN_NAME);
		r->operator= true;
		return 0;
	}
	if (hdr) {
		if (!auth_check(a->auth, hdr, r->owner, sizeof(r->owner)))
			return -1;
		r->via = API_VIA_TOKEN;
		r->operator= auth_operator(a->auth, r->owner);
		return 0;
	}
	MHD_get_connection_values(conn, MHD_HEADER_KIND, each_cookie, &cw);
	return cw.found ? 0 : -1;
}

static bool
safe_method(const char *m)
{
	return strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0;
}

static bool
has_body(struct req *r)
{
	const char *cl = api_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);

	return api_header(r, MHD_HTTP_HEADER_TRANSFER_ENCODING) ||
	       (cl && strtoull(cl, NULL, 10) > 0);
}

/* The cross-site walls (guard.h) of a write: true when refused, the
 * answer in w. */
static bool
walled(struct req *r, const struct route *rt, struct resp *w)
{
	const struct guard_head h = {
	    .method = r->method,
	    .host = api_header(r, MHD_HTTP_HEADER_HOST),
	    .origin = api_header(r, "Origin"),
	    .sec_fetch_site = api_header(r, "Sec-Fetch-Site"),
	    .ctype = api_header(r, MHD_HTTP_HEADER_CONTENT_TYPE),
	    .https = r->https,
	    .has_body = has_body(r),
	    .raw_body = rt && rt->raw_body,
	};
	const char *json = "send Content-Type: application/json (a file's "
	                   "content: application/octet-stream)";

	switch (guard_check(&h)) {
	case GUARD_OK:
		return false;
	case GUARD_FOREIGN_ORIGIN:
		api_fail(w, 403, "csrf_failed",
		         "a write from another origin is refused: Origin "
		         "%.100s is not %s://%.100s, the origin of this "
		         "request's Host",
		         h.origin, r->https ? "https" : "http",
		         h.host ? h.host : "(no Host)");
		break;
	case GUARD_FOREIGN_SITE:
		api_fail(w, 403, "csrf_failed",
		         "a write from another site is refused: "
		         "Sec-Fetch-Site is %.40s (only same-origin and none "
		         "pass; a preview is same-site, and refused too)",
		         h.sec_fetch_site);
		break;
	case GUARD_SIMPLE_TYPE:
		api_fail(w, 415, "unsupported_media_type",
		         "Content-Type %.100s is refused on every write (any "
		         "web page can send it to any site): %s",
		         h.ctype, json);
		break;
	case GUARD_NO_TYPE:
		api_fail(w, 415, "unsupported_media_type",
		         "a body without Content-Type is refused: %s", json);
		break;
	case GUARD_NOT_JSON:
		api_fail(w, 415, "unsupported_media_type",
		         "%s %s takes JSON, not %.100s: send Content-Type: "
		         "application/json",
		         r->method, r->path, h.ctype);
		break;
	}
	return true;
}

/*
 * What the head alone decides: true when the request is refused (the
 * answer is in w), else r->owner is the caller's tenant.  Open routes
 * (health, the sign-in's status, setup and login) are served to anyone,
 * who they are is still worked out for the status.  Every write then
 * passes the cross-site walls (walled), and one signed in by the cookie
 * the CSRF check (signin_csrf).
 */
static bool
refused(struct api *a, struct MHD_Connection *conn, struct req *r,
        struct resp *w)
{
	const struct route *rt;
	bool known, bad;
	const char *hdr;

	hdr = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	                                  MHD_HTTP_HEADER_HOST);
	if (!auth_host_allowed(a->auth, hdr)) {
		api_fail(
		    w, 403, "host_not_allowed",
		    "authentication is off (SANDBOXD_API_AUTH_DISABLED), so "
		    "the API answers only requests for localhost, "
		    "127.0.0.1, [::1] or the console's host; Host: %.100s "
		    "is refused",
		    hdr ? hdr : "(none)");
		return true;
	}
	if (!needs_token(r->path))
		return false;
	rt = api_route_find(r, &known, &bad, NULL, 0);
	if (authenticate(a, conn, r) < 0 && !(rt && rt->open)) {
		api_fail(w, 401, "unauthorized",
		         "missing or invalid bearer token "
		         "(Authorization: Bearer <token>) or console "
		         "session%s",
		         auth_disabled(a->auth)
		             ? " (authentication is off only for clients on "
		               "this host calling the API's own address, not "
		               "through the edge)"
		             : "");
		return true;
	}
	if (walled(r, rt, w))
		return true;
	if (r->via == API_VIA_SESSION && !safe_method(r->method) &&
	    !(rt && rt->open) && signin_csrf(r, w) < 0)
		return true;
	return false;
}

/*
 * An event stream: 0 bytes means the subscription suspended the
 * connection (it is resumed when there is more), as libmicrohttpd asks
 * of callbacks that have nothing yet.
 */
static ssize_t
stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	ssize_t n = evlog_sub_read(cls, buf, max);

	(void)pos;
	return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : n;
}

static void
stream_free(void *cls)
{
	evlog_sub_close(cls);
}

static struct MHD_Response *
stream_response(struct resp *w)
{
	struct MHD_Response *mr = MHD_create_response_from_callback(
	    MHD_SIZE_UNKNOWN, API_STREAM_BLOCK, stream_read, w->stream,
	    stream_free);

	if (mr == NULL) {
		evlog_sub_close(w->stream);
		w->stream = NULL;
		return NULL;
	}
	w->stream = NULL; /* the response owns it now */
	MHD_add_response_header(mr, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	MHD_add_response_header(mr, "X-Accel-Buffering", "no");
	w->content_type = "text/event-stream";
	return mr;
}

static ssize_t
sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	const struct api_sse *sse = cls;
	ssize_t n = sse->read(sse->arg, buf, max);

	(void)pos;
	return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : n;
}

static void
sse_free(void *cls)
{
	struct api_sse *sse = cls;

	sse->free(sse->arg);
	free(sse);
}

/* stream_response's for w->sse (events.c's follower). */
static struct MHD_Response *
sse_response(struct resp *w)
{
	struct api_sse *sse = malloc(sizeof(*sse));
	struct MHD_Response *mr = NULL;

	if (sse) {
		*sse = w->sse;
		mr = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN,
		                                       API_STREAM_BLOCK,
		                                       sse_read, sse, sse_free);
	}
	if (mr == NULL) {
		w->sse.free(w->sse.arg);
		free(sse);
	}
	w->sse.read = NULL;
	if (mr) {
		MHD_add_response_header(mr, MHD_HTTP_HEADER_CACHE_CONTROL,
		                        "no-cache");
		MHD_add_response_header(mr, "X-Accel-Buffering", "no");
		w->content_type = "text/event-stream";
	}
	return mr;
}

static ssize_t
pull_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	const struct api_pull *p = cls;
	ssize_t n = p->read(p->arg, buf, max);

	(void)pos;
	if (n == 0)
		return MHD_CONTENT_READER_END_OF_STREAM;
	return n < 0 ? MHD_CONTENT_READER_END_WITH_ERROR : n;
}

static void
pull_free(void *cls)
{
	struct api_pull *p = cls;

	p->free(p->arg);
	free(p);
}

/* A body made while it is sent (chunked), given to the response. */
static struct MHD_Response *
pull_response(struct resp *w)
{
	struct api_pull *p = malloc(sizeof(*p));
	struct MHD_Response *mr = NULL;

	if (p) {
		*p = w->pull;
		mr = MHD_create_response_from_callback(
		    MHD_SIZE_UNKNOWN, API_PULL_BLOCK, pull_read, p, pull_free);
	}
	if (mr == NULL) {
		w->pull.free(w->pull.arg);
		free(p);
	}
	w->pull.read = NULL;
	return mr;
}

/* The WebSocket is done with: libmicrohttpd closes the socket. */
static void
upgrade_done(void *urh)
{
	MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
}

/*
 * A 101 answered: either the upgrade completes (on_upgrade: attach) or
 * the connection ends first (on_completed: abandon), never both.  Two
 * references: the response's callback and the request.
 */
struct upgrade_state {
	struct api_upgrade u;
	atomic_int state; /* 0 waiting, 1 attached, 2 abandoned */
	atomic_int refs;
};

static void
upgrade_unref(struct upgrade_state *st)
{
	if (atomic_fetch_sub(&st->refs, 1) == 1)
		free(st);
}

static void
on_upgrade(void *cls, struct MHD_Connection *conn, void *con_cls,
           const char *extra, size_t extra_len, MHD_socket sock,
           struct MHD_UpgradeResponseHandle *urh)
{
	struct upgrade_state *st = cls;
	int want = 0;

	(void)conn;
	(void)con_cls;
	if (atomic_compare_exchange_strong(&st->state, &want, 1))
		st->u.attach(st->u.arg, sock, (const uint8_t *)extra, extra_len,
		             upgrade_done, urh);
	else
		upgrade_done(urh);
	upgrade_unref(st);
}

/* The request ended: an upgrade that did not happen is abandoned. */
static void
upgrade_end(struct upgrade_state *st)
{
	int want = 0;

	if (atomic_compare_exchange_strong(&st->state, &want, 2) &&
	    st->u.abandon)
		st->u.abandon(st->u.arg);
	upgrade_unref(st);
}

/* 101 Switching Protocols to a WebSocket (terminal.c). */
static struct MHD_Response *
upgrade_response(struct req *r, struct resp *w)
{
	struct upgrade_state *st = malloc(sizeof(*st));
	struct MHD_Response *mr = NULL;

	if (st) {
		st->u = w->upgrade;
		atomic_init(&st->state, 0);
		atomic_init(&st->refs, 2);
		mr = MHD_create_response_for_upgrade(on_upgrade, st);
	}
	if (mr == NULL) {
		free(st);
		if (w->upgrade.abandon)
			w->upgrade.abandon(w->upgrade.arg);
		w->upgrade.attach = NULL;
		return NULL;
	}
	r->upgrade = st;
	MHD_add_response_header(mr, MHD_HTTP_HEADER_UPGRADE, "websocket");
	MHD_add_response_header(mr, "Sec-WebSocket-Accept", w->upgrade.accept);
	w->upgrade.attach = NULL;
	return mr;
}

static enum MHD_Result
send_resp(struct MHD_Connection *conn, struct req *r, struct resp *w)
{
	struct MHD_Response *mr;
	enum MHD_Result ret;

	if (w->upgrade.attach)
		mr = upgrade_response(r, w);
	else if (w->stream)
		mr = stream_response(w);
	else if (w->sse.read)
		mr = sse_response(w);
	else if (w->pull.read)
		mr = pull_response(w);
	else
		mr = MHD_create_response_from_buffer(
		    w->body.len, w->body.data ? w->body.data : "",
		    MHD_RESPMEM_MUST_COPY);
	if (mr == NULL)
		return MHD_NO;
	MHD_add_response_header(mr, "X-Request-Id", r->request_id);
	if (w->content_type)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE,
		                        w->content_type);
	if (w->status == 405)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_ALLOW, w->allow);
	if (w->etag[0])
		MHD_add_response_header(mr, MHD_HTTP_HEADER_ETAG, w->etag);
	if (w->disposition[0])
		MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_DISPOSITION,
		                        w->disposition);
	if (w->trash_id[0]) {
		char link[96];
		snprintf(link, sizeof(link),
		         "</v1/trash/%s/restore>; "
		         "rel=\"restore\"",
		         w->trash_id);
		MHD_add_response_header(mr, "Sandboxd-Trash-Id", w->trash_id);
		MHD_add_response_header(mr, "Link", link);
	}
	if (w->status == 401)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
		                        "Bearer");
	if (r->set_cookie[0])
		MHD_add_response_header(mr, MHD_HTTP_HEADER_SET_COOKIE,
		                        r->set_cookie);
	if (w->retry_after > 0) {
		char s[16];
		snprintf(s, sizeof(s), "%d", w->retry_after);
		MHD_add_response_header(mr, MHD_HTTP_HEADER_RETRY_AFTER, s);
	}
	ret = MHD_queue_response(conn, (unsigned)w->status, mr);
	MHD_destroy_response(mr);
	return ret;
}

static bool
declared_too_big(struct MHD_Connection *conn, size_t max)
{
	const char *cl = MHD_lookup_connection_value(
	    conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

	return cl && strtoull(cl, NULL, 10) > max;
}

/* The body cap of the request's route (file uploads take more). */
static size_t
body_limit(struct req *r)
{
	bool known, bad;
	const struct route *rt = api_route_find(r, &known, &bad, NULL, 0);

	return rt && rt->max_body ? rt->max_body : API_MAX_BODY_BYTES;
}

/*
 * Whether a loopback client called the API straight: no proxy's header
 * (the edge always adds X-Forwarded-For, a TLS proxy X-Forwarded-Proto
 * or Forwarded) and a loopback Host.  With authentication off only such
 * a request needs no credentials.
 */
static bool
straight(struct req *r)
{
	return !api_header(r, "X-Forwarded-For") &&
	       !api_header(r, "X-Forwarded-Proto") &&
	       !api_header(r, "X-Forwarded-Host") &&
	       !api_header(r, "Forwarded") &&
	       auth_loopback_host(api_header(r, MHD_HTTP_HEADER_HOST));
}

/* Where the request came from: r->client (the login limit's key),
 * r->https (the cookie's Secure) and r->auth_off. */
static void
request_origin(struct api *a, struct MHD_Connection *conn, struct req *r)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	const char *proto = api_header(r, "X-Forwarded-Proto");
	char peer[INET6_ADDRSTRLEN] = "unknown";
	bool loop = false;

	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *in4 = (const void *)sa;
		inet_ntop(AF_INET, &in4->sin_addr, peer, sizeof(peer));
		loop = (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, peer, sizeof(peer));
		loop = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
	}
	session_client_addr(peer, loop, api_header(r, "X-Forwarded-For"),
	                    r->client, sizeof(r->client));
	r->https =
	    auth_tls(a->auth) || (proto && strcasecmp(proto, "https") == 0);
	r->auth_off = auth_disabled(a->auth) && loop && straight(r);
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url,
           const char *method, const char *version, const char *upload,
           size_t *upload_size, void **ctx)
{
	struct api *a = cls;
	struct req *r = *ctx;
	struct resp w = {.status = 500};
	enum MHD_Result ret;
	bool refuse = false;

	(void)version;
	buf_init(&w.body, 0);
	if (r == NULL) {
		r = calloc(1, sizeof(*r));
		if (r == NULL)
			return MHD_NO;
		r->auth = a->auth;
		r->core = a->core;
		r->conn = conn;
		r->method = method;
		r->path = url;
		ulid_new(r->request_id);
		buf_init(&r->body, body_limit(r));
		request_origin(a, conn, r);
		*ctx = r;
		/* Answered now, with nothing of the body read: a refusal, or
		 * a declared body over the cap. */
		refuse = refused(a, conn, r, &w);
		if (!refuse && !declared_too_big(conn, r->body.max))
			return MHD_YES;
		r->body_too_big = !refuse;
	} else if (*upload_size) {
		if (!r->body_too_big &&
		    buf_append(&r->body, upload, *upload_size) < 0)
			r->body_too_big = true;
		*upload_size = 0;
		return MHD_YES;
	}
	if (!refuse)
		api_dispatch(r, &w);
	ret = send_resp(conn, r, &w);
	buf_release(&w.body);
	return ret;
}

static void
on_completed(void *cls, struct MHD_Connection *conn, void **ctx,
             enum MHD_RequestTerminationCode toe)
{
	struct req *r = *ctx;

	(void)cls, (void)conn, (void)toe;
	if (r == NULL)
		return;
	if (r->upgrade)
		upgrade_end(r->upgrade);
	buf_release(&r->body);
	free(r);
	*ctx = NULL;
}

static void
on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	log_warn("http: %s", line);
}

static int
resolve(const struct config *cfg, struct sockaddr_storage *ss, bool *ipv6)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
	                         .ai_flags = AI_NUMERICSERV},
	                *res;
	char port[8];

	snprintf(port, sizeof(port), "%u", cfg->api_port);
	if (getaddrinfo(cfg->api_host, port, &hints, &res) != 0)
		return -1;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*ipv6 = res->ai_family == AF_INET6;
	freeaddrinfo(res);
	return 0;
}

static bool
loopback(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in *in4 = (const void *)ss;
	const struct sockaddr_in6 *in6 = (const void *)ss;

	if (ss->ss_family == AF_INET)
		return (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
	return ss->ss_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
}

int
api_start(struct api **out, struct core *core)
{
	struct api *a = calloc(1, sizeof(*a));
	struct sockaddr_storage ss;
	bool ipv6 = false;
	unsigned flags;

	if (a == NULL)
		return -1;
	a->core = core;
	if (auth_init(&a->auth, (struct config *)core->cfg, core->store) < 0) {
		log_error("api: cannot set up authentication");
		goto fail;
	}
	if (resolve(core->cfg, &ss, &ipv6) < 0) {
		log_error("SANDBOXD_API_ADDR: cannot resolve \"%s\"",
		          core->cfg->api_host);
		goto fail;
	}
	if (auth_disabled(a->auth) && !loopback(&ss)) {
		log_error("SANDBOXD_API_AUTH_DISABLED=true serves the API on "
		          "loopback only, and SANDBOXD_API_ADDR=%s is not a "
		          "loopback address: set it to 127.0.0.1:%u (or "
		          "[::1]:%u), or turn authentication on",
		          core->cfg->api_addr, core->cfg->api_port,
		          core->cfg->api_port);
		goto fail;
	}
	flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
	        MHD_ALLOW_SUSPEND_RESUME | MHD_ALLOW_UPGRADE |
	        MHD_USE_ERROR_LOG | (ipv6 ? MHD_USE_IPv6 : 0);
	a->mhd = MHD_start_daemon(
	    flags, 0, NULL, NULL, on_request, a, MHD_OPTION_EXTERNAL_LOGGER,
	    on_mhd_log, a, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	    MHD_OPTION_THREAD_POOL_SIZE, (unsigned)API_THREADS,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)API_CONN_TIMEOUT_S,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)API_MAX_CONNECTIONS,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, a, MHD_OPTION_END);
	if (a->mhd == NULL) {
		log_error("SANDBOXD_API_ADDR: cannot listen on %s (in use?)",
		          core->cfg->api_addr);
		goto fail;
	}
	*out = a;
	return 0;
fail:
	auth_free(a->auth);
	free(a);
	return -1;
}

void
api_stop(struct api *a)
{
	if (a == NULL)
		return;
	MHD_stop_daemon(a->mhd);
	auth_free(a->auth);
	free(a);
}
