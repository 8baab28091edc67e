/*
 * logs.c - process output to files, with one generation of rotation.
 *
 * Each process has one pipe, made when its record is configured and kept
 * across restarts; the child gets the write end as stdout and stderr, the
 * supervisor keeps both ends (the write end CLOEXEC) so the pipe never
 * reports EOF and output from orphaned background processes still arrives.
 * The read end is non-blocking and drained in LOGS_CHUNK reads, at most
 * LOGS_READS_PER_FD per loop turn: a process printing as fast as it can
 * fills the pipe and blocks itself, never the supervisor.
 *
 * Rotation keeps <name>.log at or under LOGS_FILE_MAX: when the next bytes
 * would pass it, what fits up to the last newline is written, the file is
 * renamed to <name>.log.1 (replacing the previous one) and a new one is
 * started.  So lines are split only when a single line does not fit.
 * Files are opened relative to the logs directory's fd with O_NOFOLLOW.
 *
 * Rejected: timestamps or prefixes on each line (the output is the app's,
 * byte for byte; the supervisor's own lines are marked "sandboxd-init:");
 * keeping more generations (the workspace is the user's disk).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "logs.h"

#define LOGS_MODE 0644

static int
logs_open_file(struct logs *l)
{
	struct stat st;

	l->size = 0;
	l->fd = openat(l->dirfd, l->file,
	               O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
	                   O_NONBLOCK,
	               LOGS_MODE);
	if (l->fd == -1) {
		log_msg("cannot open log %s: %s", l->file, strerror(errno));
		return -1;
	}
	if (fstat(l->fd, &st) == 0 && S_ISREG(st.st_mode))
		l->size = (size_t)st.st_size;
	return 0;
}

int
logs_open(struct logs *l, int dirfd, const char *name)
{
	memset(l, 0, sizeof(*l));
	l->dirfd = dirfd;
	l->fd = -1;
	l->max = LOGS_FILE_MAX;
	snprintf(l->file, sizeof(l->file), "%s.log", name);
	if (pipe2(l->pipe, O_CLOEXEC) == -1) {
		l->pipe[0] = l->pipe[1] = -1;
		return -1;
	}
	if (fcntl(l->pipe[0], F_SETFL, O_NONBLOCK) == -1) {
		logs_close(l);
		return -1;
	}
	logs_open_file(l);
	return 0;
}

void
logs_close(struct logs *l)
{
	if (l->pipe[0] != -1) {
		/* Keep what is already there. */
		logs_drain(l);
		close(l->pipe[0]);
	}
	if (l->pipe[1] != -1)
		close(l->pipe[1]);
	if (l->fd != -1)
		close(l->fd);
	l->pipe[0] = l->pipe[1] = l->fd = -1;
}

size_t
logs_split(size_t size, const char *buf, size_t n, size_t max)
{
	size_t room = size < max ? max - size : 0;
	const char *nl;

	if (n <= room)
		return n;
	nl = memrchr(buf, '\n', room);
	if (nl != NULL)
		return (size_t)(nl - buf) + 1;
	/* A line longer than the file may hold: cut it. */
	return size == 0 ? room : 0;
}

static void
logs_rotate(struct logs *l)
{
	char old[sizeof(l->file) + 2];

	snprintf(old, sizeof(old), "%s.1", l->file);
	if (l->fd != -1)
		close(l->fd);
	l->fd = -1;
	if (renameat(l->dirfd, l->file, l->dirfd, old) == -1)
		log_msg("cannot rotate log %s: %s", l->file, strerror(errno));
	logs_open_file(l);
}

/* Writes it all or drops the rest (a full disk must not stop us). */
static void
logs_put(struct logs *l, const char *buf, size_t n)
{
	ssize_t w;

	while (n > 0 && l->fd != -1) {
		w = write(l->fd, buf, n);
		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		l->size += (size_t)w;
		buf += w;
		n -= (size_t)w;
	}
}

void
logs_write(struct logs *l, const char *buf, size_t n)
{
	size_t k;

	while (n > 0) {
		k = logs_split(l->size, buf, n, l->max);
		logs_put(l, buf, k);
		buf += k;
		n -= k;
		if (n > 0)
			logs_rotate(l);
	}
}

void
logs_note(struct logs *l, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n, r;

	n = snprintf(line, sizeof(line), "sandboxd-init: ");
	va_start(ap, fmt);
	r = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (r > 0)
		n += r;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	logs_write(l, line, (size_t)n);
}

void
logs_drain(struct logs *l)
{
	char buf[LOGS_CHUNK];
	ssize_t n;
	int i;

	for (i = 0; i < LOGS_READS_PER_FD; i++) {
		n = read(l->pipe[0], buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		logs_write(l, buf, (size_t)n);
		if ((size_t)n < sizeof(buf))
			return;
	}
}
