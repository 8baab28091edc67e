/*
 * Logging to stderr.  Each line is formatted into a stack buffer and
 * written with one write(2), so lines from concurrent threads never
 * interleave.  Long messages are truncated rather than split.
 */
#include "lib/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static void
log_line(const char *level, const char *fmt, va_list ap)
{
	char line[2048];
	struct tm tm;
	time_t now = time(NULL);
	int n;

	gmtime_r(&now, &tm);
	n = (int)strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%SZ ", &tm);
	n += snprintf(line + n, sizeof(line) - (size_t)n, "%s ", level);
	if (n < (int)sizeof(line))
		n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	if (n >= (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	(void)!write(STDERR_FILENO, line, (size_t)n);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line("info", fmt, ap);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line("warn", fmt, ap);
	va_end(ap);
}

void
log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line("error", fmt, ap);
	va_end(ap);
}
