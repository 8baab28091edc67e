/*
 * Published apps at the edge: a request whose Host is neither the
 * console's nor a preview's is asked of publish_route() (an in-memory
 * table under its own short lock, never the store).
 *
 * A static release is answered from its site (src/site), in memory:
 * the body is written straight from the file's bytes (edge_io.ext), and
 * the connection holds a reference on the site until the answer is out
 * (c->site, dropped by edge_published_release when the exchange ends or
 * the connection closes), so a rollback or an unpublish never frees
 * bytes being sent and never waits for a slow download.  The answer:
 * Content-Type by extension, a strong ETag per representation (the
 * twin's own) with If-None-Match → 304, Cache-Control "immutable" for a
 * content-hashed name and "no-cache" for the rest (HTML always
 * revalidates, so a new release shows at once), the brotli twin before
 * the gzip one by Accept-Encoding (Vary when twins exist), one byte
 * range on the identity body (a request with Range gets the identity
 * body: 206, or 416), the SPA fallback or /404.html, nosniff, and 405
 * for anything but GET and HEAD.
 *
 * A server release is proxied like a preview (conn.c, upstream.c) to
 * its production container: the upstream connection is kept for the
 * next request when it goes to the same release (c->t.id is the
 * release id and c->t.port 0, which no preview has), no sandbox's
 * activity is touched, the app gets the Host the client asked for, and
 * its answer's headers pass as they are (no console framing policy).
 * A release that cannot answer now (DOWN) gets a page with its reason
 * and Retry-After.
 *
 * The HTTP check of a custom domain: "/.well-known/sandboxd-domain/
 * <token>" on such a host is answered from publish_verify_token() (the
 * token's text, or 404) before anything else, so it works before the
 * domain is verified and whatever the app serves.
 *
 * Private published apps pass the same gate as private previews
 * (private.c), keyed by the app.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "edge/internal.h"
#include "publish/publish.h"
#include "site/site.h"

#define VERIFY_PATH "/.well-known/sandboxd-domain/"
#define IMMUTABLE   "public, max-age=31536000, immutable"

void
edge_published_release(struct edge_conn *c)
{
	site_unref(c->site);
	c->site = NULL;
}

/* The request's path: no scheme and host, no query, no fragment. */
static void
request_path(const struct edge_conn *c, const char **p, size_t *n)
{
	size_t k = 0;

	*p = c->head->bytes + c->head->first.off;
	*n = c->head->first.len;
	edge_target_path(p, n);
	while (k < *n && (*p)[k] != '?' && (*p)[k] != '#')
		k++;
	*n = k;
}

static bool
keep_alive(const struct edge_conn *c)
{
	return c->req_done && !c->cl.eof && http_should_keep_alive(&c->req);
}

/*
 * Ends the head begun by start_head and sends it with body (borrowed:
 * it must live until the answer is out).  clen: the Content-Length, or
 * NO_LENGTH (a 304 says none).
 */
#define NO_LENGTH ((size_t)-1)
/* Bodies from this size are sent by sendfile (smaller ones go with their
 * head in one sendmsg: a second call costs more than the copy saves). */
#define SENDFILE_FROM (16u << 10)
static void
send_answer(struct edge_conn *c, size_t clen, const char *body, size_t len)
{
	struct buf *o = &c->rs.out;
	bool keep = keep_alive(c);
	int bad = 0;

	if (clen != NO_LENGTH)
		bad |= buf_appendf(o, "Content-Length: %zu\r\n", clen);
	bad |= buf_appendf(o, "X-Content-Type-Options: nosniff\r\n");
	if (!keep)
		bad |= buf_appendf(o, "Connection: close\r\n");
	else if (c->req.http_major == 1 && c->req.http_minor == 0)
		bad |= buf_appendf(o, "Connection: keep-alive\r\n");
	bad |= buf_append(o, "\r\n", 2);
	if (bad) {
		edge_published_release(c);
		edge_page(c, EDGE_PAGE_BAD_GATEWAY, "answer too large");
		return;
	}
	if (c->req.method != HTTP_HEAD && len > 0) {
		long long at = c->site ? site_offset(c->site, body) : -1;

		c->rs.ext = body;
		c->rs.ext_len = len;
		c->rs.ext_sent = 0;
		/* A large body goes by sendfile from the site's memfd. */
		c->rs.ext_file = at >= 0 && len >= SENDFILE_FROM;
		if (c->rs.ext_file) {
			c->rs.ext_fd = site_fd(c->site);
			c->rs.ext_off = (off_t)at;
		}
	}
	edge_local_finish(c, keep);
}

static void
start_head(struct edge_conn *c, int status, const char *reason)
{
	buf_reset(&c->rs.out);
	c->rs.out_sent = 0;
	buf_appendf(&c->rs.out, "HTTP/1.1 %d %s\r\n", status, reason);
}

/* A short text answer of ours, its body copied after the head. */
static void
answer_text(struct edge_conn *c, int status, const char *reason,
            const char *extra, const char *body)
{
	struct buf *o = &c->rs.out;
	size_t len = strlen(body);
	bool keep = keep_alive(c);
	int bad = 0;

	start_head(c, status, reason);
	bad |=
	    buf_appendf(o,
	                "Content-Type: text/plain; charset=utf-8\r\n"
	                "Cache-Control: no-store\r\n%s"
	                "Content-Length: %zu\r\n"
	                "X-Content-Type-Options: nosniff\r\n%s\r\n",
	                extra, len,
	                !keep                    ? "Connection: close\r\n"
	                : c->req.http_minor == 0 ? "Connection: keep-alive\r\n"
	                                         : "");
	if (c->req.method != HTTP_HEAD)
		bad |= buf_append(o, body, len);
	if (bad) {
		edge_page(c, EDGE_PAGE_BAD_GATEWAY, "answer too large");
		return;
	}
	edge_local_finish(c, keep);
}

/* Whether an If-None-Match list names etag (weakly, as RFC 9110 says). */
bool
edge_etag_match(const char *v, size_t n, const char *etag)
{
	size_t k = strlen(etag), i = 0;

	while (i < n) {
		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		if (i < n && v[i] == '*')
			return true;
		if (n - i >= 2 && v[i] == 'W' && v[i + 1] == '/')
			i += 2;
		if (n - i >= k && memcmp(v + i, etag, k) == 0 &&
		    (n - i == k || v[i + k] == ',' || v[i + k] == ' ' ||
		     v[i + k] == '\t'))
			return true;
		while (i < n && v[i] != ',')
			i++;
	}
	return false;
}

/* The representation to send: br, gzip or the file itself. */
static const struct site_file *
pick_coding(const struct edge_conn *c, const struct site_file *f,
            const char **coding)
{
	const char *ae = NULL;
	size_t n = 0;

	*coding = NULL;
	if ((f->br == NULL && f->gz == NULL) ||
	    edge_head_find(c->head, "accept-encoding", &ae, &n) != 1)
		return f;
	if (f->br && site_accepts(ae, n, "br")) {
		*coding = "br";
		return f->br;
	}
	if (f->gz && site_accepts(ae, n, "gzip")) {
		*coding = "gzip";
		return f->gz;
	}
	return f;
}

/*
 * The byte range asked of body (the identity representation): 1 and
 * (*off, *len), 0 the whole body, -1 416.  If-Range with another ETag
 * (or a date: we have none) means the whole body.
 */
static int
asked_range(const struct edge_conn *c, const struct site_file *f, size_t *off,
            size_t *len)
{
	const char *v = NULL, *ir = NULL;
	size_t n = 0, irn = 0;

	if (edge_head_find(c->head, "range", &v, &n) != 1)
		return 0;
	if (edge_head_find(c->head, "if-range", &ir, &irn) != 0 &&
	    (irn != strlen(f->etag) || memcmp(ir, f->etag, irn) != 0))
		return 0;
	return site_range(v, n, f->len, off, len);
}

/* exact: f is the file the path named, not a fallback (which may
 * change with the next release, so is never cached long). */
static void
file_headers(struct edge_conn *c, const struct site_file *f,
             const struct site_file *send, const char *coding, bool exact)
{
	struct buf *o = &c->rs.out;

	buf_appendf(o, "Content-Type: %s\r\nETag: %s\r\nCache-Control: %s\r\n",
	            f->type, send->etag,
	            f->immutable && exact ? IMMUTABLE : "no-cache");
	if (coding)
		buf_appendf(o, "Content-Encoding: %s\r\n", coding);
	if (f->gz || f->br)
		buf_appendf(o, "Vary: Accept-Encoding\r\n");
	buf_appendf(o, "Accept-Ranges: bytes\r\n");
}

/*
 * Answers f with status (200, or 404 for the 404 page); exact: f is
 * the file the path named (not a fallback), whose caching may be long.
 */
static void
send_file(struct edge_conn *c, const struct site_file *f, int status,
          bool exact)
{
	const struct site_file *send = f;
	const char *coding = NULL, *inm = NULL;
	size_t inmlen = 0, off = 0, len = 0;
	int r = 0;

	if (status == 200 && (r = asked_range(c, f, &off, &len)) < 0) {
		char cr[64];
		snprintf(cr, sizeof(cr), "Content-Range: bytes */%zu\r\n",
		         f->len);
		answer_text(c, 416, "Range Not Satisfiable", cr, "");
		return;
	}
	if (r == 0)
		send = pick_coding(c, f, &coding);
	if (status == 200 &&
	    edge_head_find(c->head, "if-none-match", &inm, &inmlen) == 1 &&
	    edge_etag_match(inm, inmlen, send->etag)) {
		start_head(c, 304, "Not Modified");
		buf_appendf(&c->rs.out, "ETag: %s\r\nCache-Control: %s\r\n",
		            send->etag,
		            f->immutable && exact ? IMMUTABLE : "no-cache");
		if (f->gz || f->br)
			buf_appendf(&c->rs.out, "Vary: Accept-Encoding\r\n");
		send_answer(c, NO_LENGTH, NULL, 0);
		return;
	}
	if (r == 1) {
		start_head(c, 206, "Partial Content");
		file_headers(c, f, f, NULL, exact);
		buf_appendf(&c->rs.out, "Content-Range: bytes %zu-%zu/%zu\r\n",
		            off, off + len - 1, f->len);
		send_answer(c, len, f->data + off, len);
		return;
	}
	start_head(c, status, status == 200 ? "OK" : "Not Found");
	file_headers(c, f, send, coding, exact);
	send_answer(c, send->len, send->data, send->len);
}

static void
serve_static(struct edge_conn *c, const struct publish_target *t)
{
	const struct site_file *f;
	const char *path;
	size_t n;

	c->site = t->site; /* the reference route took, held until the end */
	if (c->req.method != HTTP_GET && c->req.method != HTTP_HEAD) {
		answer_text(c, 405, "Method Not Allowed",
		            "Allow: GET, HEAD\r\n",
		            "Only GET and HEAD are answered here.\n");
		return;
	}
	request_path(c, &path, &n);
	if ((f = site_find(t->site, path, n)) != NULL) {
		send_file(c, f, 200, true);
		return;
	}
	if ((f = site_fallback(t->site, t->spa)) != NULL) {
		send_file(c, f, t->spa ? 200 : 404, false);
		return;
	}
	answer_text(c, 404, "Not Found", "", "Not found.\n");
}

/* The production container: as a preview, keyed by the release. */
static void
serve_server(struct edge_conn *c, const struct publish_target *t,
             const char *host, size_t hostlen)
{
	bool reuse = c->up.fd >= 0 && !c->up.eof && !c->up_api &&
	             c->t.port == 0 && strcmp(c->t.id, t->release_id) == 0;

	c->published = true;
	if (!reuse) {
		memcpy(c->t.id, t->release_id, sizeof(c->t.id));
		c->t.port = 0;
		c->t.addr = t->addr;
	}
	if (edge_head_request(c, host, hostlen) < 0) {
		edge_page(c, EDGE_PAGE_TOO_LARGE, NULL);
		return;
	}
	edge_head_begin(c, &c->res);
	http_parser_init(&c->res, HTTP_RESPONSE);
	c->res.data = c;
	if (reuse) {
		c->up_reused = true;
		c->phase = EDGE_EXCHANGE;
		return;
	}
	edge_upstream_open(c, t->release_id, 0);
}

/* The HTTP check of a custom domain: true when answered. */
static bool
verify_check(struct edge_conn *c, const char *host, size_t hostlen)
{
	const size_t k = sizeof(VERIFY_PATH) - 1;
	const char *path;
	size_t n;
	char out[256];

	request_path(c, &path, &n);
	if (n <= k || memcmp(path, VERIFY_PATH, k) != 0)
		return false;
	if (c->e->core != NULL &&
	    (c->req.method == HTTP_GET || c->req.method == HTTP_HEAD) &&
	    publish_verify_token(c->e->core, host, hostlen, path + k, n - k,
	                         out, sizeof(out)))
		answer_text(c, 200, "OK", "", out);
	else
		answer_text(c, 404, "Not Found", "", "No such token.\n");
	return true;
}

void
edge_published_serve(struct edge_conn *c, struct publish_target *t,
                     const char *host, size_t hostlen)
{
	if (t->kind == PUBLISH_STATIC && t->site == NULL) { /* never: a bug */
		t->kind = PUBLISH_DOWN;
		snprintf(t->message, sizeof(t->message),
		         "The release's files are not loaded.");
	}
	switch (t->kind) {
	case PUBLISH_STATIC:
		if (edge_private_gate_app(c, t->app_id, t->private_gate) < 0) {
			site_unref(t->site);
			return;
		}
		serve_static(c, t);
		return;
	case PUBLISH_SERVER:
		site_unref(t->site); /* none: a server has no files here */
		if (edge_private_gate_app(c, t->app_id, t->private_gate) < 0)
			return;
		serve_server(c, t, host, hostlen);
		return;
	case PUBLISH_DOWN:
		site_unref(t->site);
		c->t.retry_after_s = t->retry_after_s;
		edge_page(c, EDGE_PAGE_DOWN, t->message);
		return;
	case PUBLISH_NONE:
	default:
		site_unref(t->site);
		edge_page(c, EDGE_PAGE_NO_PREVIEW, NULL);
		return;
	}
}

void
edge_published_route(struct edge_conn *c, const char *host, size_t hostlen)
{
	struct publish_target t = {.kind = PUBLISH_NONE};

	if (verify_check(c, host, hostlen))
		return;
	if (c->e->core != NULL)
		publish_route(c->e->core, host, hostlen, &t);
	edge_published_serve(c, &t, host, hostlen);
}
