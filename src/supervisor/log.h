/*
 * log.h - the supervisor's event log: one line per event on stderr, each
 * prefixed "sandboxd-init: ".  Safe to call from the main loop only (not
 * between fork and exec).  Preserves errno.
 */
#ifndef SUPERVISOR_LOG_H
#define SUPERVISOR_LOG_H

void log_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
