/*
 * Unit tests of the edge's heads and pages (src/edge/head.c, pages.c):
 * what the app receives for a request, what the client receives for the
 * app's answer, and the edge's own answers.  Heads are fed through
 * http_parser with the edge's callbacks, whole and one byte at a time.
 * The proxying itself runs against real sockets in
 * tests/integration/30-edge.sh.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "edge/internal.h"
#include "site/site.h"
#include "unit.h"

#define HOST "s-01arz3ndektsv4rrffq69g5fav-3000.preview.localhost:8080"

static struct edge *
edge_new(void)
{
	struct edge *e = calloc(1, sizeof(*e));

	edge_head_settings(&e->req_settings, &e->res_settings);
	snprintf(e->console_origin, sizeof(e->console_origin),
	         "http://console.localhost:8080");
	snprintf(e->domain, sizeof(e->domain), "localhost");
	return e;
}

static struct edge_conn *
conn_new(struct edge *e)
{
	struct sockaddr_storage peer = {0};
	struct sockaddr_in *in = (struct sockaddr_in *)&peer;
	struct edge_conn *c;

	in->sin_family = AF_INET;
	in->sin_addr.s_addr = htonl(0x0a000005); /* 10.0.0.5 */
	c = edge_conn_new(e, -1, &peer);
	/* As route.c leaves them for HOST. */
	snprintf(c->t.id, sizeof(c->t.id), "01ARZ3NDEKTSV4RRFFQ69G5FAV");
	c->t.port = 3000;
	snprintf(c->port, sizeof(c->port), ":8080");
	e->conns = c;
	e->nconns = 1;
	return c;
}

static void
done(struct edge *e)
{
	while (e->conns)
		edge_conn_close(e->conns);
	edge_pool_release(e, &e->bufs, EDGE_MAX_BUFFERED);
	edge_pool_release(e, &e->heads, sizeof(struct edge_head));
	CHECK(e->mem == 0); /* every page the edge held was counted back */
	free(e);
}

/*
 * Feeds text to parser p in pieces of step bytes (0: at once) until the
 * head is complete; returns the parser's error, HPE_PAUSED when done.
 */
static enum http_errno
feed_head(struct edge_conn *c, http_parser *p, const char *text, size_t step)
{
	const http_parser_settings *s =
	    p == &c->req ? &c->e->req_settings : &c->e->res_settings;
	size_t len = strlen(text), off = 0;

	while (off < len && HTTP_PARSER_ERRNO(p) == HPE_OK) {
		size_t n = step && step < len - off ? step : len - off;
		off += http_parser_execute(p, s, text + off, n);
	}
	return HTTP_PARSER_ERRNO(p);
}

static const char *
out_text(struct buf *b)
{
	return b->data ? b->data : "";
}

static void
request_rewrite_tls(bool tls, size_t step, const char *in, const char *want)
{
	struct edge *e = edge_new();
	struct edge_conn *c = conn_new(e);
	const char *host = NULL;
	size_t hostlen = 0;

	CHECK(feed_head(c, &c->req, in, step) == HPE_PAUSED);
	CHECK(c->head_complete);
	e->tls = tls;
	CHECK(edge_head_find(c->head, "HOST", &host, &hostlen) == 1);
	CHECK(hostlen == strlen(HOST) && memcmp(host, HOST, hostlen) == 0);
	CHECK(edge_head_request(c, host, hostlen) == 0);
	CHECK_STR(out_text(&c->rq.out), want);
	done(e);
}

static void
request_rewrite(size_t step, const char *in, const char *want)
{
	request_rewrite_tls(false, step, in, want);
}

static void
request_head_is_rewritten(void)
{
	const char *in = "POST /a/b?c=1 HTTP/1.1\r\n"
	                 "host: " HOST "\r\n"
	                 "Accept: */*\r\n"
	                 "X-Forwarded-Host: evil.example\r\n"
	                 "Connection: Upgrade\r\n"
	                 "Upgrade: websocket\r\n"
	                 "Content-Length: 3\r\n\r\nabc";
	const char *want = "POST /a/b?c=1 HTTP/1.1\r\n"
	                   "Host: localhost:3000\r\n"
	                   "Accept: */*\r\n"
	                   "Connection: Upgrade\r\n"
	                   "Upgrade: websocket\r\n"
	                   "Content-Length: 3\r\n"
	                   "X-Forwarded-For: 10.0.0.5\r\n"
	                   "X-Forwarded-Proto: http\r\n"
	                   "X-Forwarded-Host: " HOST "\r\n\r\n";

	request_rewrite(0, in, want);
	request_rewrite(1, in, want); /* every callback split */
	request_rewrite(7, in, want);
}

static void
forwarded_headers_are_replaced(void)
{
	const char *in = "GET / HTTP/1.0\r\nX-Forwarded-For: 9.9.9.9\r\n"
	                 "X-Forwarded-For: 1.2.3.4\r\nX-Real-IP: 1.1.1.1\r\n"
	                 "Forwarded: for=8.8.8.8\r\nAccept: */*\r\n"
	                 "X-Forwarded-Proto: https\r\nHost: " HOST "\r\n\r\n";

	request_rewrite(0, in,
	                "GET / HTTP/1.0\r\nHost: localhost:3000\r\n"
	                "Accept: */*\r\n"
	                "X-Forwarded-For: 10.0.0.5\r\n"
	                "X-Forwarded-Proto: http\r\n"
	                "X-Forwarded-Host: " HOST "\r\n\r\n");
	/* behind the TLS proxy the scheme is the configuration's */
	request_rewrite_tls(true, 0,
	                    "GET / HTTP/1.1\r\nX-Forwarded-Proto: http\r\n"
	                    "Host: " HOST "\r\n\r\n",
	                    "GET / HTTP/1.1\r\nHost: localhost:3000\r\n"
	                    "X-Forwarded-For: 10.0.0.5\r\n"
	                    "X-Forwarded-Proto: https\r\n"
	                    "X-Forwarded-Host: " HOST "\r\n\r\n");
}

static void
framing_is_rewritten_canonically(void)
{
	request_rewrite(1,
	                "POST / HTTP/1.1\r\nHost: " HOST "\r\n"
	                "transfer-encoding:  Chunked \r\n\r\n0\r\n\r\n",
	                "POST / HTTP/1.1\r\nHost: localhost:3000\r\n"
	                "Transfer-Encoding: chunked\r\n"
	                "X-Forwarded-For: 10.0.0.5\r\n"
	                "X-Forwarded-Proto: http\r\n"
	                "X-Forwarded-Host: " HOST "\r\n\r\n");
	request_rewrite(0,
	                "PUT / HTTP/1.1\r\ncontent-length: 007\r\n"
	                "Host: " HOST "\r\n\r\n",
	                "PUT / HTTP/1.1\r\nHost: localhost:3000\r\n"
	                "Content-Length: 7\r\n"
	                "X-Forwarded-For: 10.0.0.5\r\n"
	                "X-Forwarded-Proto: http\r\n"
	                "X-Forwarded-Host: " HOST "\r\n\r\n");
}

/* 1: accepted; 0: refused by edge_head_check; -1: by http_parser. */
static int
framing_verdict(const char *in)
{
	struct edge *e = edge_new();
	struct edge_conn *c = conn_new(e);
	const char *why = NULL;
	int r;

	if (feed_head(c, &c->req, in, 0) != HPE_PAUSED || !c->head_complete)
		r = -1;
	else
		r = edge_head_check(c, &why) == 0 ? 1 : 0;
	CHECK(r != 0 || (why && *why)); /* a refusal says why */
	done(e);
	return r;
}

static void
ambiguous_framing_is_refused(void)
{
	static const char *const bad[] = {
	    "POST / HTTP/1.1\r\nContent-Length : 5\r\n\r\nhello",
	    "POST / HTTP/1.1\r\nContent-Length\t: 5\r\n\r\nhello",
	    "POST / HTTP/1.1\r\nX Y: 1\r\n\r\n",
	    "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
	    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
	    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n",
	    "POST / HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n",
	    "POST / HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n",
	    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked,\r\n\r\n",
	    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "Content-Length: 5\r\n\r\n",
	    "POST / HTTP/1.1\r\nContent-Length: 5\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n",
	    "POST / HTTP/1.1\r\nContent-Length: 5\r\n"
	    "Content-Length: 6\r\n\r\n",
	    "POST / HTTP/1.1\r\nContent-Length: 5\r\n"
	    "Content-Length: 5\r\n\r\n",
	    "POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n",
	    "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
	};
	static const char *const good[] = {
	    "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n",
	    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
	    "POST / HTTP/1.1\r\nTransfer-Encoding: CHUNKED\r\n\r\n",
	    "GET / HTTP/1.1\r\nX-Empty:\r\nAccept: a, b\r\n\r\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (framing_verdict(bad[i]) > 0)
			CHECK(!"an ambiguous head was accepted");
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(framing_verdict(good[i]) == 1);
}

static void
repeated_host_is_seen(void)
{
	struct edge *e = edge_new();
	struct edge_conn *c = conn_new(e);
	const char *v;
	size_t n;

	CHECK(feed_head(c, &c->req,
	                "GET / HTTP/1.1\r\nHost: a\r\nHOST: b\r\n\r\n",
	                0) == HPE_PAUSED);
	CHECK(edge_head_find(c->head, "host", &v, &n) == -1);
	CHECK(edge_head_find(c->head, "x-none", &v, &n) == 0);
	done(e);
}

static void
too_many_header_lines_fail(void)
{
	struct edge *e = edge_new();
	struct edge_conn *c = conn_new(e);
	struct buf b;

	buf_init(&b, 0);
	buf_append(&b, "GET / HTTP/1.1\r\n", 16);
	for (int i = 0; i <= EDGE_MAX_HEADER_COUNT; i++)
		buf_appendf(&b, "X-%d: v\r\n", i);
	buf_append(&b, "\r\n", 2);
	CHECK(feed_head(c, &c->req, b.data, 0) != HPE_PAUSED);
	CHECK(c->head_too_many);
	buf_release(&b);
	done(e);
}

/* The request has been routed: collect the response head. */
static struct edge_conn *
response_conn(struct edge *e, enum http_method method)
{
	struct edge_conn *c = conn_new(e);

	c->req.method = method;
	edge_head_begin(c, &c->res);
	http_parser_init(&c->res, HTTP_RESPONSE);
	c->res.data = c;
	return c;
}

#define FRAME_CSP                                                              \
	"Content-Security-Policy: frame-ancestors "                            \
	"http://console.localhost:8080\r\n"

static void
response_may_be_framed_by_the_console_only(void)
{
	struct edge *e = edge_new();
	struct edge_conn *c = response_conn(e, HTTP_GET);

	CHECK(feed_head(c, &c->res,
	                "HTTP/1.1 200 Fine Thanks\r\nx-frame-options: DENY\r\n"
	                "Content-Type: text/plain\r\nX-Frame-Options: "
	                "SAMEORIGIN\r\nContent-Length: 2\r\n\r\nok",
	                3) == HPE_PAUSED);
	CHECK(edge_head_response(c) == 0);
	CHECK_STR(out_text(&c->rs.out),
	          "HTTP/1.1 200 Fine Thanks\r\n"
	          "Content-Type: text/plain\r\n"
	          "Content-Length: 2\r\n" FRAME_CSP "\r\n");
	done(e);
}

static void
app_policy_keeps_all_but_frame_ancestors(void)
{
	struct edge *e = edge_new();
	struct edge_conn *c = response_conn(e, HTTP_GET);

	CHECK(feed_head(c, &c->res,
	                "HTTP/1.1 204 No Content\r\n"
	                "content-security-policy: default-src 'self';  "
	                "FRAME-ANCESTORS 'none' ; img-src * ;\r\n"
	                "Content-Security-Policy: frame-ancestors 'self'\r\n"
	                "Content-Security-Policy-Report-Only: frame-ancestors "
	                "'none'\r\n\r\n",
	                0) == HPE_PAUSED);
	CHECK(edge_head_response(c) == 0);
	CHECK_STR(out_text(&c->rs.out),
	          "HTTP/1.1 204 No Content\r\n"
	          "content-security-policy: default-src 'self'; img-src *\r\n"
	          "Content-Security-Policy-Report-Only: frame-ancestors "
	          "'none'\r\n" FRAME_CSP "\r\n");
	done(e);
}

static void
response_without_reason_gets_one(void)
{
	struct edge *e = edge_new();
	struct edge_conn *c = response_conn(e, HTTP_GET);

	CHECK(feed_head(c, &c->res, "HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n",
	                0) == HPE_PAUSED);
	CHECK(edge_head_response(c) == 0);
	CHECK_STR(out_text(&c->rs.out),
	          "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n" FRAME_CSP
	          "\r\n");
	done(e);
}

/* A request parsed up to its end, then answered by the edge. */
static struct edge_conn *
page_conn(struct edge *e, const char *request)
{
	struct edge_conn *c = conn_new(e);

	CHECK(feed_head(c, &c->req, request, 0) == HPE_PAUSED);
	http_parser_pause(&c->req, 0);
	http_parser_execute(&c->req, &e->req_settings, "\n", 1);
	CHECK(c->req_done);
	return c;
}

static bool
starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char *
header_value(const char *text, const char *name, char *out, size_t len)
{
	const char *p = strstr(text, name), *end;

	if (p == NULL)
		return NULL;
	p += strlen(name);
	end = strstr(p, "\r\n");
	snprintf(out, len, "%.*s", (int)(end - p), p);
	return out;
}

static void
warming_page_refreshes_and_says_so(void)
{
	struct edge *e = edge_new();
	struct edge_conn *c = page_conn(e, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
	const char *t, *body;
	char v[64];

	c->t.state = PREVIEW_WAKING;
	c->t.retry_after_s = 1;
	snprintf(c->t.message, sizeof(c->t.message), "waking <b>&</b>");
	edge_page(c, EDGE_PAGE_TARGET, NULL);
	t = out_text(&c->rs.out);
	CHECK(starts(t, "HTTP/1.1 503 Service Unavailable\r\n"));
	CHECK_STR(header_value(t, "\r\nX-Sandboxd-Preview: ", v, sizeof(v)),
	          "waking");
	CHECK_STR(header_value(t, "\r\nRetry-After: ", v, sizeof(v)), "1");
	CHECK_STR(header_value(t, "\r\nCache-Control: ", v, sizeof(v)),
	          "no-store");
	CHECK_STR(header_value(t, "\r\nContent-Type: ", v, sizeof(v)),
	          "text/html; charset=utf-8");
	CHECK(strstr(t, "Connection: close") == NULL); /* keep-alive */
	body = strstr(t, "\r\n\r\n") + 4;
	CHECK((size_t)atoi(header_value(t, "\r\nContent-Length: ", v,
	                                sizeof(v))) == strlen(body));
	CHECK(strstr(body, "<meta http-equiv=\"refresh\" content=\"1\">"));
	CHECK(strstr(body, "waking &lt;b&gt;&amp;&lt;/b&gt;"));
	CHECK(strstr(body, "<b>") == NULL);
	CHECK(c->local && c->res_done && c->phase == EDGE_EXCHANGE);
	done(e);
}

/* A sandbox of workers only: a final page (no refresh) that says why. */
static void
no_web_page_names_the_workers(void)
{
	struct edge *e = edge_new();
	struct edge_conn *c = page_conn(e, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
	const char *t;
	char v[64];

	c->t.state = PREVIEW_NO_WEB;
	c->t.port = 3000;
	snprintf(c->t.message, sizeof(c->t.message),
	         "this app has no web process; it runs workers: worker");
	edge_page(c, EDGE_PAGE_TARGET, NULL);
	t = out_text(&c->rs.out);
	CHECK(starts(t, "HTTP/1.1 404 Not Found\r\n"));
	CHECK_STR(header_value(t, "\r\nX-Sandboxd-Preview: ", v, sizeof(v)),
	          "no-web");
	CHECK(strstr(t, "Retry-After") == NULL);
	CHECK(strstr(t, "http-equiv=\"refresh\"") == NULL);
	CHECK(strstr(t, "This app has no web process"));
	CHECK(strstr(t, "it runs workers: worker"));
	done(e);
}

/* A sandbox whose node is down: 503, retried, not the warming page. */
static void
node_down_page_is_not_the_warming_page(void)
{
	struct edge *e = edge_new();
	struct edge_conn *c = page_conn(e, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
	const char *t;
	char v[64];

	c->t.state = PREVIEW_NODE_DOWN;
	c->t.port = 3000;
	c->t.retry_after_s = 5;
	snprintf(c->t.message, sizeof(c->t.message),
	         "the server that runs this app (node n2) does not answer");
	edge_page(c, EDGE_PAGE_TARGET, NULL);
	t = out_text(&c->rs.out);
	CHECK(starts(t, "HTTP/1.1 503 Service Unavailable\r\n"));
	CHECK_STR(header_value(t, "\r\nX-Sandboxd-Preview: ", v, sizeof(v)),
	          "node-down");
	CHECK(strstr(t, "Retry-After") != NULL);
	CHECK(strstr(t, "This app&#39;s server is unreachable") ||
	      strstr(t, "This app's server is unreachable"));
	CHECK(strstr(t, "Waking") == NULL && strstr(t, "Starting") == NULL);
	done(e);
}

static void
not_listening_page_names_port_and_manifest(void)
{
	struct edge *e = edge_new();
	struct edge_conn *c =
	    page_conn(e, "HEAD / HTTP/1.1\r\nHost: x\r\n\r\n");
	const char *t;
	char v[64];

	c->t.state = PREVIEW_NOT_LISTENING;
	c->t.port = 5173;
	edge_page(c, EDGE_PAGE_TARGET, NULL);
	t = out_text(&c->rs.out);
	CHECK(starts(t, "HTTP/1.1 502 Bad Gateway\r\n"));
	CHECK_STR(header_value(t, "\r\nX-Sandboxd-Preview: ", v, sizeof(v)),
	          "not-listening");
	CHECK(strstr(t, "Retry-After") == NULL);
	CHECK(atoi(header_value(t, "\r\nContent-Length: ", v, sizeof(v))) > 0);
	CHECK(strcmp(strstr(t, "\r\n\r\n"), "\r\n\r\n") == 0); /* HEAD */
	done(e);

	e = edge_new();
	c = page_conn(e, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
	c->t.state = PREVIEW_NOT_LISTENING;
	c->t.port = 5173;
	edge_page(c, EDGE_PAGE_TARGET, NULL);
	t = out_text(&c->rs.out);
	CHECK(strstr(t, "Nothing listens on port 5173"));
	CHECK(strstr(t, "sandbox.yaml") && strstr(t, "web.port"));
	done(e);
}

static void
pages_close_when_they_must(void)
{
	struct edge *e = edge_new();
	struct edge_conn *c = page_conn(e, "GET / HTTP/1.0\r\nHost: x\r\n\r\n");

	/* HTTP/1.0 without keep-alive: close after the answer */
	edge_page(c, EDGE_PAGE_NO_PREVIEW, NULL);
	CHECK(strstr(out_text(&c->rs.out), "\r\nConnection: close\r\n"));
	CHECK(strstr(out_text(&c->rs.out), "X-Sandboxd-Preview: unknown"));
	CHECK(c->close_after);
	done(e);

	e = edge_new();
	c = page_conn(e, "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
	edge_page(c, EDGE_PAGE_NO_PREVIEW, NULL);
	CHECK(strstr(out_text(&c->rs.out), "\r\nConnection: keep-alive\r\n"));
	CHECK(!c->close_after);
	done(e);

	/* the body has not been read: answer, close, drain first */
	e = edge_new();
	c = conn_new(e);
	CHECK(feed_head(c, &c->req,
	                "POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\n",
	                0) == HPE_PAUSED);
	edge_page(c, EDGE_PAGE_NO_PREVIEW, NULL);
	CHECK(strstr(out_text(&c->rs.out), "\r\nConnection: close\r\n"));
	CHECK(c->phase == EDGE_LINGER);
	done(e);

	e = edge_new();
	c = page_conn(e, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
	edge_page(c, EDGE_PAGE_BAD_METHOD, NULL);
	CHECK(starts(out_text(&c->rs.out), "HTTP/1.1 405 "));
	CHECK(c->close_after);
	done(e);
}

static void
console_request_keeps_host(void)
{
	struct edge *e = edge_new();
	struct edge_conn *c = conn_new(e);
	const char *h = "console.localhost:8080";

	CHECK(feed_head(c, &c->req,
	                "GET /v1/apps HTTP/1.1\r\nHost: console.localhost:8080"
	                "\r\nCookie: sbx_session=x\r\nX-Forwarded-For: 6.6.6.6"
	                "\r\nX-Forwarded-Proto: https\r\n\r\n",
	                7) == HPE_PAUSED);
	c->console = true;
	CHECK(edge_head_request(c, h, strlen(h)) == 0);
	CHECK_STR(out_text(&c->rq.out),
	          "GET /v1/apps HTTP/1.1\r\nHost: console.localhost:8080\r\n"
	          "Cookie: sbx_session=x\r\nX-Forwarded-For: 10.0.0.5\r\n"
	          "X-Forwarded-Proto: http\r\n"
	          "X-Forwarded-Host: console.localhost:8080\r\n\r\n");
	done(e);
}

/* Behind the TLS proxy, the console's X-Forwarded-For is the proxy's
 * last hop; anywhere else, the peer's address. */
static void
console_behind_tls_proxy_names_the_browser(void)
{
	static const struct {
		bool exempt, console;
		const char *ip, *xff, *want;
	} cases[] = {
	    {true, true, "127.0.0.1", "10.1.1.1, 192.0.2.7 ", "192.0.2.7"},
	    {true, true, "127.0.0.1", "not-an-ip", "127.0.0.1"},
	    {true, true, "10.0.0.5", "192.0.2.7", "10.0.0.5"},
	    {false, true, "127.0.0.1", "192.0.2.7", "127.0.0.1"},
	    {true, false, "127.0.0.1", "192.0.2.7", "127.0.0.1"},
	};
	const char *h = "console.localhost";

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct edge *e = edge_new();
		struct edge_conn *c = conn_new(e);
		char in[256], want[128];

		snprintf(in, sizeof(in),
		         "GET /v1/apps HTTP/1.1\r\nHost: %s\r\n"
		         "X-Forwarded-For: %s\r\n\r\n",
		         h, cases[i].xff);
		CHECK(feed_head(c, &c->req, in, 0) == HPE_PAUSED);
		e->tls_proxy_exempt = cases[i].exempt;
		c->console = cases[i].console;
		snprintf(c->ip, sizeof(c->ip), "%s", cases[i].ip);
		CHECK(edge_head_request(c, h, strlen(h)) == 0);
		snprintf(want, sizeof(want), "\r\nX-Forwarded-For: %s\r\n",
		         cases[i].want);
		CHECK(strstr(out_text(&c->rq.out), want) != NULL);
		done(e);
	}
}

static void
console_response_gets_security_headers(void)
{
	struct edge *e = edge_new();
	struct edge_conn *c = response_conn(e, HTTP_GET);
	const char *o;

	snprintf(e->domain, sizeof(e->domain), "localhost");
	c->console = true;
	snprintf(c->port, sizeof(c->port), ":8080");
	CHECK(feed_head(c, &c->res,
	                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream"
	                "\r\n\r\n",
	                0) == HPE_PAUSED);
	CHECK(edge_head_response(c) == 0);
	o = out_text(&c->rs.out);
	CHECK(strncmp(o,
	              "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
	              "Content-Security-Policy: default-src 'self'; ",
	              88) == 0);
	CHECK(strstr(o, "frame-src http://*.preview.localhost:8080;") != NULL);
	CHECK(strstr(o, "frame-ancestors 'none'") != NULL);
	CHECK(strstr(o, "\r\nX-Frame-Options: DENY\r\n") != NULL);
	CHECK(strstr(o, "\r\nX-Content-Type-Options: nosniff\r\n") != NULL);
	CHECK(strstr(o, "\r\nReferrer-Policy: no-referrer\r\n") != NULL);
	CHECK(strstr(o, "console.localhost") == NULL);
	done(e);
}

static void
preview_framed_by_console_on_request_port(void)
{
	struct edge *e = edge_new();
	struct edge_conn *c = response_conn(e, HTTP_GET);

	snprintf(e->domain, sizeof(e->domain), "localhost");
	edge_host_port(c, "s-x.preview.localhost:9999", 26);
	CHECK_STR(c->port, ":9999");
	CHECK(feed_head(c, &c->res, "HTTP/1.1 204 No Content\r\n\r\n", 0) ==
	      HPE_PAUSED);
	CHECK(edge_head_response(c) == 0);
	CHECK_STR(out_text(&c->rs.out),
	          "HTTP/1.1 204 No Content\r\nContent-Security-Policy: "
	          "frame-ancestors http://console.localhost:9999\r\n\r\n");
	edge_host_port(c, "s-x.preview.localhost:99x", 25);
	CHECK_STR(c->port, "");
	edge_host_port(c, "s-x.preview.localhost", 21);
	CHECK_STR(c->port, "");
	done(e);
}

static void
gzip_accepted(void)
{
	const char *yes[] = {
	    "gzip",       "gzip, deflate, br",   "br;q=1.0, GZIP",
	    "gzip;q=0.5", "deflate, gzip ; q=1", "*;q=1, gzip"};
	const char *no[] = {"",        "br",      "gzip;q=0", "gzip; q=0.000",
	                    "x-gzip2", "identity"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++)
		CHECK(site_accepts(yes[i], strlen(yes[i]), "gzip"));
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++)
		CHECK(!site_accepts(no[i], strlen(no[i]), "gzip"));
}

static void
write_file(const char *dir, const char *name, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void
console_files(void)
{
	struct edge *e = edge_new();
	struct config cfg = {.api_host = "127.0.0.1", .api_port = 9};
	char dir[] = "/tmp/edge-console-XXXXXX", sub[64], cmd[128];
	const struct site_file *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(sub, sizeof(sub), "%s/assets", dir);
	CHECK(mkdir(sub, 0755) == 0);
	write_file(dir, "index.html", "<!doctype html>");
	write_file(dir, "favicon.svg", "<svg/>");
	write_file(dir, ".hidden", "no");
	write_file(dir, "assets/app-1a2b.js", "js");
	write_file(dir, "assets/app-1a2b.js.gz", "gz");
	snprintf(sub, sizeof(sub), "%s/link.txt", dir);
	CHECK(symlink("/etc/hostname", sub) == 0);
	CHECK(edge_console_load(e, dir, &cfg) == 0);
	CHECK(e->console.loaded);
	CHECK(site_files(e->console.site) == 4);
	CHECK(e->console.api_len > 0);
	f = edge_console_find(&e->console, "/", 1);
	CHECK(f && strcmp(f->path, "/index.html") == 0);
	f = edge_console_find(&e->console, "/apps/01ARZ/files", 17);
	CHECK(f && strcmp(f->path, "/index.html") == 0); /* SPA fallback */
	f = edge_console_find(&e->console, "/link.txt", 9);
	CHECK(f && strcmp(f->path, "/index.html") == 0); /* links skipped */
	f = edge_console_find(&e->console, "/.hidden", 8);
	CHECK(f && strcmp(f->path, "/index.html") == 0);
	f = edge_console_find(&e->console, "/favicon.svg", 12);
	CHECK(f && strcmp(f->type, "image/svg+xml") == 0 && !f->immutable &&
	      f->gz == NULL);
	f = edge_console_find(&e->console, "/assets/app-1a2b.js", 19);
	CHECK(f && f->immutable && f->gz && f->gz->len == 2 && f->len == 2 &&
	      memcmp(f->data, "js", 2) == 0);
	CHECK(strncmp(f->type, "text/javascript", 15) == 0);
	CHECK(edge_console_find(&e->console, "/assets/gone.js", 15) == NULL);
	edge_console_free(e);
	CHECK(!e->console.loaded);
	/* No index.html: not served at all. */
	snprintf(sub, sizeof(sub), "%s/index.html", dir);
	unlink(sub);
	CHECK(edge_console_load(e, dir, &cfg) == 0);
	CHECK(!e->console.loaded);
	CHECK(edge_console_find(&e->console, "/", 1) == NULL);
	edge_console_free(e);
	CHECK(edge_console_load(e, "/nonexistent/console", &cfg) == 0);
	CHECK(!e->console.loaded);
	{
		static const char *const left[] = {"favicon.svg",
		                                   ".hidden",
		                                   "assets/app-1a2b.js",
		                                   "assets/app-1a2b.js.gz",
		                                   "link.txt",
		                                   "assets",
		                                   ""};
		for (size_t i = 0; i < sizeof(left) / sizeof(*left); i++) {
			snprintf(cmd, sizeof(cmd), "%s/%s", dir, left[i]);
			if (unlink(cmd) < 0)
				rmdir(cmd);
		}
	}
	done(e);
}

/* Private previews (private.c, head.c): what reaches the app, where a
 * link lands, the unknown-host page with its sign-in link. */
static void
private_cookies_never_reach_the_app(void)
{
	request_rewrite(
	    3,
	    "GET / HTTP/1.1\r\nHost: " HOST "\r\n"
	    "Cookie: a=1; sbx_preview=01X.0.9.mac;  sbx_session=s ; b=2\r\n"
	    "Cookie: sbx_preview=only\r\n"
	    "Cookie: sbx_previewer=kept\r\n\r\n",
	    "GET / HTTP/1.1\r\nHost: localhost:3000\r\n"
	    "Cookie: a=1; b=2\r\n"
	    "Cookie: sbx_previewer=kept\r\n"
	    "X-Forwarded-For: 10.0.0.5\r\nX-Forwarded-Proto: http\r\n"
	    "X-Forwarded-Host: " HOST "\r\n\r\n");
}

static void
private_link_lands_on_this_host(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
	    {"%2Fheaders%3Fx%3D1", "/headers?x=1"},
	    {"/a/b", "/a/b"},
	    {"", "/"},
	    {"headers", "/"},
	    {"//evil.example/", "/"},
	    {"%2F%2Fevil.example", "/"},
	    {"/\\evil.example", "/"},
	    {"%2F%5Cevil", "/"},
	    {"/a%0d%0aSet-Cookie:%20x", "/"},
	    {"/a b", "/"},
	    {"/%7e%", "/~%"},
	    {"/%zz", "/%zz"},
	};
	char out[PVAUTH_PATH_MAX + 1], big[PVAUTH_PATH_MAX + 8];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		edge_next_path(cases[i].in, strlen(cases[i].in), out);
		CHECK_STR(out, cases[i].want);
	}
	memset(big, 'a', sizeof(big));
	big[0] = '/';
	edge_next_path(big, sizeof(big), out);
	CHECK_STR(out, "/"); /* too long: not cut into another path */
}

static void
private_target_paths(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
	    {"/__sandboxd/auth?code=x", "/__sandboxd/auth?code=x"},
	    {"http://h.example:8080/__sandboxd/auth?code=x",
	     "/__sandboxd/auth?code=x"},
	    {"HTTPS://h/x", "/x"},
	    {"http://h", ""},
	    {"http://h?q", "?q"},
	    {"*", "*"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *u = cases[i].in;
		size_t n = strlen(u);
		edge_target_path(&u, &n);
		CHECK(n == strlen(cases[i].want) &&
		      memcmp(u, cases[i].want, n) == 0);
	}
}

static void
private_query_params(void)
{
	const char *u = "/__sandboxd/auth?codex=1&code=abc&next=%2F&code=2";
	const char *v = NULL;
	size_t n = 0;

	CHECK(edge_query_param(u, strlen(u), "code", &v, &n));
	CHECK(n == 3 && memcmp(v, "abc", 3) == 0);
	CHECK(edge_query_param(u, strlen(u), "next", &v, &n));
	CHECK(n == 3 && memcmp(v, "%2F", 3) == 0);
	CHECK(!edge_query_param(u, strlen(u), "cod", &v, &n));
	CHECK(!edge_query_param("/x", 2, "code", &v, &n));
	CHECK(!edge_query_param("/x?code", 7, "code", &v, &n));
}

static void
unknown_page_links_to_sign_in(void)
{
	struct edge *e = edge_new();
	struct edge_conn *c = page_conn(e, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
	const char *t;

	c->t.state = PREVIEW_UNKNOWN;
	snprintf(c->t.message, sizeof(c->t.message), "no such sandbox");
	edge_page(c, EDGE_PAGE_TARGET, NULL);
	t = out_text(&c->rs.out);
	CHECK(starts(t, "HTTP/1.1 404 Not Found\r\n"));
	CHECK(strstr(t, "X-Sandboxd-Preview: unknown"));
	CHECK(strstr(t, "<a href=\"http://console.localhost:8080/\">Sign in "
	                "to the console</a>"));
	/* nothing says why: not the sandbox, not the port */
	CHECK(strstr(t, "no such sandbox") == NULL);
	done(e);
}

/*
 * X-Forwarded-Host is written from the host the request was routed by:
 * lower case, the canonical id, the port as a number; a Host whose port
 * is no port 1-65535 is no preview at all.
 */
static void
forwarded_host_is_the_validated_host(void)
{
	static const char *const bad[] = {
	    "s-01arz3ndektsv4rrffq69g5fav-3000.preview.localhost:0",
	    "s-01arz3ndektsv4rrffq69g5fav-3000.preview.localhost:65536",
	    "s-01arz3ndektsv4rrffq69g5fav-3000.preview.localhost:80x",
	    "s-01arz3ndektsv4rrffq69g5fav-3000.preview.localhost:",
	    "s-01arz3ndektsv4rrffq69g5fav-3000.preview.localhost::80",
	    "s-01arz3ndektsv4rrffq69g5fav-3000.preview.localhost:123456",
	    "s-01arz3ndektsv4rrffq69g5fav-3000.preview.localhost:80\x01",
	};
	const char *odd =
	    "S-01ARZ3NDEKTSV4RRFFQ69G5FAV-3000.PREVIEW.LocalHost:08080";
	struct edge *e = edge_new();
	struct edge_conn *c = conn_new(e);
	char id[ULID_LEN + 1], in[256], got[128];
	int port = 0;

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		CHECK(!edge_host_parse("localhost", bad[i], strlen(bad[i]), id,
		                       &port));
	CHECK(edge_host_parse("localhost", odd, strlen(odd), id, &port));
	CHECK_STR(id, "01ARZ3NDEKTSV4RRFFQ69G5FAV");
	CHECK(port == 3000);
	edge_host_port(c, odd, strlen(odd));
	CHECK_STR(c->port, ":8080");
	snprintf(in, sizeof(in), "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", odd);
	CHECK(feed_head(c, &c->req, in, 0) == HPE_PAUSED);
	CHECK(edge_head_request(c, odd, strlen(odd)) == 0);
	CHECK_STR(header_value(out_text(&c->rq.out),
	                       "\r\nX-Forwarded-Host: ", got, sizeof(got)),
	          "s-01arz3ndektsv4rrffq69g5fav-3000.preview.localhost:8080");
	edge_host_port(c, "console.localhost:0", 19);
	CHECK_STR(c->port, "");
	done(e);
}

/* A console host request for the API, routed by edge_console_route
 * with the API's address set (it is not connected to here). */
static struct edge_conn *
api_request(struct edge *e, struct edge_client *cl, const char *creds,
            struct edge_conn *other)
{
	struct edge_conn *c = conn_new(e);
	char in[256];

	if (other) { /* conn_new keeps one; done() closes both */
		c->next = other;
		other->prev = c;
		e->nconns = 2;
	}
	e->console.api_len = sizeof(struct sockaddr_in);
	c->client = cl;
	cl->n++;
	snprintf(in, sizeof(in),
	         "GET /v1/apps HTTP/1.1\r\nHost: console.localhost:8080\r\n"
	         "%s\r\n",
	         creds);
	CHECK(feed_head(c, &c->req, in, 0) == HPE_PAUSED);
	edge_console_route(c, "console.localhost:8080", 22);
	return c;
}

static bool
refused_with(const struct edge_conn *c, const char *words)
{
	return starts(out_text((struct buf *)&c->rs.out),
	              "HTTP/1.1 429 Too Many Requests\r\n") &&
	       strstr(out_text((struct buf *)&c->rs.out),
	              "\r\nRetry-After: 1\r\n") &&
	       c->rs.ext && strstr(c->rs.ext, "\"code\":\"rate_limited\"") &&
	       strstr(c->rs.ext, words);
}

/*
 * The console host's share of the API: an address with its requests
 * without credentials in flight, or holding its connections, and the
 * edge holding its share, are answered 429 before the API is asked;
 * an idle connection is closed to make room instead.
 */
static void
api_share_is_capped(void)
{
	struct edge *e = edge_new();
	struct edge_client cl = {.preauth = EDGE_API_CLIENT_PREAUTH};
	struct edge_conn *c, *idle;

	c = api_request(e, &cl, "", NULL);
	CHECK(refused_with(c, "without credentials from your address"));
	CHECK(!c->preauth && cl.preauth == EDGE_API_CLIENT_PREAUTH);
	done(e);

	e = edge_new();
	cl = (struct edge_client){.api = EDGE_API_CLIENT_CONNECTIONS};
	e->api_conns = cl.api;
	c = api_request(e, &cl, "Authorization: Bearer x\r\n", NULL);
	CHECK(refused_with(c, "your address holds"));
	done(e);

	e = edge_new();
	cl = (struct edge_client){0};
	e->api_conns = EDGE_API_MAX_CONNECTIONS;
	c = api_request(e, &cl, "Cookie: sbx_session=x\r\n", NULL);
	CHECK(refused_with(c, "the console host holds"));
	done(e);

	/* Another connection of the address idles on an API connection:
	 * it is closed, and the request goes on (to a connect that fails
	 * here: no event loop). */
	e = edge_new();
	cl = (struct edge_client){.api = EDGE_API_CLIENT_CONNECTIONS};
	e->api_conns = cl.api;
	idle = conn_new(e);
	idle->client = &cl;
	cl.n++;
	idle->up = (struct edge_side){.fd = dup(1), .c = idle};
	idle->up_api = true;
	c = api_request(e, &cl, "Authorization: Bearer x\r\n", idle);
	CHECK(idle->up.fd == -1 && !idle->up_api);
	CHECK(cl.api == EDGE_API_CLIENT_CONNECTIONS - 1);
	CHECK(e->api_conns == EDGE_API_CLIENT_CONNECTIONS - 1);
	CHECK(!starts(out_text(&c->rs.out), "HTTP/1.1 429"));
	done(e);
}

int
main(void)
{
	static const struct unit_test tests[] = {
	    {"private: the preview and session cookies never reach the app",
	     private_cookies_never_reach_the_app},
	    {"private: a link lands on a path of this host only",
	     private_link_lands_on_this_host},
	    {"private: query parameters", private_query_params},
	    {"private: the path of origin- and absolute-form targets",
	     private_target_paths},
	    {"private: the unknown page links to sign-in, says no why",
	     unknown_page_links_to_sign_in},
	    {"request head: Host and X-Forwarded-*, in any pieces",
	     request_head_is_rewritten},
	    {"request head: the client's X-Forwarded-* and Forwarded replaced",
	     forwarded_headers_are_replaced},
	    {"request head: framing written canonically",
	     framing_is_rewritten_canonically},
	    {"request head: ambiguous framing refused (400)",
	     ambiguous_framing_is_refused},
	    {"request head: a repeated Host is found", repeated_host_is_seen},
	    {"request head: too many lines fail the parse",
	     too_many_header_lines_fail},
	    {"response head: X-Frame-Options replaced by frame-ancestors",
	     response_may_be_framed_by_the_console_only},
	    {"response head: an app's CSP loses only frame-ancestors",
	     app_policy_keeps_all_but_frame_ancestors},
	    {"response head: an empty reason phrase is filled",
	     response_without_reason_gets_one},
	    {"page: warming answer for browsers and machines",
	     warming_page_refreshes_and_says_so},
	    {"page: not listening names the port and sandbox.yaml",
	     not_listening_page_names_port_and_manifest},
	    {"page: no web process names the workers",
	     no_web_page_names_the_workers},
	    {"a node down page, not the warming one",
	     node_down_page_is_not_the_warming_page},
	    {"page: Connection close or keep-alive as the request allows",
	     pages_close_when_they_must},
	    {"console: API requests keep Host; X-Forwarded-* are the edge's",
	     console_request_keeps_host},
	    {"console: behind the TLS proxy, its X-Forwarded-For's last hop",
	     console_behind_tls_proxy_names_the_browser},
	    {"console: answers carry the console's security headers",
	     console_response_gets_security_headers},
	    {"preview: frame-ancestors is the console on the request's port",
	     preview_framed_by_console_on_request_port},
	    {"console: Accept-Encoding takes gzip, or says q=0", gzip_accepted},
	    {"console: files in memory, SPA fallback, assets, gzip twins",
	     console_files},
	    {"request head: X-Forwarded-Host is the validated host",
	     forwarded_host_is_the_validated_host},
	    {"console: the API's share per address, without credentials, "
	     "in all",
	     api_share_is_capped},
	};

	return UNIT_RUN("edge", tests);
}
