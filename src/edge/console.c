/*
 * The console's host, console.<PREVIEW_DOMAIN> on any port: the web
 * console's files and, on the same origin, the API it calls.
 *
 * /v1, /v1/... and /healthz are forwarded to the API listener through
 * the same machinery as previews (conn.c, upstream.c): streaming both
 * ways, so an event stream passes event by event, keep-alive reused for
 * the next API request on the connection.  The head keeps the client's
 * Host (the API's CSRF Origin check compares against it) and gets the
 * edge's own X-Forwarded-For, X-Forwarded-Proto and X-Forwarded-Host;
 * the client's are dropped (head.c), so the API may trust them from its
 * loopback peer.
 *
 * The API keeps room for its own clients: the edge holds at most
 * EDGE_API_MAX_CONNECTIONS of the API's API_MAX_CONNECTIONS, so the
 * command line always finds API_DIRECT_RESERVE free, and one client
 * address at most EDGE_API_CLIENT_CONNECTIONS, in flight or idle
 * between its requests.  A request without credentials (no
 * Authorization, no Cookie: a stranger's, the open routes) is one of
 * at most EDGE_API_CLIENT_PREAUTH in flight (unanswered) per address,
 * and gets EDGE_PREAUTH_TIMEOUT_MS from its first byte to the head of
 * its answer (conn.c), so trickling a login's body holds nothing for
 * long.
 * Credentials are not checked here (that takes the store, which the
 * loop must not wait for); a false one is answered 401 from the head
 * by the API at once.  At a cap, an idle connection to the API (of the
 * address, or of anyone when the edge's share is spent) is closed to
 * make room; when there is none the request is answered 429
 * rate_limited in the API's envelope, Retry-After: 1.  Rejected: a
 * listener of the API's own for the edge (more threads; the same caps
 * would still be needed per address).
 *
 * Everything else is a file of SANDBOXD_CONSOLE_DIR, read into memory
 * once at start (edge_console_load, before the loop runs, by site_load:
 * the loader of published static releases too) and never touched on
 * disk again: the loop answers from memory, the body written straight
 * from the file's bytes (edge_io.ext), never copied.  At most
 * EDGE_CONSOLE_MAX_FILES files and EDGE_CONSOLE_MAX_BYTES together;
 * symbolic links, dot files (but .well-known) and anything but regular
 * files and directories are skipped.  A path without a file gets index.html
 * (the single-page app routes itself), except under /assets/, where a missing
 * file is a 404 (a stale bundle should fail loudly, not load HTML as script).
 * index.html is no-store, /assets/ and other content-hashed names immutable for
 * a year, the rest no-cache.  "X.br" or "X.gz" beside X is sent instead when
 * the client accepts brotli or gzip (Vary: Accept-Encoding).  Every answer
 * carries the console's security headers: a CSP that allows only this origin
 * (frames: the previews), no framing, nosniff, no referrer.  Without the
 * directory (or over the caps) every page is one that says the console was not
 * built.
 *
 * Rejected: reading files on demand (a disk read on the loop blocks
 * every preview), sendfile (the same), embedding the files in the
 * binary (the console is built separately, by npm).
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "edge/internal.h"
#include "lib/log.h"
#include "site/site.h"

#define CONSOLE_DEPTH_MAX 16

static const char console_missing[] =
    "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>The "
    "console is not built</title></head>\n<body><h1>The console is not "
    "built</h1>\n<p>The daemon found no console files. Build them with "
    "<code>make console</code> (or point SANDBOXD_CONSOLE_DIR at them) "
    "and restart sandboxd. The API works meanwhile, at /v1 on this "
    "host.</p>\n</body></html>\n";

/* The API listener: its address, with a wildcard made loopback. */
static void
api_resolve(struct edge_console *k, const struct config *cfg)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
	                         .ai_flags = AI_NUMERICSERV},
	                *res;
	char port[8];
	const char *host = cfg->api_host;

	if (strcmp(host, "0.0.0.0") == 0 || host[0] == '\0')
		host = "127.0.0.1";
	else if (strcmp(host, "::") == 0)
		host = "::1";
	snprintf(port, sizeof(port), "%u", cfg->api_port);
	if (getaddrinfo(host, port, &hints, &res) != 0) {
		log_warn("edge: cannot resolve the API's address %s: the "
		         "console cannot reach the API",
		         cfg->api_addr);
		return;
	}
	memcpy(&k->api, res->ai_addr, res->ai_addrlen);
	k->api_len = res->ai_addrlen;
	freeaddrinfo(res);
}

int
edge_console_load(struct edge *e, const char *dir, const struct config *cfg)
{
	static const struct site_limits lim = {
	    EDGE_CONSOLE_MAX_FILES, EDGE_CONSOLE_MAX_BYTES, CONSOLE_DEPTH_MAX};
	struct edge_console *k = &e->console;
	char err[160];

	api_resolve(k, cfg);
	if (dir == NULL || dir[0] == '\0')
		return 0;
	if (access(dir, F_OK) < 0) {
		snprintf(k->why, sizeof(k->why), "%s: %s", dir,
		         strerror(errno));
		log_info("console: no files at %s (make console builds them)",
		         dir);
		return 0;
	}
	if (site_load(&k->site, dir, &lim, err, sizeof(err)) < 0) {
		log_error("console: %s: %s; the console is not served", dir,
		          err);
		snprintf(k->why, sizeof(k->why), "%s", err);
		return 0;
	}
	k->loaded = site_find(k->site, "/index.html", 11) != NULL;
	if (!k->loaded) {
		log_warn("console: %s has no index.html; not served", dir);
		edge_console_free(e);
		return 0;
	}
	log_info("console: %zu files (%zu KiB) from %s", site_files(k->site),
	         site_bytes(k->site) >> 10, dir);
	return 0;
}

void
edge_console_free(struct edge *e)
{
	site_unref(e->console.site);
	e->console.site = NULL;
	e->console.loaded = false;
}

/* --- answering --------------------------------------------------------- */

const struct site_file *
edge_console_find(const struct edge_console *k, const char *path, size_t len)
{
	const struct site_file *f;

	if (!k->loaded)
		return NULL;
	if (len == 0)
		return site_find(k->site, "/", 1);
	if ((f = site_find(k->site, path, len)) != NULL)
		return f;
	if (len >= 8 && strncmp(path, "/assets/", 8) == 0)
		return NULL;
	return site_fallback(k->site, true);
}

static bool
is_api_path(const char *p, size_t n)
{
	return (n == 3 && memcmp(p, "/v1", 3) == 0) ||
	       (n > 3 && memcmp(p, "/v1/", 4) == 0) ||
	       (n == 8 && memcmp(p, "/healthz", 8) == 0);
}

/* extra: header lines of this answer ("Name: value\r\n"...). */
static void
console_answer(struct edge_conn *c, int status, const char *reason,
               const char *type, const char *cache, const char *body,
               size_t len, const char *extra)
{
	struct buf *o = &c->rs.out;
	bool keep =
	    c->req_done && !c->cl.eof && http_should_keep_alive(&c->req);
	int bad = 0;

	buf_reset(o);
	c->rs.out_sent = 0;
	bad |= buf_appendf(o,
	                   "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
	                   "Content-Length: %zu\r\nCache-Control: %s\r\n",
	                   status, reason, type, len, cache);
	bad |= buf_appendf(o, "%s", extra);
	edge_console_headers(c, o);
	if (!keep)
		bad |= buf_appendf(o, "Connection: close\r\n");
	else if (c->req.http_major == 1 && c->req.http_minor == 0)
		bad |= buf_appendf(o, "Connection: keep-alive\r\n");
	bad |= buf_append(o, "\r\n", 2);
	if (bad) {
		edge_page(c, EDGE_PAGE_BAD_GATEWAY, "answer too large");
		return;
	}
	if (c->req.method != HTTP_HEAD) {
		c->rs.ext = body;
		c->rs.ext_len = len;
		c->rs.ext_sent = 0;
	}
	edge_local_finish(c, keep);
}

static void
console_static(struct edge_conn *c, const char *path, size_t len)
{
	const struct edge_console *k = &c->e->console;
	const struct site_file *f, *send;
	const char *ae = NULL, *cache, *enc = "";
	size_t aelen = 0;
	char extra[80];

	if (c->req.method != HTTP_GET && c->req.method != HTTP_HEAD) {
		edge_page(c, EDGE_PAGE_BAD_METHOD,
		          "The console's files are "
		          "read with GET.");
		return;
	}
	if (!k->loaded) {
		console_answer(c, 503, "Service Unavailable",
		               "text/html; charset=utf-8", "no-store",
		               console_missing, sizeof(console_missing) - 1,
		               "");
		return;
	}
	f = edge_console_find(k, path, len);
	if (f == NULL) {
		static const char nf[] = "No such file in the console.\n";
		console_answer(c, 404, "Not Found", "text/plain; charset=utf-8",
		               "no-store", nf, sizeof(nf) - 1, "");
		return;
	}
	send = f;
	if ((f->gz || f->br) &&
	    edge_head_find(c->head, "accept-encoding", &ae, &aelen) == 1) {
		if (f->br && site_accepts(ae, aelen, "br")) {
			send = f->br;
			enc = "Content-Encoding: br\r\n";
		} else if (f->gz && site_accepts(ae, aelen, "gzip")) {
			send = f->gz;
			enc = "Content-Encoding: gzip\r\n";
		}
	}
	cache = strcmp(f->path, "/index.html") == 0 ? "no-store"
	        : f->immutable ? "public, max-age=31536000, immutable"
	                       : "no-cache";
	snprintf(extra, sizeof(extra), "%s%s", enc,
	         f->gz || f->br ? "Vary: Accept-Encoding\r\n" : "");
	console_answer(c, 200, "OK", f->type, cache, send->data, send->len,
	               extra);
}

/* --- the API's share of the edge ---------------------------------------- */

_Static_assert(API_DIRECT_RESERVE >= API_MAX_CONNECTIONS / 4,
               "the edge must leave the API room for its direct clients");
_Static_assert(EDGE_API_CLIENT_CONNECTIONS * 8 <= EDGE_API_MAX_CONNECTIONS,
               "one client address must not fill the edge's share");

#define API_REFUSAL(msg)                                                       \
	"{\"error\":{\"code\":\"rate_limited\",\"message\":\"" msg             \
	"\",\"retryable\":true}}\n"

/* The caps' numbers are in docs/limits.md. */
static const char api_busy_preauth[] =
    API_REFUSAL("too many requests without credentials from your address "
                "wait for the API's answer; sign in, or try again when one "
                "is answered");
static const char api_busy_client[] =
    API_REFUSAL("your address holds as many connections to the API as it "
                "may through the console host; try again when one ends");
static const char api_busy_edge[] =
    API_REFUSAL("the console host holds all the connections to the API it "
                "may; try again in a moment");

static void
api_refuse(struct edge_conn *c, const char *body, size_t len)
{
	console_answer(c, 429, "Too Many Requests", "application/json",
	               "no-store", body, len, "Retry-After: 1\r\n");
}

/*
 * Closes an idle connection to the API (its client is between
 * requests) of cl's, or of anyone's when cl is NULL: true when one was.
 */
static bool
api_reclaim(struct edge *e, const struct edge_client *cl)
{
	for (struct edge_conn *o = e->conns; o; o = o->next) {
		if (!o->up_api || o->phase != EDGE_HEAD ||
		    (cl && o->client != cl))
			continue;
		edge_upstream_close(o);
		o->rs.off = o->rs.parsed = o->rs.len = 0;
		return true;
	}
	return false;
}

static bool
has_credentials(const struct edge_conn *c)
{
	const char *v;
	size_t n;

	return edge_head_find(c->head, "authorization", &v, &n) != 0 ||
	       edge_head_find(c->head, "cookie", &v, &n) != 0;
}

/*
 * Whether the request may go to the API (a new connection unless
 * reuse): 0, counted; -1, answered 429.  An idle connection of the
 * address's (or, when the edge's share is spent, anyone's) is closed to
 * make room before a request is refused.
 */
static int
api_admit(struct edge_conn *c, bool reuse)
{
	struct edge *e = c->e;
	struct edge_client *cl = c->client;
	bool pre = !has_credentials(c);

	if (pre && cl && cl->preauth >= EDGE_API_CLIENT_PREAUTH) {
		api_refuse(c, api_busy_preauth, sizeof(api_busy_preauth) - 1);
		return -1;
	}
	if (!reuse && cl && cl->api >= EDGE_API_CLIENT_CONNECTIONS &&
	    !api_reclaim(e, cl)) {
		api_refuse(c, api_busy_client, sizeof(api_busy_client) - 1);
		return -1;
	}
	if (!reuse && e->api_conns >= EDGE_API_MAX_CONNECTIONS &&
	    !api_reclaim(e, NULL)) {
		api_refuse(c, api_busy_edge, sizeof(api_busy_edge) - 1);
		return -1;
	}
	if (pre) { /* conn.c ends it with the exchange */
		c->preauth = true;
		if (cl)
			cl->preauth++;
	}
	return 0;
}

void
edge_console_route(struct edge_conn *c, const char *host, size_t hostlen)
{
	const struct edge_span u = c->head->first;
	const char *url = c->head->bytes + u.off;
	size_t plen = 0;
	bool reuse;

	while (plen < u.len && url[plen] != '?' && url[plen] != '#')
		plen++;
	c->console = true;
	if (!is_api_path(url, plen)) {
		console_static(c, url, plen);
		return;
	}
	if (c->e->console.api_len == 0) {
		edge_page(c, EDGE_PAGE_BAD_GATEWAY,
		          "The API's address cannot be resolved.");
		return;
	}
	reuse = c->up.fd >= 0 && !c->up.eof && c->up_api;
	if (api_admit(c, reuse) < 0)
		return;
	if (edge_head_request(c, host, hostlen) < 0) {
		edge_page(c, EDGE_PAGE_TOO_LARGE, NULL);
		return;
	}
	edge_head_begin(c, &c->res);
	http_parser_init(&c->res, HTTP_RESPONSE);
	c->res.data = c;
	c->t.id[0] = '\0';
	if (reuse) {
		c->up_reused = true;
		c->phase = EDGE_EXCHANGE;
		return;
	}
	edge_upstream_open(c, "", 0);
}
