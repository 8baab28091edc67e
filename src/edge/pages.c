/*
 * The edge's own answers: a bad request, a host that is no preview, and
 * every preview state that is not "up" (waking, starting, nothing on the
 * port, no memory headroom, failed, no web process, unknown).  Each is a small
 * HTML page for people and a status plus X-Sandboxd-Preview for machines, so a
 * script can tell the warming answer from the app's own 503.  Warming
 * pages reload themselves after Retry-After seconds, which lands a
 * browser in the app with no step of its own; the waking and starting
 * pages also ask again on their own every 25-100 ms (a fetch of the same
 * address: a refused connect to a port nobody listens on yet costs the
 * edge next to nothing) and reload the moment the answer is the app's
 * (no X-Sandboxd-Preview), so the page turns into the app within a
 * tenth of a second of the port answering, not a Retry-After later.
 *
 * The connection stays open after an answer when the request allows it
 * and was read to its end; a request whose body is still arriving gets
 * "Connection: close" and the connection lingers (conn.c) so the client
 * reads the answer instead of a reset.  The page is built in a fixed
 * buffer: message text is HTML-escaped and cut, never overflows.
 */
#include <stdio.h>
#include <string.h>

#include "edge/internal.h"

struct page_spec {
	int status;
	const char *reason;
	const char *tag;   /* X-Sandboxd-Preview, or NULL */
	const char *title; /* " <port>" follows when with_port */
	const char *text;  /* HTML */
	bool with_port;
	bool retry;  /* Retry-After and a self-refresh after as many seconds */
	bool watch;  /* the page asks again itself, fast (WATCH_SCRIPT) */
	bool signin; /* links to the console's sign-in (private previews) */
};

/*
 * The fast re-ask of a warming page.  The meta refresh stays as the way
 * without scripts.
 */
#define WATCH_SCRIPT                                                           \
	"<script>(function(){var d=25;function a(){fetch(location.href,"       \
	"{cache:'no-store',credentials:'same-origin'}).then(function(r){"      \
	"if(!r.headers.get('X-Sandboxd-Preview'))location.reload();"           \
	"else again()},again)}function again(){d=Math.min(d*1.5,100);"         \
	"setTimeout(a,d)}setTimeout(a,d)})()</script>"

static const struct page_spec edge_pages[] = {
    /*
     * An unknown host, an undeclared port and a private preview without
     * a valid cookie: one page, so that it says nothing of whether the
     * app exists (private.c).
     */
    [EDGE_PAGE_NO_PREVIEW] = {404, "Not Found", "unknown",
                              "No such preview, or a private one",
                              "There is no public preview at this address. "
                              "If it is a private preview, sign in to the "
                              "console and open it from there, or open "
                              "again the link you were given (a link works "
                              "once, in one browser).",
                              false, false, false, true},
    [EDGE_PAGE_BAD_REQUEST] = {400, "Bad Request", NULL, "Bad request",
                               "The request could not be read.", false, false},
    [EDGE_PAGE_TOO_LARGE] = {431, "Request Header Fields Too Large", NULL,
                             "Request header too large",
                             "The request's header block is over 16 KiB.",
                             false, false},
    [EDGE_PAGE_BAD_METHOD] = {405, "Method Not Allowed", NULL,
                              "Method not allowed",
                              "Previews do not accept CONNECT.", false, false},
    [EDGE_PAGE_BAD_GATEWAY] = {502, "Bad Gateway", "failed",
                               "The app did not answer properly",
                               "The app broke off the exchange.", false, false},
    [EDGE_PAGE_BUSY] = {503, "Service Unavailable", "busy",
                        "The preview edge is busy",
                        "The preview edge is short of memory for now. "
                        "Try again in a moment.",
                        false, true},
    [EDGE_PAGE_DOWN] = {503, "Service Unavailable", "down",
                        "This app cannot answer right now",
                        "The app is published, but cannot answer at the "
                        "moment. This page reloads by itself.",
                        false, true},
};

static const struct page_spec edge_state_pages[] = {
    [PREVIEW_UP] = {502, "Bad Gateway", "failed", "The app failed",
                    "The app could not be reached.", false, false},
    [PREVIEW_WAKING] = {503, "Service Unavailable", "waking", "Waking the app",
                        "The app was asleep and is starting now. This page "
                        "reloads by itself and shows the app as soon as it "
                        "answers.",
                        false, true, true},
    [PREVIEW_STARTING] = {503, "Service Unavailable", "starting",
                          "Starting the app",
                          "The app is starting. This page reloads by itself "
                          "and shows the app as soon as it answers.",
                          false, true, true},
    [PREVIEW_NOT_LISTENING] = {502, "Bad Gateway", "not-listening",
                               "Nothing listens on port",
                               "The sandbox is running, but nothing answers "
                               "on this port. Check <code>web.port</code> in "
                               "<code>sandbox.yaml</code>, and that the "
                               "server listens on 0.0.0.0, not only on "
                               "localhost.",
                               true, false},
    [PREVIEW_NO_HEADROOM] = {503, "Service Unavailable", "no-headroom",
                             "The server is short of memory",
                             "The app cannot be woken while the server is "
                             "short of memory. This page tries again by "
                             "itself.",
                             false, true},
    [PREVIEW_FAILED] = {502, "Bad Gateway", "failed", "The app failed",
                        "The sandbox cannot run the app.", false, false},
    [PREVIEW_NO_WEB] = {404, "Not Found", "no-web",
                        "This app has no web process",
                        "The app runs in the background only: its "
                        "<code>sandbox.yaml</code> declares workers and no "
                        "<code>web</code> process, so there is no page at "
                        "this address. What the workers do is in their "
                        "logs. Add a <code>web:</code> section to serve a "
                        "page.",
                        false, false},
    [PREVIEW_UNKNOWN] = {404, "Not Found", "unknown", "No such preview",
                         "No sandbox serves this address, or the sandbox "
                         "does not declare this port.",
                         false, false},
    [PREVIEW_NODE_DOWN] = {503, "Service Unavailable", "node-down",
                           "This app's server is unreachable",
                           "The server that runs this app does not answer. "
                           "The app's files are on that server; this page "
                           "tries again by itself, and the operator can "
                           "restore the app elsewhere.",
                           false, true},
};

static void
pw_put(struct edge_pw *w, const char *s)
{
	size_t n = strlen(s);

	if (n > sizeof(w->p) - w->len)
		n = sizeof(w->p) - w->len;
	memcpy(w->p + w->len, s, n);
	w->len += n;
}

static void
pw_escape(struct edge_pw *w, const char *s)
{
	char one[2] = {0, 0};

	for (; *s; s++) {
		switch (*s) {
		case '&':
			pw_put(w, "&amp;");
			break;
		case '<':
			pw_put(w, "&lt;");
			break;
		case '>':
			pw_put(w, "&gt;");
			break;
		case '"':
			pw_put(w, "&quot;");
			break;
		case '\'':
			pw_put(w, "&#39;");
			break;
		default:
			one[0] = *s;
			pw_put(w, one);
		}
	}
}

/* The console's origin for this request: scheme, console.<domain>, the
 * port the request came to (as head.c writes frame-ancestors). */
static void
console_origin(const struct edge_conn *c, char *out, size_t len)
{
	const struct edge *e = c->e;
	bool dflt = strcmp(c->port, e->tls ? ":443" : ":80") == 0;

	if (c->port[0] == '\0' || e->domain[0] == '\0')
		snprintf(out, len, "%s", e->console_origin);
	else
		snprintf(out, len, "%s://console.%s%s",
		         e->tls ? "https" : "http", e->domain,
		         dflt ? "" : c->port);
}

static void
page_body(struct edge_pw *w, const struct page_spec *s, const char *title,
          int refresh_s, const char *detail, const char *signin)
{
	char meta[80];

	pw_put(w, "<!doctype html>\n<html><head><meta charset=\"utf-8\">");
	if (refresh_s > 0) {
		snprintf(meta, sizeof(meta),
		         "<meta http-equiv=\"refresh\" content=\"%d\">",
		         refresh_s);
		pw_put(w, meta);
	}
	pw_put(w, "<title>");
	pw_escape(w, title);
	pw_put(w, "</title><style>body{font:16px/1.5 system-ui,sans-serif;"
	          "max-width:40em;margin:4em auto;padding:0 1em;color:#222}"
	          "</style></head>\n<body><h1>");
	pw_escape(w, title);
	pw_put(w, "</h1>\n<p>");
	pw_put(w, s->text);
	pw_put(w, "</p>\n");
	if (signin && *signin) {
		pw_put(w, "<p><a href=\"");
		pw_escape(w, signin);
		pw_put(w, "/\">Sign in to the console</a></p>\n");
	}
	if (s->watch && refresh_s > 0)
		pw_put(w, WATCH_SCRIPT "\n");
	if (detail && *detail) {
		pw_put(w, "<p>");
		pw_escape(w, detail);
		pw_put(w, "</p>\n");
	}
	pw_put(w, "</body></html>\n");
}

static const struct page_spec *
page_spec(const struct edge_conn *c, enum edge_page page)
{
	if (page != EDGE_PAGE_TARGET)
		return &edge_pages[page];
	if ((size_t)c->t.state >=
	    sizeof(edge_state_pages) / sizeof(edge_state_pages[0]))
		return &edge_state_pages[PREVIEW_FAILED];
	return &edge_state_pages[c->t.state];
}

static int
page_render(struct edge_conn *c, const struct page_spec *s, bool keep,
            const char *detail)
{
	struct edge_pw *w = &c->e->page;
	struct buf *o = &c->rs.out;
	char title[96], origin[320] = "";
	int retry =
	    s->retry ? (c->t.retry_after_s > 0 ? c->t.retry_after_s : 1) : 0;
	bool v10 = c->req.http_major == 1 && c->req.http_minor == 0;
	int bad = 0;

	snprintf(title, sizeof(title), s->with_port ? "%s %d" : "%s", s->title,
	         c->t.port);
	w->len = 0;
	if (s->signin)
		console_origin(c, origin, sizeof(origin));
	page_body(w, s, title, retry, detail, origin);
	bad |= buf_appendf(o,
	                   "HTTP/1.1 %d %s\r\nContent-Type: text/html; "
	                   "charset=utf-8\r\nContent-Length: %zu\r\n"
	                   "Cache-Control: no-store\r\n",
	                   s->status, s->reason, w->len);
	if (s->tag)
		bad |= buf_appendf(o, "X-Sandboxd-Preview: %s\r\n", s->tag);
	if (retry)
		bad |= buf_appendf(o, "Retry-After: %d\r\n", retry);
	if (!keep || v10)
		bad |= buf_appendf(o, "Connection: %s\r\n",
		                   keep ? "keep-alive" : "close");
	bad |= buf_append(o, "\r\n", 2);
	if (c->req.method != HTTP_HEAD)
		bad |= buf_append(o, w->p, w->len);
	return bad ? -1 : 0;
}

void
edge_page(struct edge_conn *c, enum edge_page page, const char *detail)
{
	const struct page_spec *s;
	/* After these three the stream cannot be trusted to go on. */
	bool fatal = page == EDGE_PAGE_BAD_REQUEST ||
	             page == EDGE_PAGE_TOO_LARGE ||
	             page == EDGE_PAGE_BAD_METHOD || page == EDGE_PAGE_BUSY;
	bool keep = c->req_done && !c->cl.eof && !fatal &&
	            http_should_keep_alive(&c->req);

	/* No word on why: an unknown sandbox, port or private app alike. */
	if (page == EDGE_PAGE_TARGET && c->t.state == PREVIEW_UNKNOWN)
		page = EDGE_PAGE_NO_PREVIEW;
	if (page == EDGE_PAGE_NO_PREVIEW)
		detail = NULL;
	else if (page == EDGE_PAGE_TARGET && detail == NULL)
		detail = c->t.message;
	s = page_spec(c, page);
	if (page_render(c, s, keep, detail) < 0)
		keep = false; /* cannot happen with our sizes; close cleanly */
	edge_local_finish(c, keep);
}

void
edge_local_finish(struct edge_conn *c, bool keep)
{
	c->local = true;
	c->res_started = true;
	c->res_done = true;
	c->rq.off = c->rq.parsed; /* a body we already read is dropped */
	if (keep) {
		c->phase = EDGE_EXCHANGE;
		return;
	}
	c->close_after = true;
	edge_upstream_close(c);
	if (c->req_done) {
		c->phase = EDGE_EXCHANGE; /* closes once the answer is out */
		return;
	}
	c->phase = EDGE_LINGER;
	c->since = c->e->now;
}
