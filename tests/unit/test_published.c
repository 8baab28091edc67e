/*
 * The edge's answers for published apps (src/edge/published.c): a static
 * release answered from memory (types, ETags and 304, caching, the
 * brotli and gzip twins, ranges, the SPA fallback and 404s, HEAD, 405),
 * a release that is down, an unknown host and the custom domains' HTTP
 * check.  Requests are parsed by the edge's own parser; the answers are
 * read from the connection's buffers.  Through sockets and the daemon:
 * tests/integration/103-publish-serving.sh.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "edge/internal.h"
#include "publish/publish.h"
#include "site/site.h"
#include "unit.h"

static const char *const dir_files[][2] = {
    {"index.html", "<!doctype html><h1>app</h1>"},
    {"404.html", "<h1>gone</h1>"},
    {"assets/index-3f2a1b9c.js", "console.log('hello, world')"},
    {"assets/index-3f2a1b9c.js.gz", "GZ"},
    {"assets/index-3f2a1b9c.js.br", "BR"},
    {"data.bin", "0123456789"},
};

static char root[64];
static struct site *site;

static void
site_make(void)
{
	static const struct site_limits lim = {100, 1u << 20, 4};
	char p[256], err[128];

	snprintf(root, sizeof(root), "/tmp/test-published-XXXXXX");
	if (mkdtemp(root) == NULL)
		abort();
	snprintf(p, sizeof(p), "%s/assets", root);
	mkdir(p, 0755);
	for (size_t i = 0; i < sizeof(dir_files) / sizeof(*dir_files); i++) {
		FILE *f;
		snprintf(p, sizeof(p), "%s/%s", root, dir_files[i][0]);
		if ((f = fopen(p, "w")) == NULL)
			abort();
		fputs(dir_files[i][1], f);
		fclose(f);
	}
	if (site_load(&site, root, &lim, err, sizeof(err)) < 0)
		abort();
}

static struct edge *
edge_new(void)
{
	struct edge *e = calloc(1, sizeof(*e));

	edge_head_settings(&e->req_settings, &e->res_settings);
	snprintf(e->domain, sizeof(e->domain), "localhost");
	return e;
}

/* The answer to request (a whole head) for target kind, head and body. */
static char *
ask(enum publish_kind kind, bool spa, const char *request)
{
	struct edge *e = edge_new();
	struct sockaddr_storage peer = {.ss_family = AF_INET};
	struct edge_conn *c = edge_conn_new(e, -1, &peer);
	struct publish_target t = {.kind = kind, .spa = spa};
	const char *host = "app.apps.localhost";
	size_t len = strlen(request), n;
	char *out;

	e->conns = c;
	e->nconns = 1;
	http_parser_execute(&c->req, &e->req_settings, request, len);
	if (kind == PUBLISH_STATIC) {
		site_ref(site);
		t.site = site;
	}
	t.retry_after_s = 7;
	snprintf(t.message, sizeof(t.message), "the server is restarting");
	edge_published_serve(c, &t, host, strlen(host));
	n = c->rs.out.len + c->rs.ext_len;
	out = malloc(n + 1);
	memcpy(out, c->rs.out.data, c->rs.out.len);
	if (c->rs.ext_len)
		memcpy(out + c->rs.out.len, c->rs.ext, c->rs.ext_len);
	out[n] = '\0';
	edge_conn_close(c); /* drops the site reference it held */
	edge_pool_release(e, &e->bufs, EDGE_MAX_BUFFERED);
	edge_pool_release(e, &e->heads, sizeof(struct edge_head));
	free(e);
	return out;
}

#define GET(path, extra) "GET " path " HTTP/1.1\r\nHost: app\r\n" extra "\r\n"

static bool
has(const char *answer, const char *text)
{
	return strstr(answer, text) != NULL;
}

static const char *
body(const char *answer)
{
	const char *b = strstr(answer, "\r\n\r\n");
	return b ? b + 4 : "";
}

static void
static_files(void)
{
	char *a = ask(PUBLISH_STATIC, false, GET("/", ""));
	CHECK(has(a, "HTTP/1.1 200 OK\r\n"));
	CHECK(has(a, "Content-Type: text/html; charset=utf-8\r\n"));
	CHECK(has(a, "Cache-Control: no-cache\r\n"));
	CHECK(has(a, "X-Content-Type-Options: nosniff\r\n"));
	CHECK(has(a, "Content-Length: 27\r\n"));
	CHECK(has(a, "ETag: \""));
	CHECK(!has(a, "Vary:"));
	CHECK_STR(body(a), "<!doctype html><h1>app</h1>");
	free(a);
	a = ask(PUBLISH_STATIC, false, GET("/assets/index-3f2a1b9c.js", ""));
	CHECK(has(a, "Cache-Control: public, max-age=31536000, immutable\r\n"));
	CHECK(has(a, "Content-Type: text/javascript; charset=utf-8\r\n"));
	CHECK(has(a, "Vary: Accept-Encoding\r\n"));
	CHECK(has(a, "Accept-Ranges: bytes\r\n"));
	CHECK(!has(a, "Content-Encoding"));
	CHECK_STR(body(a), "console.log('hello, world')");
	free(a);
}

static void
twins_by_accept_encoding(void)
{
	const struct site_file *f =
	    site_find(site, "/assets/index-3f2a1b9c.js", 25);
	char want[64];
	char *a = ask(PUBLISH_STATIC, false,
	              GET("/assets/index-3f2a1b9c.js",
	                  "Accept-Encoding: gzip, deflate, br\r\n"));
	CHECK(has(a, "Content-Encoding: br\r\n"));
	CHECK(has(a, "Content-Length: 2\r\n"));
	snprintf(want, sizeof(want), "ETag: %s\r\n", f->br->etag);
	CHECK(has(a, want)); /* each representation its own tag */
	CHECK_STR(body(a), "BR");
	free(a);
	a = ask(PUBLISH_STATIC, false,
	        GET("/assets/index-3f2a1b9c.js", "Accept-Encoding: gzip\r\n"));
	CHECK(has(a, "Content-Encoding: gzip\r\n"));
	CHECK_STR(body(a), "GZ");
	free(a);
	a = ask(PUBLISH_STATIC, false,
	        GET("/assets/index-3f2a1b9c.js",
	            "Accept-Encoding: br;q=0, gzip;q=0\r\n"));
	CHECK(!has(a, "Content-Encoding"));
	CHECK_STR(body(a), "console.log('hello, world')");
	free(a);
}

static bool
inm(const char *v)
{
	return edge_etag_match(v, strlen(v), "\"a\"");
}

static void
not_modified(void)
{
	const struct site_file *f = site_find(site, "/", 1);
	char req[256];
	char *a;

	snprintf(
	    req, sizeof(req),
	    "GET / HTTP/1.1\r\nHost: app\r\nIf-None-Match: \"x\", %s\r\n\r\n",
	    f->etag);
	a = ask(PUBLISH_STATIC, false, req);
	CHECK(has(a, "HTTP/1.1 304 Not Modified\r\n"));
	CHECK(!has(a, "Content-Length"));
	CHECK_STR(body(a), "");
	free(a);
	a = ask(PUBLISH_STATIC, false,
	        GET("/", "If-None-Match: \"other\"\r\n"));
	CHECK(has(a, "HTTP/1.1 200 OK\r\n"));
	free(a);
	CHECK(inm("W/\"a\""));
	CHECK(inm(" * "));
	CHECK(inm("\"b\",\"a\""));
	CHECK(inm("\"b\" , \"a\" "));
	CHECK(!inm("\"ab\""));
	CHECK(!inm("\"a"));
	CHECK(!inm(""));
}

static void
ranges(void)
{
	char *a = ask(PUBLISH_STATIC, false,
	              GET("/data.bin", "Range: bytes=2-5\r\n"
	                               "Accept-Encoding: br\r\n"));
	CHECK(has(a, "HTTP/1.1 206 Partial Content\r\n"));
	CHECK(has(a, "Content-Range: bytes 2-5/10\r\n"));
	CHECK(has(a, "Content-Length: 4\r\n"));
	CHECK_STR(body(a), "2345");
	free(a);
	a = ask(PUBLISH_STATIC, false, GET("/data.bin", "Range: bytes=-3\r\n"));
	CHECK_STR(body(a), "789");
	free(a);
	a = ask(PUBLISH_STATIC, false,
	        GET("/data.bin", "Range: bytes=10-\r\n"));
	CHECK(has(a, "HTTP/1.1 416 Range Not Satisfiable\r\n"));
	CHECK(has(a, "Content-Range: bytes */10\r\n"));
	free(a);
	/* a compressible file asked with a range: the identity bytes */
	a = ask(PUBLISH_STATIC, false,
	        GET("/assets/index-3f2a1b9c.js",
	            "Range: bytes=0-6\r\nAccept-Encoding: gzip\r\n"));
	CHECK(!has(a, "Content-Encoding"));
	CHECK_STR(body(a), "console");
	free(a);
	a = ask(PUBLISH_STATIC, false,
	        GET("/data.bin", "Range: bytes=0-1\r\nIf-Range: \"old\"\r\n"));
	CHECK(has(a, "HTTP/1.1 200 OK\r\n")); /* changed since: all of it */
	free(a);
}

static void
fallbacks(void)
{
	char *a = ask(PUBLISH_STATIC, true, GET("/dashboard/42?tab=1", ""));
	CHECK(has(a, "HTTP/1.1 200 OK\r\n"));
	CHECK(has(a, "Cache-Control: no-cache\r\n"));
	CHECK_STR(body(a), "<!doctype html><h1>app</h1>");
	free(a);
	a = ask(PUBLISH_STATIC, false, GET("/dashboard/42", ""));
	CHECK(has(a, "HTTP/1.1 404 Not Found\r\n"));
	CHECK_STR(body(a), "<h1>gone</h1>");
	free(a);
	a = ask(PUBLISH_STATIC, false, GET("/../etc/passwd", ""));
	CHECK(has(a, "HTTP/1.1 404 Not Found\r\n"));
	free(a);
}

static void
methods(void)
{
	char *a =
	    ask(PUBLISH_STATIC, false, "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n");
	CHECK(has(a, "HTTP/1.1 200 OK\r\n"));
	CHECK(has(a, "Content-Length: 27\r\n"));
	CHECK_STR(body(a), "");
	free(a);
	a = ask(PUBLISH_STATIC, false,
	        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n");
	CHECK(has(a, "HTTP/1.1 405 Method Not Allowed\r\n"));
	CHECK(has(a, "Allow: GET, HEAD\r\n"));
	free(a);
}

static void
down_unknown_and_verify(void)
{
	char *a = ask(PUBLISH_DOWN, false, GET("/", ""));
	CHECK(has(a, "HTTP/1.1 503 Service Unavailable\r\n"));
	CHECK(has(a, "Retry-After: 7\r\n"));
	CHECK(has(a, "the server is restarting"));
	free(a);
	a = ask(PUBLISH_NONE, false, GET("/", ""));
	CHECK(has(a, "HTTP/1.1 404 Not Found\r\n"));
	CHECK(has(a, "X-Sandboxd-Preview: unknown\r\n"));
	free(a);
}

static const struct unit_test tests[] = {
    {"static files: types, caching, ETags", static_files},
    {"brotli before gzip, by Accept-Encoding", twins_by_accept_encoding},
    {"If-None-Match answers 304", not_modified},
    {"one byte range on the identity body", ranges},
    {"SPA fallback, 404.html, no escape", fallbacks},
    {"HEAD and 405", methods},
    {"a release down, an unknown host", down_unknown_and_verify},
};

int
main(void)
{
	int rc;

	site_make();
	rc = UNIT_RUN("published", tests);
	site_unref(site);
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd) != 0)
			rc = 1;
	}
	return rc;
}
