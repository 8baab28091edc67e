/*
 * Shared by the proxy's own files only: the server and the connection
 * side (proxy.c), the admission (admit.c) and the upstream transfer
 * (upstream.c), which meet in struct preq (preq.c), one per proxied
 * request.
 */
#ifndef PROXY_INTERNAL_H
#define PROXY_INTERNAL_H

#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "sandbox/core.h"
#include "lib/buf.h"
#include "lib/limits.h"
#include "proxy/meter.h"
#include "proxy/providers.h"
#include "proxy/proxy.h"
#include "spend/spend.h"

struct preq;

/*
 * What one source address (one sandbox) holds in the proxy: its open
 * connections and the request bytes buffered for it, under proxy.mu.  A
 * slot is free when both are 0.
 */
struct proxy_addr {
	in_addr_t ip;
	unsigned conns;
	size_t bytes;
};

/* A relayed connection handed to the server, until admit_on_conn takes
 * its node (relay.c). */
struct proxy_peer {
	int fd; /* 0: free */
	time_t at;
	char node[64];
};

#define PROXY_RELAY_SOCK "proxy-relay.sock" /* in <data>/run */

struct proxy {
	struct core *core;
	struct MHD_Daemon *mhd; /* NULL until bound */
	pthread_t binder;
	atomic_bool stopping; /* the binder gives up */
	pthread_mutex_t mu;   /* guards what follows */
	pthread_cond_t idle;  /* workers dropped to 0 */
	size_t workers;       /* transfers under way, each a thread */
	struct preq *live;    /* their requests (next/prev) */
	struct proxy_addr addrs[PROXY_MAX_CONNECTIONS];
	/* Aborts every transfer and refuses new ones; the type
	 * http_call.stop takes (read unlocked by the transfer). */
	atomic_bool halt;
	/* relay.c (swarm mode) */
	bool relay_wanted; /* set before the binder starts */
	bool relay_on;
	int relay_fd;
	pthread_t relay_thread;
	atomic_int relay_busy; /* connections whose line is being read */
	struct proxy_peer peers[PROXY_RELAY_PENDING]; /* under mu */
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
	struct preq *next, *prev; /* px->live, under px->mu */
	struct MHD_Connection *conn;
	enum preq_state st;
	struct buf body;
	bool too_big;     /* over PROXY_MAX_BODY_BYTES: 413 */
	bool over_budget; /* over its address's PROXY_ADDR_MAX_BODY_BYTES */
	in_addr_t ip;     /* the source address its bytes are charged to */
	char node[64];    /* the node it came from ("" this one) */
	size_t charged;   /* bytes charged there, released when r is freed */
	struct proxy_path path;
	char url[PROVIDER_PATH_MAX + 1024];
	char **hdrs; /* upstream request headers, NULL-terminated */
	size_t nhdrs;
	char sandbox[ULID_LEN + 1];
	char owner[64];          /* the sandbox's tenant: whose credential */
	char app[ULID_LEN + 1];  /* the sandbox's app: whose spend */
	char task[ULID_LEN + 1]; /* its running task ("" none) */
	bool own; /* no task runs: the app's own call (it opted in) */
	/* A model call: its answer is counted (the worker's alone). */
	bool metered;
	struct meter meter;
	struct spend_hold hold; /* its reservation (charge.c) */
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

/* preq.c */
/* A request of conn (method), one reference (the connection's); NULL
 * when out of memory. */
struct preq *preq_new(struct proxy *px, struct MHD_Connection *conn,
                      const char *method);
/* Drops one reference; the last frees r (its headers wiped) and gives
 * its bytes back to its address. */
void preq_unref(struct preq *r);

/* admit.c */
/*
 * What the request's head alone decides, before a byte of its body is
 * read (see admit.c).  MHD_YES without a response when the body may
 * come; otherwise the refusal is queued.
 */
enum MHD_Result admit_head(struct preq *r, const char *path);
/* A chunk of the body, within both caps (charged as it comes). */
void admit_body(struct preq *r, const char *data, size_t n);
/* The connection is one more than its address may have open. */
bool admit_over_cap(struct MHD_Connection *conn);
/* The server's connection notifications: counted per address. */
void admit_on_conn(void *cls, struct MHD_Connection *conn, void **sctx,
                   enum MHD_ConnectionNotificationCode code);
/* Gives r's charged body bytes back to its address. */
void proxy_addr_release(struct preq *r);
/* The connection's IPv4 source address (0 for any other). */
in_addr_t proxy_conn_ip(struct MHD_Connection *conn);
/* The node a connection was relayed from ("" this one). */
void proxy_conn_node(struct MHD_Connection *conn, char node[64]);

/* relay.c: the unix socket for relayed connections, and its stop (after
 * px->stopping is set, before the server stops). */
int proxy_relay_start(struct proxy *px, const char *data_dir);
void proxy_relay_stop(struct proxy *px);
/* The node fd was relayed from, forgotten once taken ("" none). */
void proxy_peer_take(struct proxy *px, int fd, char node[64]);

/* The 429 for an address over PROXY_ADDR_MAX_BODY_BYTES. */
extern const char admit_over_budget_msg[];
/* An error of our own, as JSON in the providers' usual shape, into out. */
void proxy_error_json(const char *type, const char *msg, struct buf *out);
/* An error of our own, now; with close the connection ends after it. */
enum MHD_Result proxy_reply_err(struct MHD_Connection *conn, unsigned status,
                                const char *type, const char *msg, bool close);
/* proxy_reply_err, the connection kept. */
enum MHD_Result proxy_reply_now(struct MHD_Connection *conn, unsigned status,
                                const char *type, const char *msg);

/* charge.c */
/*
 * A model call's body is in: refuses what cannot be metered while a
 * budget applies, asks a stream for its usage, and reserves the call's
 * estimate.  0 (r->metered), or 1 with why for a 403: the call must not
 * go.  Called on a libmicrohttpd thread.
 */
int charge_begin(struct preq *r, char *why, size_t len);
/* The transfer ended with status (0: none): the answer's count replaces
 * the reservation, or an error answer drops it.  On the worker. */
void charge_settle(struct preq *r, long status);

/* upstream.c */
/*
 * Starts r's transfer on a worker thread of its own, counted in px.
 * The connection must already be suspended (r->suspended): the worker
 * resumes it when the head is there.  When no worker can start (the
 * proxy is stopping, or no thread) r gets a 503 of our own instead and
 * the connection is resumed to send it.  Called on a libmicrohttpd
 * thread.
 */
void upstream_start(struct preq *r);
/*
 * Aborts every transfer (the ones waiting on a slow provider as well as
 * the ones waiting for a slow client), refuses new ones, and returns
 * when the last worker has finished with its request.  The server must
 * still run: each worker resumes its connection as it ends.
 */
void upstream_halt(struct proxy *px);

#endif
