/*
 * UTF-8 validity and character boundaries, for bytes that come from
 * outside (an agent's output) and text that must leave as UTF-8.  One
 * character at a time, no tables: the lead byte gives the length, and the
 * code point the bytes spell must be one only that length can spell.
 *
 * Rejected: validating through lib/jv (jansson refuses bad UTF-8, but
 * only while building a string, and does not say where).
 */
#include "lib/utf8.h"

#include <ctype.h>
#include <stdio.h>

size_t
utf8_char_len(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned cp;
	size_t n;

	if (u[0] < 0x80)
		return 1;
	if (u[0] >= 0xc2 && u[0] <= 0xdf)
		n = 2, cp = u[0] & 0x1f;
	else if (u[0] >= 0xe0 && u[0] <= 0xef)
		n = 3, cp = u[0] & 0x0f;
	else if (u[0] >= 0xf0 && u[0] <= 0xf4)
		n = 4, cp = u[0] & 0x07;
	else
		return 0;
	if (n > len)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (u[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

bool
utf8_valid(const char *s, size_t len)
{
	size_t n;

	for (size_t i = 0; i < len; i += n) {
		n = utf8_char_len(s + i, len - i);
		if (n == 0)
			return false;
	}
	return true;
}

size_t
utf8_clip(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	/* s[max] is the byte after the cut: back up while it continues the
	 * character before it. */
	len = max;
	while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
		len--;
	return len;
}

void
utf8_slug(const char *name, size_t max, char *out, size_t len)
{
	size_t n = 0;
	bool dash = false;

	if (len == 0)
		return;
	for (const char *p = name; *p && n + 2 < len && n < max; p++) {
		unsigned char c = (unsigned char)*p;
		if (c < 0x80 && isalnum(c)) {
			if (dash && n > 0)
				out[n++] = '-';
			out[n++] = (char)tolower(c);
			dash = false;
		} else {
			dash = true;
		}
	}
	out[n] = '\0';
	if (n == 0)
		snprintf(out, len, "app");
}
