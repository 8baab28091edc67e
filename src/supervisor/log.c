/*
 * log.c - one line per event on stderr.
 *
 * Each line is formatted into a stack buffer and written with a single
 * write(2), so supervisor lines never interleave mid-line with the output of
 * the processes sharing its stderr.  Over-long lines are cut, never split.
 * stdio is not used: a buffered FILE would hold half-written lines across
 * fork() and hide a closed stderr, and PID 1 must keep going when nobody
 * reads its log.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

#define LOG_PREFIX   "sandboxd-init: "
#define LOG_LINE_MAX 512

void
log_msg(const char *fmt, ...)
{
	char line[LOG_LINE_MAX];
	size_t prefix = sizeof(LOG_PREFIX) - 1;
	size_t room = sizeof(line) - prefix - 1; /* keep one byte for '\n' */
	size_t len;
	va_list ap;
	ssize_t n;
	int saved = errno;

	memcpy(line, LOG_PREFIX, prefix);
	va_start(ap, fmt);
	n = vsnprintf(line + prefix, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	len = prefix + ((size_t)n < room ? (size_t)n : room - 1);
	line[len++] = '\n';
	do
		n = write(STDERR_FILENO, line, len);
	while (n == -1 && errno == EINTR);
	errno = saved;
}
