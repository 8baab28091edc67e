/*
 * A build log's bytes made into text/event-stream events (api.h,
 * struct api_loglines): the pure part of releaselog.c, so the unit tests
 * and a fuzz target drive it without a daemon.
 *
 * The bytes are the build's output, so anything: a line ends at LF, CR
 * or CRLF (a CRLF split between two reads is still one end: the state
 * remembers the CR), ANSI escape sequences (ESC, and CSI up to its final
 * byte) are dropped and any other control byte is shown as '?', so that
 * no event carries a line break and nothing reaches a terminal that
 * could drive it; a line longer than RELEASELOG_LINE_MAX is cut back to
 * its last whole UTF-8 character, marked, and the rest of it skipped.
 * Each event's id is the file offset after the byte that ended its line.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

#define RL_CUT " [cut]"

static int
line_event(struct api_loglines *l, struct buf *out)
{
	size_t n = l->len;

	l->line[n] = '\0';
	return buf_appendf(out, "event: log\nid: %lld\ndata: %s%s\n\n",
	                   (long long)l->off, l->line, l->cut ? RL_CUT : "");
}

/* A full line cut back to its last whole UTF-8 character. */
static size_t
whole_chars(const char *s, size_t len)
{
	size_t k = len, need;
	unsigned char lead;

	while (k > 0 && len - k < 4 && ((unsigned char)s[k - 1] & 0xc0) == 0x80)
		k--;
	if (k == 0 || (lead = (unsigned char)s[k - 1]) < 0xc0)
		return len; /* ASCII, or no character to finish */
	need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
	return len - (k - 1) < need ? k - 1 : len;
}

/* One byte of a line: kept, shown as '?', or dropped (escapes). */
static void
line_byte(struct api_loglines *l, unsigned char ch)
{
	if (l->esc == 1) { /* ESC x: a CSI opens with '[', else done */
		l->esc = ch == '[' ? 2 : 0;
		return;
	}
	if (l->esc == 2) { /* CSI parameters, up to a final byte */
		if (ch >= 0x40 && ch <= 0x7e)
			l->esc = 0;
		return;
	}
	if (ch == 0x1b) {
		l->esc = 1;
		return;
	}
	if (l->cut)
		return;
	if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
		ch = '?';
	if (l->len == RELEASELOG_LINE_MAX) {
		/* Cut on a character's boundary. */
		l->len = whole_chars(l->line, l->len);
		l->cut = true;
		return;
	}
	l->line[l->len++] = (char)ch;
}

static int
loglines_step(struct api_loglines *l, const char *p, size_t n, struct buf *out)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)p[i];
		bool crlf = ch == '\n' && l->cr;

		l->off++;
		l->cr = ch == '\r';
		if (ch != '\n' && ch != '\r') {
			line_byte(l, ch);
			continue;
		}
		if (crlf) /* the LF of a CRLF: the line ended at its CR */
			continue;
		l->esc = 0;
		if (line_event(l, out) < 0)
			return -1;
		l->len = 0;
		l->cut = false;
	}
	return 0;
}

int
api_loglines_feed(struct api_loglines *l, const char *p, size_t n,
                  struct buf *out)
{
	struct api_loglines *was = malloc(sizeof(*was));
	size_t len = out->len;
	int rc;

	if (was == NULL)
		return -1;
	memcpy(was, l, sizeof(*was));
	rc = loglines_step(l, p, n, out);
	if (rc < 0) { /* as before: the caller tries again with room */
		memcpy(l, was, sizeof(*l));
		out->len = len;
		if (out->data)
			out->data[len] = '\0';
	}
	free(was);
	return rc;
}

int
api_loglines_flush(struct api_loglines *l, struct buf *out)
{
	if (l->len == 0 && !l->cut)
		return 0;
	if (line_event(l, out) < 0)
		return -1;
	l->len = 0;
	l->cut = false;
	return 0;
}
