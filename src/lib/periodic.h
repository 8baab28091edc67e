/*
 * periodic: the daemon's periodic jobs as one table (name, thread, first
 * run, period, function), run by as many threads as the table names
 * lanes.  Redis's serverCron with run_with_period is the model: the
 * table is data that serve() owns, and the work of a job is a plain
 * function that knows nothing of timers.
 *
 * A job runs at first_s, then every *period_s seconds after its previous
 * run was due (read at each run, so a period that changes applies from
 * the next run on; 0 or less pauses the job).  Jobs of one lane run in
 * the order of the table on that lane's thread, one at a time: a slow
 * job (a trash purge, a disk-usage walk) gets a lane of its own so it
 * never delays another lane's (the pressure reaper).  Each thread waits
 * on a condition variable with a monotonic deadline, so
 * periodic_stop() wakes it at once instead of after a tick.
 *
 * Rejected: one thread for every job (a thread per timer is what the
 * table replaces), and one thread for all (a long trash purge would hold
 * back the pressure reaper).
 */
#ifndef LIB_PERIODIC_H
#define LIB_PERIODIC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define PERIODIC_LANES    6  /* threads one table may name */
#define PERIODIC_JOBS_MAX 16 /* jobs in one table */

struct periodic_job {
	const char *name;
	const char *lane;        /* jobs with the same lane share a thread */
	int64_t first_s;         /* seconds after the start of its first run */
	const int64_t *period_s; /* read at each run; <= 0 pauses it */
	void (*run)(void *arg);
	void *arg;
};

struct periodic_lane {
	struct periodic *p;
	const char *name;
	pthread_t thread;
	bool started;
};

struct periodic {
	const struct periodic_job *jobs;
	int njobs;
	struct periodic_lane lanes[PERIODIC_LANES];
	int nlanes;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* CLOCK_MONOTONIC */
	bool stopping;     /* under mu */
};

/*
 * Starts one thread per lane of jobs[0..n).  The table and what its jobs
 * point to must outlive periodic_stop().  -1 (nothing left running) when
 * the table names more than PERIODIC_LANES lanes or a thread cannot
 * start, or it has more than PERIODIC_JOBS_MAX jobs.
 */
int periodic_start(struct periodic *p, const struct periodic_job *jobs, int n);
/* Wakes every lane, waits for the job each is running, joins them. */
void periodic_stop(struct periodic *p);

#endif
