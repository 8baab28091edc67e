/*
 * libFuzzer target: a web process's log as applog/logscan.c reads it.
 * The log is written by the sandbox's own processes, so its bytes are
 * anything.  The scan must keep at most LOGSCAN_LINES lines, each and the
 * summary NUL-terminated within their buffers, valid UTF-8 with no control
 * characters (they go into JSON and onto a screen); a problem has a first
 * line; the tail keeps what it is asked for at most.  Nothing may crash
 * or read out of bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "applog/logscan.h"
#include "lib/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_text(const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	if (n == max || !utf8_valid(s, n))
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct logscan ls;

	logscan_text((const char *)data, size, &ls);
	if (ls.nlines > LOGSCAN_LINES)
		abort();
	if (ls.kind != LOGSCAN_NONE && ls.nlines == 0)
		abort();
	if (ls.kind == LOGSCAN_NONE && (ls.nlines || ls.summary[0]))
		abort();
	check_text(ls.summary, sizeof(ls.summary));
	for (size_t i = 0; i < ls.nlines; i++)
		check_text(ls.lines[i], LOGSCAN_LINE_MAX);
	logscan_tail((const char *)data, size, 7, &ls);
	if (ls.nlines > 7)
		abort();
	for (size_t i = 0; i < ls.nlines; i++)
		check_text(ls.lines[i], LOGSCAN_LINE_MAX);
	return 0;
}
