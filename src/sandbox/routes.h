/*
 * routes: the edge's view of every sandbox (address, state, ports, when
 * it started), kept in memory so a preview request never waits on the
 * store's mutex nor on a sandbox's lock.  Filled from the store when the
 * daemon starts (routes_load); lifecycle and the Docker watcher put a
 * sandbox's row after each write of it (on their own threads) and drop
 * it when the row is deleted.  A leaf: it knows the store's struct
 * sandbox and nothing else of the daemon.
 *
 * Every function may be called from any thread.  Readers (the edge's
 * loop, through preview/preview.c) take the table's read lock for a hash
 * lookup and a copy; writers take its write lock for a copy into the
 * entry.  Nothing is called with the lock held.
 */
#ifndef SANDBOX_ROUTES_H
#define SANDBOX_ROUTES_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/limits.h"
#include "lib/ulid.h"
#include "store/store.h"

#define ROUTES_BUCKETS     1024
#define ROUTES_WORKERS_MAX 160

struct route {
	char id[ULID_LEN + 1];
	char app_id[ULID_LEN + 1]; /* whose preview it is (private previews) */
	enum sandbox_state state;
	bool has_addr;       /* the row had a container address */
	bool frozen;         /* running, its container paused */
	struct in_addr addr; /* its bridge address, while running */
	int ports[API_MAX_PORTS];
	int nports;
	int64_t started_at; /* Unix seconds: the row's update that made it
	                     * running (or the row's last update, at load) */
	char error[256];    /* an error sandbox's message */
	char node[64];      /* the node that runs it; "" this host */
	bool node_down;     /* its node does not answer (status_reason) */
	/* What its manifest runs, as the last configure read it (not from
	 * the row, so a routes_put keeps it): workers only, and their
	 * names ("worker, mailer"), for the preview's page. */
	bool no_web;
	char workers[ROUTES_WORKERS_MAX];
};

struct routes;

struct routes *routes_new(void);
void routes_free(struct routes *r);
/* Puts every row of the store (at start, before any thread runs). */
int routes_load(struct routes *r, struct store *s);
/* Sets (or adds) the sandbox's route from its row; -1 out of memory. */
int routes_put(struct routes *r, const struct sandbox *sb);
/*
 * Notes what the sandbox's valid manifest runs: no web process, only the
 * workers named in workers (cut to fit), or a web process.  Nothing when
 * the sandbox has no route.
 */
void routes_set_procs(struct routes *r, const char *id, bool has_web,
                      const char *workers);
/* Forgets a sandbox whose row is gone. */
void routes_drop(struct routes *r, const char *id);
/* Copies the route of id into out: false when there is no such sandbox. */
bool routes_get(struct routes *r, const char *id, struct route *out);
/* How many sandboxes the table holds. */
size_t routes_count(struct routes *r);

#endif
