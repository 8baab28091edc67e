/*
 * metrics: the daemon's counters and histograms, for GET /metrics in the
 * Prometheus text format (docs/operations.md lists them).  One table of
 * every metric, indexed by enum metric: a hot path adds with
 * metric_add() or metric_observe(), which are single relaxed atomic
 * additions (no lock, no allocation), so the edge's loop and the proxy
 * may count every request.  Safe from any thread.
 */
#ifndef LIB_METRICS_H
#define LIB_METRICS_H

#include <stdint.h>

#include "lib/buf.h"

/* Counters; a family with labels is one row per label value. */
enum metric {
	METRIC_WAKES_OK,
	METRIC_WAKES_FAILED,
	METRIC_TASKS_SUCCEEDED,
	METRIC_TASKS_FAILED,
	METRIC_TASKS_CANCELLED,
	METRIC_PROXY_REQUESTS,
	METRIC_PROXY_REFUSED,
	METRIC_PROXY_BYTES_UP,
	METRIC_PROXY_BYTES_DOWN,
	METRIC_EDGE_CONNECTIONS,
	METRIC_EDGE_REQUESTS,
	METRIC_REAPER_IDLE_STOPS,
	METRIC_REAPER_PRESSURE_STOPS,
	METRIC_COUNT,
};

/* Histograms (seconds). */
enum metric_hist {
	METRIC_WAKE_SECONDS,
	METRIC_PUBLISH_BUILD_SECONDS, /* a release's build, ready or failed */
	METRIC_HIST_COUNT,
};

#define METRIC_BUCKETS 10 /* finite upper bounds of every histogram */

void metric_add(enum metric m, uint64_t n);
static inline void
metric_inc(enum metric m)
{
	metric_add(m, 1);
}
uint64_t metric_get(enum metric m);
/* One observation of ms milliseconds. */
void metric_observe(enum metric_hist h, int64_t ms);

/*
 * Appends every counter and histogram in the text format (HELP and TYPE
 * once per family).  -1 when out would pass its cap.
 */
int metrics_write(struct buf *out);
/* A family's HELP and TYPE lines ("gauge", "counter"). */
int metrics_family(struct buf *out, const char *name, const char *type,
                   const char *help);
/* One sample: labels is "" or `state="running"` (already escaped). */
int metrics_sample(struct buf *out, const char *name, const char *labels,
                   int64_t value);
/*
 * A label value escaped as the format wants (\\, \" and \n), into out
 * (len bytes, truncated at a character boundary of the escapes).
 */
void metrics_label_escape(const char *v, char *out, size_t len);

#endif
