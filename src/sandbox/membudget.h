/*
 * membudget: how much memory is available for sandboxes, as a
 * percentage, for the pressure reaper, preview wakes and task
 * submission.  Any thread may call it; it reads files each time.
 */
#ifndef SANDBOX_MEMBUDGET_H
#define SANDBOX_MEMBUDGET_H

#include <stdint.h>

#include "sandbox/core.h"

struct membudget {
	int avail_pct;   /* what the thresholds compare; -1 when unknown */
	int64_t used_kb; /* with a budget: what the sandboxes hold */
	int sandboxes;   /* with a budget: running sandboxes counted */
};

/*
 * SANDBOXD_MEM_BUDGET_MB = 0: the host's MemAvailable/MemTotal.  Else
 * (budget − what the running sandboxes' containers hold) / budget,
 * never below 0.  Fills *out when it is not NULL; returns avail_pct.
 */
int membudget_available_pct(struct core *c, struct membudget *out);

#endif
