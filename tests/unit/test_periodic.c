/*
 * Unit tests of lib/periodic: jobs run at their first time and period,
 * a lane's jobs share one thread, a paused job does not run, and a stop
 * returns at once rather than after the next due time.
 */
#include <stdatomic.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/periodic.h"
#include "unit.h"

struct counter {
	atomic_int n;
	pthread_t last;
};

static void
count(void *arg)
{
	struct counter *c = arg;

	atomic_fetch_add(&c->n, 1);
	c->last = pthread_self();
}

static void
jobs_run_on_time_and_stop_at_once(void)
{
	struct counter now = {0}, later = {0}, paused = {0}, same = {0};
	int64_t one = 1, hour = 3600, none = 0, t0;
	const struct periodic_job jobs[] = {
	    {"now", "a", 0, &one, count, &now},
	    {"later", "a", 3600, &hour, count, &later},
	    {"paused", "b", 0, &none, count, &paused},
	    {"same lane", "a", 0, &hour, count, &same},
	};
	struct periodic p;

	CHECK(periodic_start(&p, jobs, 4) == 0);
	CHECK(p.nlanes == 2);
	t0 = clock_mono_ms();
	while (atomic_load(&now.n) < 3 && clock_mono_ms() - t0 < 10000)
		usleep(20000);
	CHECK(atomic_load(&now.n) >= 3);
	CHECK(atomic_load(&same.n) == 1); /* at 0, then an hour later */
	CHECK(pthread_equal(now.last, same.last));
	t0 = clock_mono_ms();
	periodic_stop(&p);
	CHECK(clock_mono_ms() - t0 < 1000);
	CHECK(atomic_load(&later.n) == 0);
	CHECK(atomic_load(&paused.n) == 0);
}

static void
too_many_lanes_fail_cleanly(void)
{
	int64_t one = 1;
	struct counter c = {0};
	const struct periodic_job jobs[] = {
	    {"1", "a", 0, &one, count, &c}, {"2", "b", 0, &one, count, &c},
	    {"3", "c", 0, &one, count, &c}, {"4", "d", 0, &one, count, &c},
	    {"5", "e", 0, &one, count, &c}, {"6", "f", 0, &one, count, &c},
	    {"7", "g", 0, &one, count, &c},
	};
	struct periodic p;

	CHECK(periodic_start(&p, jobs, 7) < 0);
}

int
main(void)
{
	static const struct unit_test tests[] = {
	    {"jobs run on time and stop at once",
	     jobs_run_on_time_and_stop_at_once},
	    {"too many lanes fail cleanly", too_many_lanes_fail_cleanly},
	};

	return unit_main("periodic", tests, sizeof(tests) / sizeof(tests[0]));
}
