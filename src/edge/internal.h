/*
 * Shared by the edge's own files only: the loop (edge.c), a connection's
 * state machine (conn.c), its sockets and buffers (io.c), heads
 * (head.c), routing (route.c), upstream connections (upstream.c), our
 * own answers (pages.c), the buffer pools (pool.c) and the counts per
 * client address (clients.c).  Everything runs on the edge's one thread;
 * nothing here is locked.
 */
#ifndef EDGE_INTERNAL_H
#define EDGE_INTERNAL_H

#include <http_parser.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "config/config.h"
#include "preview/preview.h"
#include "preview/pvauth.h"
#include "lib/buf.h"
#include "lib/limits.h"

struct site;

#define EDGE_MAX_EVENTS     256
#define EDGE_TICK_MS        250  /* how often deadlines are checked */
#define EDGE_POOL_KEEP      128  /* free buffers (and heads) kept for reuse */
#define EDGE_CLIENT_BUCKETS 1024 /* the per-address connection counts */
#define EDGE_PAGE_SIZE      4096 /* what a touched buffer byte costs */
/* A rewritten head: the original plus what we add (Host, X-Forwarded-*). */
#define EDGE_MAX_OUT_BYTES (2 * EDGE_MAX_HEADER_BYTES + 1024)

/* One socket of a connection, as epoll sees it (epoll_event.data.ptr). */
struct edge_side {
	int fd;              /* -1: none */
	bool rd, wr;         /* readiness reported and not yet used up */
	bool rdhup;          /* the peer's FIN is queued: read until 0 */
	bool eof;            /* read returned 0 */
	bool shut;           /* we sent our FIN (shutdown SHUT_WR) */
	struct edge_conn *c; /* NULL for the listener and the wake fd */
};

/*
 * Bytes read on one side, to go out on the other.  data[off, parsed) is
 * ready to be written (body or tunnel bytes), data[parsed, len) is not
 * parsed yet (the rest of a head, a pipelined request).  out holds a
 * head we wrote ourselves (or one of our pages) and goes out first.
 */
struct edge_io {
	char *data; /* EDGE_MAX_BUFFERED bytes, allocated on first read */
	size_t off, parsed, len;
	size_t touched; /* bytes of data ever written (pool.c's count) */
	struct buf out;
	size_t out_sent;
	/* A body we answer from memory the edge keeps (console.c): after
	 * out, before data; borrowed, never freed here. */
	const char *ext;
	size_t ext_len, ext_sent;
	/* ext is also at ext_off of file ext_fd (a site's memfd): sent from
	 * there with sendfile (published.c sets it for large bodies). */
	bool ext_file;
	int ext_fd;
	off_t ext_off;
};

/* A head as http_parser hands it out, copied: spans into bytes. */
struct edge_span {
	uint32_t off, len;
};

struct edge_head {
	char bytes[EDGE_MAX_HEADER_BYTES];
	size_t len;
	struct edge_span first; /* request URL or response reason */
	struct edge_span name[EDGE_MAX_HEADER_COUNT];
	struct edge_span value[EDGE_MAX_HEADER_COUNT];
	int n;
	bool in_value; /* the last callback was a value */
};

/* Connections from one client address (an IPv6 client: its /64). */
struct edge_client {
	struct edge_client *next;
	unsigned char addr[16];
	int n;       /* its connections to the edge */
	int api;     /* the API connections they hold (console.c) */
	int preauth; /* their API requests in flight without credentials */
};

/* A free list (pool.c). */
struct edge_pool {
	struct edge_free *free;
	int n;
};

enum edge_phase {
	EDGE_HEAD,     /* waiting for (the rest of) a request head */
	EDGE_CONNECT,  /* request parsed, connecting to the app */
	EDGE_EXCHANGE, /* request and response under way */
	EDGE_TUNNEL,   /* after 101: raw bytes both ways */
	EDGE_LINGER,   /* answered a bad request: drain, then close */
};

struct edge_conn {
	struct edge *e;
	struct edge_conn *prev, *next;
	struct edge_side cl, up;
	struct edge_io rq; /* client to app */
	struct edge_io rs; /* app to client */
	http_parser req, res;
	struct edge_head *head;        /* from the pool while a head is read */
	const http_parser *head_owner; /* whose head is collected; or NULL */
	size_t head_raw;               /* bytes of that head parsed so far */
	bool head_complete;            /* on_headers_complete ran */
	bool head_too_many; /* more than EDGE_MAX_HEADER_COUNT lines */
	enum edge_phase phase;
	bool req_done;    /* the request message is complete */
	bool req_body;    /* the request has a body (length or chunked) */
	bool res_started; /* a response head went to the client's buffer */
	bool res_msg;     /* the response parser finished a message */
	bool res_done;    /* the final response is complete */
	bool local;       /* we answer ourselves (pages) */
	bool close_after; /* close once the answer is out */
	bool up_reused;   /* the app connection served a request before */
	bool retried;     /* this request was sent again after a reuse race */
	bool served;      /* a request was answered: not a silent newcomer */
	bool starved;     /* a read waited for the memory budget */
	struct edge_client *client; /* its address's count; NULL: not counted */
	struct preview_target t;    /* where the upstream connection goes */
	int64_t since;              /* phase start: header, connect, linger */
	int64_t last_io;
	int64_t activity_at; /* last preview_activity for t.id */
	char ip[INET6_ADDRSTRLEN];
	bool console;      /* the request is for the console's host */
	bool published;    /* the request goes to a server release */
	struct site *site; /* a static release's answer is being sent from it */
	bool up_api;       /* the upstream connection is to the API (counted) */
	bool preauth;      /* an API request without credentials (counted) */
	int64_t head_at;   /* the first byte of the request's head */
	char port[8];      /* ":port" of the request's Host, or "" */
	/* private.c: what the gate last learnt of a sandbox's app */
	struct pvauth_view view;
	char view_sb[ULID_LEN + 1];
	uint64_t view_gen;
	bool view_found;
	/* the preview cookie this connection last proved, under view_gen */
	char ck[PVAUTH_COOKIE_MAX];
	size_t ck_len;
	int64_t ck_exp;
	uint64_t ck_gen;
};

struct edge_console {
	bool loaded;
	char why[160];               /* why not: for the page */
	struct site *site;           /* the files, in memory (src/site) */
	struct sockaddr_storage api; /* the API listener */
	socklen_t api_len;
};

struct edge_pw {
	char p[3072];
	size_t len;
};

struct edge {
	struct core *core;
	int lfd, efd, wfd; /* listener, epoll, eventfd that stops the loop */
	struct edge_side lside, wside;
	pthread_t thread;
	bool stop;
	bool accept_retry; /* accept failed (EMFILE...): try again each tick */
	int64_t accept_warned, shed_warned;
	struct edge_conn *conns;
	int nconns;
	int64_t now; /* monotonic ms, read once per wakeup */
	int64_t next_tick;
	struct epoll_event events[EDGE_MAX_EVENTS];
	int nev, cur; /* the batch being handled, for edge_forget */
	http_parser_settings req_settings, res_settings;
	struct edge_pw page; /* pages.c builds one page at a time here */
	struct edge_pool bufs, heads;
	size_t mem; /* bytes of buffers and heads held (pool.c) */
	struct edge_client *clients[EDGE_CLIENT_BUCKETS];
	int api_conns; /* connections to the API held (console.c) */
	/* From the configuration, so heads need no core (unit tests). */
	bool tls;                 /* PREVIEW_TLS: X-Forwarded-Proto https */
	bool tls_proxy_exempt;    /* loopback peers are the TLS proxy */
	char console_origin[300]; /* frame-ancestors of every preview */
	char domain[256];         /* PREVIEW_DOMAIN */
	struct edge_console console;
};

/* clients.c */
/*
 * The key a client is counted under: IPv4 (also v4-mapped) as
 * ::ffff:a.b.c.d, IPv6 by its /64.  False for loopback when the TLS
 * proxy is exempt.
 */
bool edge_client_key(const struct edge *e, const struct sockaddr_storage *peer,
                     unsigned char key[16]);
/* The count of key's connections, made if new; NULL: out of memory. */
struct edge_client *edge_client_get(struct edge *e,
                                    const unsigned char key[16]);
void edge_client_put(struct edge *e, struct edge_client *cl);

/* io.c */
int edge_watch(struct edge *e, struct edge_side *s);
void edge_forget(struct edge *e, struct edge_side *s);
void edge_upstream_close(struct edge_conn *c);
void edge_io_release(struct edge_conn *c, struct edge_io *io);
/* An empty buffer goes back to the pool between requests. */
void edge_io_idle(struct edge_conn *c, struct edge_io *io);
/* Reads what fits into io, at most limit bytes held: 1 read or EOF,
 * 0 nothing, -1 error. */
int edge_read(struct edge_conn *c, struct edge_side *s, struct edge_io *io,
              size_t limit);
/* Writes io->out, then io->ext, then data[off, parsed): 1 wrote,
 * 0 nothing, -1 error. */
int edge_write(struct edge_conn *c, struct edge_side *s, struct edge_io *io);
/* Everything io holds to write went out. */
bool edge_io_flushed(const struct edge_io *io);
/* Bytes wait in io for a side that takes none now: read no more. */
bool edge_io_blocked(const struct edge_io *io, const struct edge_side *to);

/* conn.c */
struct edge_conn *edge_conn_new(struct edge *e, int fd,
                                const struct sockaddr_storage *peer);
void edge_conn_close(struct edge_conn *c);
void edge_conn_run(struct edge_conn *c);
void edge_conn_tick(struct edge_conn *c);

/* head.c */
void edge_head_settings(http_parser_settings *req, http_parser_settings *res);
/* The next head to collect is owner's (NULL: nobody's). */
void edge_head_begin(struct edge_conn *c, const http_parser *owner);
void edge_head_release(struct edge_conn *c);
/*
 * The request's framing is unambiguous: 0, or -1 with why (a 400).
 * Header names with white space, Transfer-Encoding other than exactly
 * chunked, Transfer-Encoding with Content-Length, differing
 * Content-Lengths.
 */
int edge_head_check(const struct edge_conn *c, const char **why);
/* Value of the only header called name; 0 absent, 1 found, -1 repeated. */
int edge_head_find(const struct edge_head *h, const char *name, const char **v,
                   size_t *vlen);
int edge_head_request(struct edge_conn *c, const char *host, size_t hostlen);
/* The security headers of every answer on the console's host. */
void edge_console_headers(const struct edge_conn *c, struct buf *o);
int edge_head_response(struct edge_conn *c);

/* host.c: true for a preview host of domain (id canonical, port 1-65535). */
bool edge_host_parse(const char *domain, const char *host, size_t len,
                     char id[ULID_LEN + 1], int *port);

/* console.c: the console's host (console.<domain>). */
#define EDGE_CONSOLE_MAX_FILES 2048        /* files loaded from the dir */
#define EDGE_CONSOLE_MAX_BYTES (64u << 20) /* their bytes together */
/* Loads dir into memory and resolves the API's address (at start). */
int edge_console_load(struct edge *e, const char *dir,
                      const struct config *cfg);
void edge_console_free(struct edge *e);
/* The request is for the console's host: answers it or forwards it. */
void edge_console_route(struct edge_conn *c, const char *host, size_t hostlen);
/* The file for a request path (no query), SPA fallback included. */
const struct site_file *edge_console_find(const struct edge_console *k,
                                          const char *path, size_t len);

/* private.c: private previews.  0: the request goes on; -1: answered
 * (the unknown-host page, or the code exchange on /__sandboxd/auth). */
int edge_private_gate(struct edge_conn *c, const char *id);
/* The path (and query) of a request target, also of an absolute-form
 * one ("http://host/path?q"). */
void edge_target_path(const char **url, size_t *n);
/* A query parameter of a request target, raw; false when absent. */
bool edge_query_param(const char *url, size_t n, const char *name,
                      const char **v, size_t *vlen);
/* next=, percent-decoded, when it is a path on this host; else "/". */
void edge_next_path(const char *v, size_t n, char out[PVAUTH_PATH_MAX + 1]);

/* private.c: the gate of a published app (t->private_gate: gated). */
int edge_private_gate_app(struct edge_conn *c, const char *app_id, bool gated);

/* published.c: a Host neither the console's nor a preview's. */
struct publish_target;
void edge_published_route(struct edge_conn *c, const char *host,
                          size_t hostlen);
/* Answers t (its site reference is taken over). */
void edge_published_serve(struct edge_conn *c, struct publish_target *t,
                          const char *host, size_t hostlen);
/* Drops the site an answer was sent from (the exchange ended). */
void edge_published_release(struct edge_conn *c);
/* Whether an If-None-Match value names etag. */
bool edge_etag_match(const char *v, size_t n, const char *etag);

/* route.c: the request head is parsed: answer it or send it on. */
void edge_route(struct edge_conn *c);

/* upstream.c */
void edge_upstream_connect(struct edge_conn *c, const struct sockaddr *sa,
                           socklen_t len);
void edge_upstream_open(struct edge_conn *c, const char *id, int port);
/* Remembers the ":port" of the request's Host in c->port. */
void edge_host_port(struct edge_conn *c, const char *host, size_t len);
int edge_upstream_connected(struct edge_conn *c);
void edge_upstream_failed(struct edge_conn *c);
void edge_upstream_lost(struct edge_conn *c);
void edge_touch(struct edge_conn *c);

/* pool.c */
char *edge_buf_get(struct edge *e, size_t *touched);
/* Bytes up to len of a buffer were written: counts new pages in e->mem. */
void edge_buf_touched(struct edge *e, size_t *touched, size_t len);
void edge_buf_put(struct edge *e, char *b, size_t touched);
/* Bytes that may still be touched under EDGE_MEMORY_BUDGET_BYTES. */
size_t edge_buf_budget(const struct edge *e);
struct edge_head *edge_head_get(struct edge *e);
void edge_head_put(struct edge *e, struct edge_head *h);
void edge_pool_release(struct edge *e, struct edge_pool *p, size_t size);

/* pages.c */
enum edge_page {
	EDGE_PAGE_NO_PREVIEW,  /* not a preview host */
	EDGE_PAGE_BAD_REQUEST, /* 400 */
	EDGE_PAGE_TOO_LARGE,   /* 431 */
	EDGE_PAGE_BAD_METHOD,  /* 405: CONNECT */
	EDGE_PAGE_BAD_GATEWAY, /* 502: the app broke the exchange */
	EDGE_PAGE_BUSY,        /* 503: the edge's memory budget is spent */
	EDGE_PAGE_DOWN,        /* 503: a published app cannot answer now */
	EDGE_PAGE_TARGET,      /* from t->state */
};
/*
 * Answers the current request ourselves.  The connection stays open when
 * the request allows it and was read to its end; otherwise the answer
 * says "close" and the connection lingers, then closes.
 */
void edge_page(struct edge_conn *c, enum edge_page page, const char *detail);
/* An answer we wrote to c->rs (out, ext) is complete: send and settle,
 * as edge_page does. */
void edge_local_finish(struct edge_conn *c, bool keep);

#endif
