/*
 * UTF-8 as RFC 3629 defines it: only the shortest form of each character,
 * no surrogates (U+D800-U+DFFF), nothing above U+10FFFF.  A NUL byte is
 * U+0000, a character like any other; callers that refuse it say so.
 */
#ifndef LIB_UTF8_H
#define LIB_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* The length (1-4) of the well-formed character that begins the len > 0
 * bytes at s; 0 when they do not begin with one. */
size_t utf8_char_len(const char *s, size_t len);
/* Whether the len bytes at s are well-formed UTF-8, all of them. */
bool utf8_valid(const char *s, size_t len);
/* The length of the longest prefix of s (well-formed, len bytes) that is at
 * most max bytes and ends on a character boundary. */
size_t utf8_clip(const char *s, size_t len, size_t max);

/*
 * A name as a slug: its ASCII letters and digits in lower case, each run
 * of anything else between them one '-', at most max of them, into out
 * (len bytes, NUL-terminated); "app" when none is left.
 */
void utf8_slug(const char *name, size_t max, char *out, size_t len);

#endif
