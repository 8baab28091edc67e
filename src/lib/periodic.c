/*
 * The periodic-jobs runner (periodic.h): a lane's thread sleeps until the
 * earliest due job of its lane, runs every job that is due in table
 * order, and computes each one's next time from when it was due, so a
 * slow run does not shift the schedule by its own length.
 */
#include "lib/periodic.h"

#include <string.h>
#include <time.h>

#include "lib/clock.h"

static int64_t
period_of(const struct periodic_job *j)
{
	return j->period_s ? *j->period_s : 0;
}

/* Waits until due_ms (monotonic) or a stop; false once stopping. */
static bool
wait_until(struct periodic *p, int64_t due_ms)
{
	struct timespec ts = {.tv_sec = due_ms / 1000,
	                      .tv_nsec = (due_ms % 1000) * 1000000};
	bool go;

	pthread_mutex_lock(&p->mu);
	while (!p->stopping && clock_mono_ms() < due_ms)
		if (pthread_cond_timedwait(&p->cv, &p->mu, &ts) != 0 &&
		    clock_mono_ms() >= due_ms)
			break;
	go = !p->stopping;
	pthread_mutex_unlock(&p->mu);
	return go;
}

static void *
lane_main(void *arg)
{
	struct periodic_lane *l = arg;
	struct periodic *p = l->p;
	int64_t start = clock_mono_ms(), next[PERIODIC_JOBS_MAX];
	int64_t soonest;

	for (int i = 0; i < p->njobs; i++)
		next[i] = start + p->jobs[i].first_s * 1000;
	for (;;) {
		soonest = INT64_MAX;
		for (int i = 0; i < p->njobs; i++)
			if (strcmp(p->jobs[i].lane, l->name) == 0 &&
			    next[i] < soonest)
				soonest = next[i];
		/* Nothing in this lane is ever due: wait for the stop. */
		if (!wait_until(p,
		                soonest == INT64_MAX ? INT64_MAX / 2 : soonest))
			break;
		for (int i = 0; i < p->njobs; i++) {
			const struct periodic_job *j = &p->jobs[i];
			int64_t period = period_of(j);

			if (strcmp(j->lane, l->name) != 0 ||
			    next[i] > clock_mono_ms())
				continue;
			if (period > 0)
				j->run(j->arg);
			/* A paused job looks again a second later. */
			next[i] += (period > 0 ? period : 1) * 1000;
			if (next[i] < clock_mono_ms())
				next[i] = clock_mono_ms() +
				          (period > 0 ? period : 1) * 1000;
		}
	}
	return NULL;
}

static int
lane_index(struct periodic *p, const char *name)
{
	for (int i = 0; i < p->nlanes; i++)
		if (strcmp(p->lanes[i].name, name) == 0)
			return i;
	if (p->nlanes == PERIODIC_LANES)
		return -1;
	p->lanes[p->nlanes].name = name;
	p->lanes[p->nlanes].p = p;
	return p->nlanes++;
}

int
periodic_start(struct periodic *p, const struct periodic_job *jobs, int n)
{
	pthread_condattr_t ca;

	memset(p, 0, sizeof(*p));
	p->jobs = jobs;
	p->njobs = n;
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (n > PERIODIC_JOBS_MAX)
		goto fail;
	for (int i = 0; i < n; i++)
		if (lane_index(p, jobs[i].lane) < 0)
			goto fail;
	for (int i = 0; i < p->nlanes; i++) {
		if (pthread_create(&p->lanes[i].thread, NULL, lane_main,
		                   &p->lanes[i]) != 0)
			goto fail;
		p->lanes[i].started = true;
	}
	return 0;
fail:
	periodic_stop(p);
	return -1;
}

void
periodic_stop(struct periodic *p)
{
	pthread_mutex_lock(&p->mu);
	p->stopping = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	for (int i = 0; i < p->nlanes; i++)
		if (p->lanes[i].started) {
			pthread_join(p->lanes[i].thread, NULL);
			p->lanes[i].started = false;
		}
}
