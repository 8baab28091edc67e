/*
 * reaper: the idle and pressure reapers, run as periodic jobs by serve(). Idle:
 * a running sandbox that sleeps (core_sleep_policy: idle_policy not
 * "always_on") and whose last activity (proxied traffic, a change made through
 * the API) is older than core_idle_threshold() (the lifecycle setting, else
 * SANDBOXD_IDLE_THRESHOLD_SECONDS; read at every pass) is stopped, reason
 * "idle", frozen or not; one whose sleep policy is "freeze" is frozen
 * before that, once idle for SANDBOXD_FREEZE_AFTER_SECONDS.  Pressure:
 * while the host's available memory is under SANDBOXD_MEM_HEADROOM_PCT, one
 * running sandbox per period is stopped, reason "pressure": frozen ones
 * first, then the least recently active first, "always_on" ones last.
 * Neither ever wakes a sandbox.
 */
#ifndef REAPER_REAPER_H
#define REAPER_REAPER_H

#include "sandbox/core.h"

/* One pass of each, on the caller's thread. */
void reaper_idle_pass(struct core *c);
void reaper_pressure_pass(struct core *c);

#endif
