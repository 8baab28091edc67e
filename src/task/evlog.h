/*
 * evlog: a task's event log, <data>/tasks/<id>.events, and its
 * subscribers.
 *
 * The log holds events already in text/event-stream form; one thread
 * (the follower) appends to a task's log, and any number of subscribers
 * (the SSE endpoint) read it from their own offsets up to the last whole
 * event.  No per-subscriber buffer exists, so a slow reader costs
 * nothing but its connection.
 *
 * Thread-safety: evlog_open/append/close belong to the thread that owns
 * the struct evlog; the subscription functions may be called from any
 * thread.  The list of subscribers is kept under ts->mu.
 */
#ifndef TASK_EVLOG_H
#define TASK_EVLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "lib/jv.h"

#define EVLOG_SCAN_CHUNK (64u << 10) /* bytes read at a time on open */
/* Events of the control plane's own (not derived from the task's
 * files) per log; more are dropped. */
#define EVLOG_OUTSIDE_MAX 32
/* The one such type: the credential proxy's upstream failures. */
#define EVLOG_OUTSIDE_TYPE "provider_error"

struct core;
struct tasks;

/* A task's event log, appended by one thread. */
struct evlog {
	int fd;
	off_t committed; /* end of the last whole event */
	int64_t n;       /* events so far, counting those replayed */
	int64_t have;    /* events the file held when it was opened */
	bool done;       /* the done event is in the file */
	bool failed;     /* a write failed: events must be derived again */
	/* The ids of the outside events (EVLOG_OUTSIDE_TYPE) in the log:
	 * replaying skips them, so derived events keep their ids. */
	int64_t outside[EVLOG_OUTSIDE_MAX];
	unsigned nout;
};

/* <data_dir>/tasks/<id>.events */
void evlog_path(const char *data_dir, const char *id, char *out, size_t len);
/*
 * Opens (creating) a log; a torn last event is cut off.  have/n count
 * the events present, done tells whether the last one is `done`, and
 * *last (when not NULL) gets that event's data.
 */
int evlog_open(const char *data_dir, const char *id, struct evlog *l,
               struct jv **last);
void evlog_close(struct evlog *l);
/*
 * Appends event n (the next id).  While replaying (n < have) it only
 * counts.  Steals data.  -1 when the write failed (nothing is left
 * half-written).  Subscribers of id are told.
 */
int evlog_append(struct tasks *ts, const char *id, struct evlog *l,
                 const char *type, struct jv *data);

/*
 * Appends an outside event (EVLOG_OUTSIDE_TYPE): one the follower gets
 * from elsewhere, not from the task's files.  1 while the log is being
 * replayed (try again once the derived events caught up), 0 when
 * written or dropped (EVLOG_OUTSIDE_MAX reached), -1 when the write
 * failed.  Steals data (unless it returns 1).
 */
int evlog_append_outside(struct tasks *ts, const char *id, struct evlog *l,
                         struct jv *data);

/* Tells subscribers of a finished task, or one going away, to end. */
void evlog_subs_finish(struct tasks *ts, const char *id);
/* Sends heartbeats to subscribers quiet for quiet_ms or more. */
void evlog_subs_heartbeat(struct tasks *ts, int64_t quiet_ms);
/* Ends every subscription (shutdown). */
void evlog_subs_end_all(struct tasks *ts);

/*
 * Subscriptions.  evlog_sub_read() fills buf with whole or partial
 * events after `since` (-1: from the first).  It returns the number of
 * bytes, -1 once the task's last event was sent (or on error), or 0
 * after calling suspend(arg) under the subscription's lock: resume(arg)
 * is called, under the same lock, when there is more to read.
 */
struct evlog_sub;
int evlog_sub_open(struct core *c, const char *id, int64_t since,
                   void (*suspend)(void *), void (*resume)(void *), void *arg,
                   struct evlog_sub **out, struct err *e);
ssize_t evlog_sub_read(struct evlog_sub *s, char *buf, size_t max);
void evlog_sub_close(struct evlog_sub *s);

#endif
