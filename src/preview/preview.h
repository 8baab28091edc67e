/*
 * preview: what the edge needs from the control plane, without blocking.
 * The edge's event loop calls these for every request; they read the
 * routing table (sandbox/routes.h, its own short lock), never the store or
 * Docker, and start wakes on a wake thread.  Every request counts as activity
 * (sandbox/activity.h).
 */
#ifndef PREVIEW_PREVIEW_H
#define PREVIEW_PREVIEW_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>

#include "sandbox/activity.h"
#include "sandbox/core.h"
#include "lib/meminfo.h"

#define PREVIEW_SLOTS 2048

/* The wake table (c->pv); serve() makes it before the edge starts. */
int preview_init(struct core *c);
void preview_release(struct core *c);

enum preview_state {
	PREVIEW_UP,            /* proxy to addr */
	PREVIEW_WAKING,        /* a wake is under way (or was just started) */
	PREVIEW_STARTING,      /* running, but the port does not answer yet */
	PREVIEW_NOT_LISTENING, /* running for a while, nothing on the port */
	PREVIEW_NO_HEADROOM,   /* wake refused: host memory is short */
	PREVIEW_FAILED,        /* the sandbox is in error, or the wake failed */
	PREVIEW_NO_WEB,        /* nothing on the port: it runs workers only */
	PREVIEW_UNKNOWN,   /* no such sandbox, or the port is not declared */
	PREVIEW_NODE_DOWN, /* its node (swarm) does not answer */
};

struct preview_target {
	enum preview_state state;
	char id[ULID_LEN + 1];
	int port;
	struct sockaddr_in addr; /* PREVIEW_UP: container address and port,
	                          * or the node tunnel's (orch_target) */
	char preamble[96];       /* written first on the connection ("" none) */
	size_t preamble_len;
	int retry_after_s; /* for the 503 answers */
	char message[256]; /* for the pages: what is wrong */
};

/*
 * Resolves a preview request: the target when the app can be reached,
 * else why not.  A stopped sandbox gets a wake started (one per sandbox,
 * however many requests ask).  Counts as activity.  Thread-safe.
 */
void preview_resolve(struct core *c, const char *id, int port,
                     struct preview_target *t);
/*
 * The edge could not connect to t->addr: decides between "no web" (its
 * manifest declares workers only), "starting" (recently started, keep
 * warming) and "not listening".
 */
void preview_connect_failed(struct core *c, struct preview_target *t);

#endif
