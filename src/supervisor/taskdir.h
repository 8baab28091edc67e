/*
 * taskdir.h - files in a task's directory, $HOME/.sandboxd/tasks/<id>/
 * (docs/supervisor.md, "Tasks"): opened without following symlinks, read
 * with a size cap, records appended one write(2) each, and the boot-time
 * sweep that ends tasks a previous boot left running.
 *
 * Main loop only.  Functions returning -1 set errno; a file that is there
 * but not a regular file gives EINVAL (a symlink: ELOOP).
 */
#ifndef SUPERVISOR_TASKDIR_H
#define SUPERVISOR_TASKDIR_H

#include <stddef.h>
#include <sys/types.h>

#include "task.h"

/* Opens the directory of task id (validated) under tasks, refusing a
 * symlink.  Returns a directory fd, or -1. */
int taskdir_open(const char *tasks, const char *id);

/* Opens name in dir for writing (O_APPEND | O_CREAT plus flags, e.g.
 * O_EXCL or O_TRUNC; O_RDWR to read it back too), refusing symlinks and
 * anything but a regular file.  Returns the fd or -1. */
int taskdir_create(int dir, const char *name, int flags);

/*
 * Reads the regular file name in dir, at most max bytes.  Returns a
 * malloc'd buffer with *len set (and a NUL after the data), or NULL with
 * errno set: ENOENT, ELOOP, EINVAL, EFBIG (over max), ENOMEM, or a read
 * error.
 */
char *taskdir_read(int dir, const char *name, size_t max, size_t *len);

/* Why taskdir_read() or taskdir_create() failed, in words ("missing",
 * "a symlink", "larger than 524288 bytes"...). */
const char *taskdir_why(int err);

/* Reads <dir>/steps.  Returns 0 with *st filled, -1 when it cannot be
 * read (errno ENOENT when there is none). */
int taskdir_steps(int dir, struct task_steps *st);

/*
 * Appends one record to the steps file fd: the formatted fields and a
 * '\n' in one write(2), so a reader never sees part of it.  Text fields
 * must have been through task_text().  Failures are logged.
 */
void taskdir_record(int fd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Replaces name in dir with len bytes of buf, atomically (a temporary
 * file renamed over it).  Returns 0 or -1 (logged). */
int taskdir_put(int dir, const char *name, const char *buf, size_t len);

/*
 * The last non-empty line written to fd (a log opened O_RDWR) after
 * offset since,
 * through task_text() into out (room for TASK_TEXT_MAX + 1).  Returns its
 * length, 0 when there is none.
 */
size_t taskdir_last_line(int fd, off_t since, char *out);

/* The wall clock in milliseconds since the epoch, for records. */
long long taskdir_unix_ms(void);

/*
 * At boot: every task under tasks (at most TASK_SCAN_DIRS, the newest by
 * name) whose steps file has a start record and no end record gets
 * "end\t<ms>\tinterrupted", after a '\n' when its last line lacks one.
 * Returns how many were ended.
 */
unsigned taskdir_sweep(const char *tasks);

#endif
