/*
 * sig.h - signals as file-descriptor events.
 *
 * The supervisor never runs code in a signal handler: the signals it cares
 * about are blocked and read from a signalfd in its main loop.
 */
#ifndef SUPERVISOR_SIG_H
#define SUPERVISOR_SIG_H

#include <signal.h>

/*
 * Blocks the signals in *set, resets their dispositions to SIG_DFL,
 * ignores SIGPIPE and returns a non-blocking,
 * close-on-exec signalfd that reports the blocked ones; -1 with errno set
 * on failure.  Call once, before starting any child.
 */
int sig_open(const sigset_t *set);

/*
 * Returns the number of the next pending signal on fd, 0 when none is
 * pending, -1 with errno set on a read error.
 */
int sig_next(int fd);

/*
 * In a child between fork() and exec(): an empty signal mask and every
 * disposition SIG_DFL.  Async-signal-safe.
 */
void sig_child_reset(void);

/* "SIGTERM" for SIGTERM; "SIG?" for a number it does not know. */
const char *sig_name(int sig);

#endif
