/*
 * GET /metrics: the Prometheus text format (version 0.0.4), behind the
 * API token like every /v1 call (docs/operations.md lists the metrics),
 * and an operator's only: every series is the instance's (all tenants'
 * sandboxes, apps, egress, traffic), which a tenant's token must not
 * read.  Per-tenant series were rejected: most counters (the edge's, the
 * proxy's) are counted where the tenant is not known.
 * The counters and histograms are lib/metrics.c's, read without a lock;
 * the gauges are counted here, on the scraping request's thread: the
 * sandboxes by state from the store (one pass over its rows), the
 * releases by status and the published apps (one statement), the
 * egress refusals from the nft set's counters (one libnftables list),
 * whether Docker answers.  Nothing here runs on a hot path.
 */
#include <stdio.h>
#include <stdlib.h>

#include "api/api.h"
#include "publish/publish.h"
#include "sbnet/sbnet.h"
#include "lib/metrics.h"

#define METRICS_BODY_BYTES    (1u << 20) /* the text is a few KiB */
#define METRICS_PUBLISHED_MAX 4096       /* apps with a requests series */

static int
count_state(const struct sandbox *sb, void *arg)
{
	int64_t *by = arg;

	if ((unsigned)sb->status <= SANDBOX_ERROR)
		by[sb->status]++;
	if (sb->status == SANDBOX_RUNNING && sb->frozen)
		by[SANDBOX_ERROR + 1]++; /* the frozen ones among the running */
	return 0;
}

static int
count_app(const struct app *a, void *arg)
{
	(void)a;
	(*(int64_t *)arg)++;
	return 0;
}

static const char *
kind_name(enum publish_kind k)
{
	return k == PUBLISH_STATIC   ? "static"
	       : k == PUBLISH_SERVER ? "server"
	       : k == PUBLISH_DOWN   ? "down"
	                             : "none";
}

/*
 * Requests per published app, from the edge's host table (one copy of
 * its counters under its lock, at most METRICS_PUBLISHED_MAX apps): one
 * series per app, labelled with what its active release is.
 */
static int
publish_requests(struct req *r, struct buf *b)
{
	struct publish_stat *st = calloc(METRICS_PUBLISHED_MAX, sizeof(*st));
	char labels[128];
	size_t n;
	int rc;

	if (st == NULL)
		return -1;
	n = publish_stats(r->core, st, METRICS_PUBLISHED_MAX);
	rc = metrics_family(b, "sandboxd_publish_requests_total", "counter",
	                    "Requests the edge answered for a published app, "
	                    "by its id and its active release's kind.");
	for (size_t i = 0; rc == 0 && i < n; i++) {
		snprintf(labels, sizeof(labels), "app=\"%s\",kind=\"%s\"",
		         st[i].app_id, kind_name(st[i].kind));
		rc = metrics_sample(b, "sandboxd_publish_requests_total",
		                    labels, (int64_t)st[i].requests);
	}
	free(st);
	return rc;
}

/* Publishing's gauges: releases by status, apps serving a release. */
static int
publish_gauges(struct req *r, struct buf *b)
{
	static const char *const names[] = {"building", "ready", "failed"};
	struct release_stats st;
	int64_t by[3];
	char labels[64];
	int rc;

	if (store_release_stats(r->core->store, &st) != 0)
		return 0; /* no figure rather than a wrong one */
	by[0] = st.building;
	by[1] = st.ready;
	by[2] = st.failed;
	rc = metrics_family(b, "sandboxd_releases", "gauge",
	                    "Releases kept, by status.");
	for (size_t i = 0; rc == 0 && i < 3; i++) {
		snprintf(labels, sizeof(labels), "status=\"%s\"", names[i]);
		rc = metrics_sample(b, "sandboxd_releases", labels, by[i]);
	}
	if (rc == 0)
		rc = metrics_family(
		         b, "sandboxd_published_apps", "gauge",
		         "Apps whose publication serves a release.") ||
		     metrics_sample(b, "sandboxd_published_apps", "",
		                    st.published);
	return rc;
}

static int
gauges(struct req *r, struct buf *b)
{
	int64_t by[SANDBOX_ERROR + 2] = {0}, apps = 0, refused;
	char labels[64];
	int rc;

	store_sandbox_list(r->core->store, count_state, by);
	store_app_list(r->core->store, NULL, count_app, &apps);
	rc = metrics_family(b, "sandboxd_sandboxes", "gauge",
	                    "Sandboxes by state.");
	for (int st = SANDBOX_CREATING; rc == 0 && st <= SANDBOX_ERROR; st++) {
		snprintf(labels, sizeof(labels), "state=\"%s\"",
		         sandbox_state_name((enum sandbox_state)st));
		rc = metrics_sample(b, "sandboxd_sandboxes", labels, by[st]);
	}
	if (rc == 0)
		rc = metrics_family(b, "sandboxd_sandboxes_frozen", "gauge",
		                    "Running sandboxes that are frozen (paused "
		                    "by the idle reaper's first tier).") ||
		     metrics_sample(b, "sandboxd_sandboxes_frozen", "",
		                    by[SANDBOX_ERROR + 1]);
	if (rc == 0)
		rc = metrics_family(b, "sandboxd_apps", "gauge", "Apps.");
	if (rc == 0)
		rc = metrics_sample(b, "sandboxd_apps", "", apps);
	refused = sbnet_blocked(r->core->net, NULL);
	if (rc == 0 && refused >= 0)
		rc = metrics_family(
		         b, "sandboxd_egress_refused_packets", "gauge",
		         "Packets the egress rules refused, summed over the "
		         "addresses sandboxes have now (an address's count "
		         "starts anew when a sandbox gets it).") ||
		     metrics_sample(b, "sandboxd_egress_refused_packets", "",
		                    refused);
	if (rc == 0)
		rc =
		    metrics_family(b, "sandboxd_docker_up", "gauge",
		                   "1 when the Docker engine answered last.") ||
		    metrics_sample(b, "sandboxd_docker_up", "",
		                   docker_is_up(r->core->docker));
	if (rc == 0)
		rc = publish_gauges(r, b);
	if (rc == 0)
		rc = publish_requests(r, b);
	return rc;
}

void
metrics_get(struct req *r, struct resp *w)
{
	struct buf b;

	if (!r->operator) {
		api_fail(w, 403, "operator_only",
		         "/metrics is the whole instance's: only an operator's "
		         "token reads it (tenant %s is no operator; see "
		         "SANDBOXD_OPERATORS)",
		         r->owner);
		return;
	}
	buf_init(&b, METRICS_BODY_BYTES);
	if (metrics_write(&b) < 0 || gauges(r, &b) < 0) {
		buf_release(&b);
		api_fail(w, 500, "internal", "the metrics do not fit");
		return;
	}
	api_reply_bytes(w, 200, "text/plain; version=0.0.4; charset=utf-8",
	                b.data ? b.data : "", b.len);
	buf_release(&b);
}

/* The routes of this file, in the router's order (routes.c). */
const struct route metrics_routes[] = {
    {.method = "GET", .pattern = "/metrics", .fn = metrics_get},
    {0},
};
