/*
 * struct buf: an owned, growable, NUL-terminated byte buffer with a hard
 * cap.  An append that would pass the cap fails and leaves the buffer as
 * it was, so a caller can turn "too big" into a clean error.
 */
#ifndef LIB_BUF_H
#define LIB_BUF_H

#include <stddef.h>

struct buf {
	char *data; /* NUL-terminated; NULL until the first append */
	size_t len;
	size_t cap; /* allocated bytes */
	size_t max; /* hard limit on len; 0 means BUF_DEFAULT_MAX */
};

#define BUF_DEFAULT_MAX (64u << 20)

void buf_init(struct buf *b, size_t max);
/* Returns 0, or -1 when the cap would be passed or memory ran out. */
int buf_append(struct buf *b, const void *data, size_t len);
int buf_appendf(struct buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void buf_reset(struct buf *b);
void buf_release(struct buf *b);

#endif
