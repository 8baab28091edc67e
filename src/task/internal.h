/* Shared by task.c (following tasks) and taskev.c (their event logs). */
#ifndef TASK_INTERNAL_H
#define TASK_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/jv.h"
#include "lib/ulid.h"

struct task_sub;

/* A task's event log: <data>/tasks/<id>.events, appended by one thread. */
struct evlog {
	int fd;
	off_t committed; /* end of the last whole event */
	int64_t n;       /* events so far, counting those replayed */
	int64_t have;    /* events the file held when it was opened */
	bool done;       /* the done event is in the file */
	bool failed;     /* a write failed: events must be derived again */
};

struct live;

struct tasks {
	pthread_mutex_t mu; /* the lists below and every sub's listing */
	struct live *lives;
	struct task_sub *subs;
	int wake_fd;    /* eventfd: wakes the follower */
	int inotify_fd; /* task directories being followed */
	pthread_t thread;
	bool started;
	int starters; /* threads still handing a task to a supervisor */
	pthread_cond_t starters_cv;
};

void task_events_path(const char *data_dir, const char *id, char *out,
                      size_t len);
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
/* Tells subscribers of a finished task, or one going away, to end. */
void subs_finish(struct tasks *ts, const char *id);
/* Sends heartbeats to subscribers that have been quiet long enough. */
void subs_heartbeat(struct tasks *ts);
/* A live task's committed log end (ts->mu held); -1 when not live. */
int task_live_committed(struct tasks *ts, const char *id, off_t *out);
/* Ends every subscription (shutdown). */
void subs_end_all(struct tasks *ts);

#endif
