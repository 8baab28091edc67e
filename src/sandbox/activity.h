/*
 * activity: when each sandbox was last used and last started, kept in
 * memory.  Proxied traffic and changes through the API touch it (cheap,
 * any thread, never blocks on anything but its own mutex); the idle
 * reaper flushes it into the store's last_active_at before it decides,
 * so deadlines survive a restart without a database write per request.
 * A leaf: it knows the store and nothing else of the daemon.
 */
#ifndef SANDBOX_ACTIVITY_H
#define SANDBOX_ACTIVITY_H

#include <stdint.h>

#include "store/store.h"

#define ACTIVITY_SLOTS 2048

struct activity;

struct activity *activity_new(void);
void activity_free(struct activity *a);
/* Marks use of a sandbox now (proxied traffic, an API change, a task). */
void activity_touch(struct activity *a, const char *id);
/* Records that the sandbox's container (or its web process) just started. */
void activity_started(struct activity *a, const char *id);
/* Unix seconds of the last use seen in memory, 0 if none. */
int64_t activity_last_active(struct activity *a, const char *id);
/* Milliseconds since the last start seen by this daemon, -1 if none. */
int64_t activity_since_start_ms(struct activity *a, const char *id);
/* Writes the use seen since the last flush into the store. */
void activity_flush(struct activity *a, struct store *s);

#endif
