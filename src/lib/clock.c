/* Wall-clock helpers.  Kept apart so tests and reapers share one notion of now.
 */
#include "lib/clock.h"

#include <time.h>

int64_t
clock_now(void)
{
	return (int64_t)time(NULL);
}

int64_t
clock_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
clock_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
clock_rfc3339(int64_t unix_s, char out[CLOCK_RFC3339_LEN])
{
	time_t t = (time_t)unix_s;
	struct tm tm;

	/* A year gmtime cannot hold, or of more than four digits, leaves
	 * strftime's output undefined: say nothing instead. */
	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(out, CLOCK_RFC3339_LEN, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		out[0] = '\0';
}
