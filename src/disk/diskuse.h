/*
 * diskuse: each app's disk use (its sandbox's workspace), measured in
 * the background every SANDBOXD_DISK_USAGE_INTERVAL_SECONDS by its own
 * thread with the bounded walk of ws/usage.h, so no request ever waits
 * for a walk.  The API shows the last figure in the app object.
 */
#ifndef CORE_DISKUSE_H
#define CORE_DISKUSE_H

#include <stdbool.h>
#include <stdint.h>

#include "sandbox/core.h"

#define DISKUSE_SLOTS 8192 /* apps whose figure is kept */

/* The thread: a first pass soon after start, then one per interval. */
int diskuse_start(struct core *c);
void diskuse_stop(struct core *c);
/* One pass over every sandbox, on the caller's thread. */
void diskuse_pass(struct core *c);

struct diskuse {
	int64_t bytes;
	int64_t shared;      /* of bytes: links of the dependency store */
	int64_t measured_at; /* unix seconds */
	bool partial;        /* the walk hit its bound: a lower bound */
};

/* The app's last figure; false when it has none (no sandbox, not yet). */
bool diskuse_get(const char *app_id, struct diskuse *out);

#endif
