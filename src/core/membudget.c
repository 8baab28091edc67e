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
#include "core/membudget.h"

#include <stdbool.h>
#include <string.h>

#include "lib/meminfo.h"

struct tally {
	long long bytes;
	int n;
};

static int
add_one(const struct sandbox *sb, void *arg)
{
	struct tally *t = arg;
	long long b;

	if (sb->status != SANDBOX_RUNNING || sb->container_id[0] == '\0')
		return 0;
	b = meminfo_container_bytes(sb->container_id);
	if (b > 0)
		t->bytes += b;
	t->n++;
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
		store_sandbox_list(c->store, add_one, &t);
		m.used_kb = t.bytes / 1024;
		m.sandboxes = t.n;
		m.avail_pct = t.bytes >= budget
		                  ? 0
		                  : (int)((budget - t.bytes) * 100 / budget);
	}
	if (out)
		*out = m;
	return m.avail_pct;
}
