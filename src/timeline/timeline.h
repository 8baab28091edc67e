/*
 * timeline: an app's activity timeline (docs/api.md, "Activity
 * timeline").  timeline_record() writes one event to the store and wakes
 * the app's followers; the followers (the SSE stream) read the events
 * from the store after the last one they sent, so a replay after
 * Last-Event-ID and a live follow are one path and a slow follower holds
 * no copy of anything.
 *
 * Every function may be called from any thread.  Recording never fails
 * the operation it records: a store error is logged and the event
 * dropped.  A NULL timeline is a no-op everywhere.
 */
#ifndef TIMELINE_TIMELINE_H
#define TIMELINE_TIMELINE_H

#include <stdint.h>
#include <sys/types.h>

#include "lib/jv.h"
#include "store/store.h"

#define TL_SUB_BATCH    16  /* events a follower reads from the store at once */
#define TL_SUBS_MAX     256 /* followers at once, all apps */
#define TL_PAGE_MAX     200 /* events in one page of the list */
#define TL_PAGE_DEFAULT 50

struct timeline;

/* An event to record.  The strings may be NULL (none); severity NULL is
 * "info"; payload_json, when not NULL, must be a JSON object of at most
 * STORE_EVENT_PAYLOAD_MAX bytes (else it is dropped, the event kept). */
struct tl_event {
	const char *app_id, *type, *severity, *sandbox_id, *task_id,
	    *snapshot_id, *payload_json;
	char message[256];
};

struct timeline *timeline_new(struct store *store);
void timeline_free(struct timeline *tl);

void timeline_record(struct timeline *tl, const struct tl_event *ev);
/*
 * timeline_record() of ev with its message made by fmt, and when
 * ev->severity is NULL the type's own ("error" for an OOM kill, a
 * failed task or a failed publish, "warning" for a budget reached, else
 * "info").
 */
void timeline_note(struct timeline *tl, const struct tl_event *ev,
                   const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/*
 * Who acts on this thread: the API sets it per request (the token's
 * name, "console" for a console session); NULL or "" is "system", what
 * every thread starts as.  Thread-local, copied (truncated to
 * STORE_EVENT_ACTOR_MAX bytes).
 */
void tl_set_actor(const char *actor);
/*
 * A payload from v (freed): its JSON text in out (at least
 * STORE_EVENT_PAYLOAD_MAX + 1 bytes), or NULL when v is NULL or its
 * text does not fit.
 */
const char *tl_payload(struct jv *v, char *out, size_t len);
const char *tl_actor(void);

/* The event as the API shows it (docs/api.md); NULL when out of memory. */
struct jv *timeline_event_json(const struct app_event *ev);

/*
 * Deletes events older than days (0: none by age) and all but each
 * app's newest max_per_app (0: no cap).  The number deleted, or -1.
 */
int64_t timeline_prune(struct timeline *tl, int64_t days, int64_t max_per_app);

/*
 * A follower of one app's events (text/event-stream).  after: the id of
 * the last event the client has (Last-Event-ID), NULL for only the new
 * ones.  timeline_sub_read() gives whole events (`event: app_event`,
 * `id:`, `data:`) and heartbeat comments, or 0 after calling
 * suspend(arg) under the follower's lock: resume(arg) is called, under
 * the same lock, when there is more.  -1 once the timeline is stopping.
 * -1 from open when TL_SUBS_MAX followers exist.
 */
struct tl_sub;
int timeline_sub_open(struct timeline *tl, const char *app_id,
                      const char *after, const char *type_prefix,
                      void (*suspend)(void *), void (*resume)(void *),
                      void *arg, struct tl_sub **out);
ssize_t timeline_sub_read(struct tl_sub *s, char *buf, size_t max);
void timeline_sub_close(struct tl_sub *s);
/* Makes followers quiet for quiet_ms or more send a heartbeat. */
void timeline_subs_heartbeat(struct timeline *tl, int64_t quiet_ms);
/* Ends every follower (shutdown): their next read returns -1. */
void timeline_subs_end_all(struct timeline *tl);

#endif
