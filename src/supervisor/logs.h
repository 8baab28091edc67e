/*
 * logs.h - a process's output: a pipe the supervisor drains into
 * .sandboxd/logs/<name>.log, rotated to <name>.log.1 at LOGS_FILE_MAX.
 *
 * The pipe lives as long as the log, across restarts of the process, so
 * output of leftover background processes still lands in the file.
 */
#ifndef SUPERVISOR_LOGS_H
#define SUPERVISOR_LOGS_H

#include <stdbool.h>
#include <stddef.h>

#include "limits.h"

struct logs {
	int dirfd;   /* the logs directory; borrowed */
	int pipe[2]; /* [0]: ours, non-blocking; [1]: the child's stdout */
	int fd;      /* the log file, -1 when it could not be opened */
	size_t size; /* bytes in the log file */
	size_t max;  /* rotation size, LOGS_FILE_MAX */
	char file[CONF_NAME_MAX + 8]; /* "<name>.log" */
};

/*
 * Opens the pipe and <name>.log (appending) in dirfd.  Returns 0, or -1
 * with errno set when the pipe could not be made.  A log file that cannot
 * be opened is reported and its output dropped, never fatal.
 */
int logs_open(struct logs *l, int dirfd, const char *name);

void logs_close(struct logs *l);

/* Moves what is in the pipe to the file: at most LOGS_READS_PER_FD reads,
 * so one flooding process cannot starve the loop. */
void logs_drain(struct logs *l);

/* Appends bytes to the file, rotating when it would pass l->max. */
void logs_write(struct logs *l, const char *buf, size_t n);

/* Appends a supervisor line ("sandboxd-init: ...\n") to the file. */
void logs_note(struct logs *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * How many of the n bytes of buf still go into a file holding size bytes
 * before it is rotated: all when they fit under max, else up to the last
 * newline that fits (none fitting: 0, or as much as fits in an empty file).
 */
size_t logs_split(size_t size, const char *buf, size_t n, size_t max);

#endif
