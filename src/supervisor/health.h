/*
 * health.h - the web process's health check (docs/supervisor.md,
 * "Process states"): an HTTP/1.0 GET of the health path on the container's
 * own address, HEALTH_FIRST_MS after the spawn and then twice as far apart
 * up to HEALTH_STARTING_MS until it first passes, then every
 * HEALTH_READY_MS.
 *
 * Driven by the main loop like the other modules; never blocks.  The
 * policy (health_note) and the status-line parser are pure functions.
 */
#ifndef SUPERVISOR_HEALTH_H
#define SUPERVISOR_HEALTH_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#include "limits.h"

enum health_state {
	HEALTH_NONE,     /* no web process */
	HEALTH_STARTING, /* spawned, not answering yet */
	HEALTH_READY,
	HEALTH_ERROR, /* web down, or was ready and failed HEALTH_FAILS */
};

enum health_phase {
	HEALTH_IDLE,
	HEALTH_CONNECTING,
	HEALTH_SENDING,
	HEALTH_READING,
};

struct health {
	enum health_state state;
	bool was_ready;    /* passed since the web process was spawned */
	unsigned fails;    /* failed checks in a row */
	long long next_at; /* next check (CLOCK_MONOTONIC ms); -1: none */
	int gap_ms;        /* until the first pass: the next interval */
	char detail[192];
	/* the check in flight */
	enum health_phase phase;
	int fd;
	long long deadline;
	char target[32]; /* "10.0.0.2:3000" */
	char req[CONF_PATH_MAX + 64];
	size_t req_len, req_off;
	char line[HEALTH_LINE_MAX];
	size_t line_len;
};

void health_init(struct health *h);

/* No checks: state NONE, or ERROR (the web process is down), with why. */
void health_set(struct health *h, enum health_state state, const char *detail);

/* The web process was (re)spawned: STARTING, first check soon. */
void health_start(struct health *h, long long now);

/*
 * Records a check's outcome and schedules the next one.  Returns true when
 * it is the first pass since health_start() (the web process is up).
 */
bool health_note(struct health *h, bool ok, long long now);

/* The fd of the check in flight, for poll(); false when none. */
bool health_pollfd(const struct health *h, struct pollfd *pfd);

/*
 * Advances the check in flight (after poll) or starts one that is due or
 * fails one past its deadline (tick).  Both return true when the web
 * process just passed its first check.
 */
bool health_on_poll(struct health *h, short revents, long long now);
bool health_tick(struct health *h, long long now, unsigned port,
                 const char *path);

/* The next time health_tick() has work, or -1. */
long long health_next(const struct health *h);

/*
 * The status code of an HTTP response's first line in buf (len bytes so
 * far; eof when no more will come): 100-999, 0 when more bytes are
 * needed, -1 when it is not an HTTP status line.
 */
int health_parse_status(const char *buf, size_t len, bool eof);

/* "none", "starting", "ready", "error" */
const char *health_state_name(enum health_state state);

#endif
