/*
 * The counters behind GET /metrics (see metrics.h).  Every metric is a
 * row of one const table, defs[], in enum order: its family name, its
 * labels and its help.  Rows of one family are adjacent, so the writer
 * prints HELP and TYPE when the family changes.  Values are
 * _Atomic uint64_t added with memory_order_relaxed: a scrape may see
 * one counter a moment ahead of another, which Prometheus tolerates,
 * and no hot path ever waits for a scrape.  A histogram keeps a count
 * per bucket (not cumulative, so an observation is one addition) and
 * the writer adds them up.
 * Rejected: a registry that modules fill at start-up (a lock and an
 * allocation per name, and names scattered over the tree); the one
 * table is also the list docs/operations.md keeps.
 */
#include "lib/metrics.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

struct metric_def {
	const char *family;
	const char *labels;
	const char *help;
};

static const struct metric_def defs[METRIC_COUNT] = {
    [METRIC_WAKES_OK] = {"sandboxd_wakes_total", "outcome=\"ok\"",
                         "Wakes of stopped sandboxes by a preview request."},
    [METRIC_WAKES_FAILED] = {"sandboxd_wakes_total", "outcome=\"failed\"",
                             NULL},
    [METRIC_TASKS_SUCCEEDED] = {"sandboxd_tasks_total", "outcome=\"succeeded\"",
                                "Tasks that ended, by outcome."},
    [METRIC_TASKS_FAILED] = {"sandboxd_tasks_total", "outcome=\"failed\"",
                             NULL},
    [METRIC_TASKS_CANCELLED] = {"sandboxd_tasks_total", "outcome=\"cancelled\"",
                                NULL},
    [METRIC_PROXY_REQUESTS] = {"sandboxd_proxy_requests_total",
                               "result=\"forwarded\"",
                               "Credential proxy requests from sandboxes."},
    [METRIC_PROXY_REFUSED] = {"sandboxd_proxy_requests_total",
                              "result=\"refused\"", NULL},
    [METRIC_PROXY_BYTES_UP] = {"sandboxd_proxy_bytes_total",
                               "direction=\"upstream\"",
                               "Body bytes the credential proxy relayed."},
    [METRIC_PROXY_BYTES_DOWN] = {"sandboxd_proxy_bytes_total",
                                 "direction=\"downstream\"", NULL},
    [METRIC_EDGE_CONNECTIONS] = {"sandboxd_edge_connections_total", "",
                                 "Client connections the edge accepted."},
    [METRIC_EDGE_REQUESTS] = {"sandboxd_edge_requests_total", "",
                              "Requests the edge routed to a preview."},
    [METRIC_REAPER_IDLE_STOPS] = {"sandboxd_reaper_stops_total",
                                  "reason=\"idle\"",
                                  "Sandboxes the reapers stopped."},
    [METRIC_REAPER_PRESSURE_STOPS] = {"sandboxd_reaper_stops_total",
                                      "reason=\"pressure\"", NULL},
};

struct hist_def {
	const char *name;
	const char *help;
	int64_t le_ms[METRIC_BUCKETS];
};

static const struct hist_def hdefs[METRIC_HIST_COUNT] = {
    [METRIC_WAKE_SECONDS] = {"sandboxd_wake_seconds",
                             "Time a wake took, from the preview request "
                             "to its sandbox started.",
                             {100, 250, 500, 1000, 2500, 5000, 10000, 20000,
                              30000, 60000}},
    [METRIC_PUBLISH_BUILD_SECONDS] = {"sandboxd_publish_build_seconds",
                                      "Time a release's build took, from "
                                      "its start to ready or failed.",
                                      {1000, 5000, 10000, 20000, 30000, 60000,
                                       120000, 300000, 600000, 900000}},
};

static _Atomic uint64_t counters[METRIC_COUNT];
static struct {
	_Atomic uint64_t bucket[METRIC_BUCKETS + 1]; /* the last is +Inf */
	_Atomic uint64_t sum_ms;
} hists[METRIC_HIST_COUNT];

void
metric_add(enum metric m, uint64_t n)
{
	if ((unsigned)m < METRIC_COUNT)
		atomic_fetch_add_explicit(&counters[m], n,
		                          memory_order_relaxed);
}

uint64_t
metric_get(enum metric m)
{
	if ((unsigned)m >= METRIC_COUNT)
		return 0;
	return atomic_load_explicit(&counters[m], memory_order_relaxed);
}

void
metric_observe(enum metric_hist h, int64_t ms)
{
	size_t i = 0;

	if ((unsigned)h >= METRIC_HIST_COUNT)
		return;
	if (ms < 0)
		ms = 0;
	while (i < METRIC_BUCKETS && ms > hdefs[h].le_ms[i])
		i++;
	atomic_fetch_add_explicit(&hists[h].bucket[i], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&hists[h].sum_ms, (uint64_t)ms,
	                          memory_order_relaxed);
}

int
metrics_family(struct buf *out, const char *name, const char *type,
               const char *help)
{
	return buf_appendf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help,
	                   name, type);
}

int
metrics_sample(struct buf *out, const char *name, const char *labels,
               int64_t value)
{
	if (labels[0])
		return buf_appendf(out, "%s{%s} %lld\n", name, labels,
		                   (long long)value);
	return buf_appendf(out, "%s %lld\n", name, (long long)value);
}

void
metrics_label_escape(const char *v, char *out, size_t len)
{
	size_t n = 0;

	for (; *v && n + 3 < len; v++) {
		if (*v == '\\' || *v == '"') {
			out[n++] = '\\';
			out[n++] = *v;
		} else if (*v == '\n') {
			out[n++] = '\\';
			out[n++] = 'n';
		} else {
			out[n++] = *v;
		}
	}
	if (len)
		out[n < len ? n : len - 1] = '\0';
}

static int
write_hist(struct buf *out, enum metric_hist h)
{
	const struct hist_def *d = &hdefs[h];
	uint64_t cum = 0, sum;
	int rc;

	rc = metrics_family(out, d->name, "histogram", d->help);
	for (size_t i = 0; rc == 0 && i <= METRIC_BUCKETS; i++) {
		cum += atomic_load_explicit(&hists[h].bucket[i],
		                            memory_order_relaxed);
		if (i < METRIC_BUCKETS)
			rc = buf_appendf(out, "%s_bucket{le=\"%g\"} %llu\n",
			                 d->name, (double)d->le_ms[i] / 1000.0,
			                 (unsigned long long)cum);
		else
			rc = buf_appendf(out, "%s_bucket{le=\"+Inf\"} %llu\n",
			                 d->name, (unsigned long long)cum);
	}
	sum = atomic_load_explicit(&hists[h].sum_ms, memory_order_relaxed);
	if (rc == 0)
		rc = buf_appendf(out, "%s_sum %llu.%03llu\n%s_count %llu\n",
		                 d->name, (unsigned long long)(sum / 1000),
		                 (unsigned long long)(sum % 1000), d->name,
		                 (unsigned long long)cum);
	return rc;
}

int
metrics_write(struct buf *out)
{
	const char *family = "";

	for (size_t i = 0; i < METRIC_COUNT; i++) {
		const struct metric_def *d = &defs[i];
		if (strcmp(d->family, family) != 0 &&
		    metrics_family(out, d->family, "counter", d->help) < 0)
			return -1;
		family = d->family;
		if (metrics_sample(out, d->family, d->labels,
		                   (int64_t)metric_get((enum metric)i)) < 0)
			return -1;
	}
	for (size_t h = 0; h < METRIC_HIST_COUNT; h++)
		if (write_hist(out, (enum metric_hist)h) < 0)
			return -1;
	return 0;
}
