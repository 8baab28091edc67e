/*
 * preview: what the edge needs from the control plane, without blocking.
 * The edge's event loop calls these for every request; they read the
 * store (microseconds), never call Docker, and start wakes on the wake
 * thread.  Activity is kept in memory and written to the store by the
 * idle reaper, so proxied traffic costs no database write per request.
 */
#ifndef CORE_PREVIEW_H
#define CORE_PREVIEW_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>

#include "core/core.h"

#define PREVIEW_SLOTS 2048

struct pv_entry {
	char id[ULID_LEN + 1]; /* "" when free */
	bool waking;
	bool wake_failed;
	int64_t active_ms;  /* wall clock of the last traffic */
	int64_t flushed_ms; /* active_ms last written to the store */
	int64_t started_ms; /* monotonic time of the last start */
	char wake_error[160];
};

struct preview {
	pthread_mutex_t mu;
	struct pv_entry e[PREVIEW_SLOTS];
};

int preview_init(struct core *c);
void preview_release(struct core *c);
/* Records that the sandbox's container just started. */
void preview_started(struct core *c, const char *id);
/* Unix seconds of the last traffic seen in memory, 0 if none. */
int64_t preview_last_active(struct core *c, const char *id);
/* Writes the activity seen since the last flush into the store. */
void preview_flush(struct core *c);

enum preview_state {
	PREVIEW_UP,            /* proxy to addr */
	PREVIEW_WAKING,        /* a wake is under way (or was just started) */
	PREVIEW_STARTING,      /* running, but the port does not answer yet */
	PREVIEW_NOT_LISTENING, /* running for a while, nothing on the port */
	PREVIEW_NO_HEADROOM,   /* wake refused: host memory is short */
	PREVIEW_FAILED,        /* the sandbox is in error, or the wake failed */
	PREVIEW_UNKNOWN, /* no such sandbox, or the port is not declared */
};

struct preview_target {
	enum preview_state state;
	char id[ULID_LEN + 1];
	int port;
	struct sockaddr_in addr; /* PREVIEW_UP: container address and port */
	int retry_after_s;       /* for the 503 answers */
	char message[256];       /* for the pages: what is wrong */
};

/*
 * Parses a Host header ("s-<id>-<port>.preview.<domain>[:port]", any
 * case).  Returns false when it is not a preview host of this domain.
 */
bool preview_parse_host(const struct core *c, const char *host, size_t len,
                        char id[ULID_LEN + 1], int *port);
/*
 * Resolves a preview request: the target when the app can be reached,
 * else why not.  A stopped sandbox gets a wake started (one per sandbox,
 * however many requests ask).  Counts as activity.  Thread-safe.
 */
void preview_resolve(struct core *c, const char *id, int port,
                     struct preview_target *t);
/*
 * The edge could not connect to t->addr: decides between "starting"
 * (recently started, keep warming) and "not listening".
 */
void preview_connect_failed(struct core *c, struct preview_target *t);
/* Marks proxied traffic on a sandbox (cheap; any thread). */
void preview_activity(struct core *c, const char *id);

#endif
