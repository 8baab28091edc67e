/*
 * The memory the thresholds (SANDBOXD_MEM_HEADROOM_PCT,
 * SANDBOXD_MEM_REFUSE_WAKES_PCT) are measured against.
 *
 * By default it is the host's: MemAvailable of MemTotal, so sandboxd
 * leaves room for everything else the server runs.  With
 * SANDBOXD_MEM_BUDGET_MB the daemon keeps its own account instead:
 * the budget minus what its running sandboxes hold, each read from the
 * container's memory cgroup (lib/meminfo.h: usage less inactive file
 * pages, the `docker stats` figure).  Frozen sandboxes count: a paused
 * container keeps its memory.  This is how an operator gives sandboxd a
 * share of a bigger server, and how a fixed budget is measured
 * (bench/density) on a machine with more memory than the budget.
 * Rejected: a cgroup slice for all sandboxes (needs the engine's
 * cgroup-parent and systemd; the engine here uses cgroupfs), and the
 * Engine API's stats (one request per container per pass, ~ms each,
 * where a file read takes microseconds).
 */
#include "sandbox/membudget.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/meminfo.h"

/* The running sandboxes' container ids, gathered under the store's lock
 * and read after it: cgroup files are no reading for a shared lock. */
struct tally {
	char (*ids)[sizeof(((struct sandbox *)0)->container_id)];
	size_t n, cap;
};

static int
add_one(const struct sandbox *sb, void *arg)
{
	struct tally *t = arg;

	if (sb->status != SANDBOX_RUNNING || sb->container_id[0] == '\0')
		return 0;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		void *p = realloc(t->ids, cap * sizeof(*t->ids));
		if (p == NULL)
			return 0; /* counted short: the next pass asks again */
		t->ids = p;
		t->cap = cap;
	}
	memcpy(t->ids[t->n++], sb->container_id, sizeof(*t->ids));
	return 0;
}

int
membudget_available_pct(struct core *c, struct membudget *out)
{
	struct membudget m = {.avail_pct = -1};
	struct tally t = {0};
	long long budget = (long long)c->cfg->mem_budget_mb * 1024 * 1024;

	if (budget <= 0) {
		m.avail_pct = meminfo_available_pct();
	} else {
		long long bytes = 0;

		store_sandbox_list(c->store, add_one, &t);
		for (size_t i = 0; i < t.n; i++) {
			long long b = meminfo_container_bytes(t.ids[i]);
			if (b > 0)
				bytes += b;
		}
		free(t.ids);
		m.used_kb = bytes / 1024;
		m.sandboxes = (int)t.n;
		m.avail_pct = bytes >= budget
		                  ? 0
		                  : (int)((budget - bytes) * 100 / budget);
	}
	if (out)
		*out = m;
	return m.avail_pct;
}
