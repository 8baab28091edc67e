/*
 * The node channel's frame (pure, no I/O): a u32 big-endian length and
 * a JSON object of at most max bytes.  A request's object names its op,
 * [a-z_], 1 to 32 bytes.  The fuzz target fuzz_nodelink_header reads
 * every byte of it.
 */
#ifndef NODELINK_FRAME_H
#define NODELINK_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/jv.h"

#define NL_FRAME_DEPTH 16 /* JSON nesting of a header or an answer */
#define NL_OP_LEN      33 /* an op's name and its NUL */

/* The length in a frame's 4 bytes; -1 when 0 or over max. */
long nl_frame_len(const unsigned char h[4], size_t max);
/* Appends the frame of v (an object) to out; -1 when over max. */
int nl_frame_put(const struct jv *v, size_t max, struct buf *out);
/* Parses a frame's body.  With op non-NULL it is a request: "op" must
 * be a valid name, copied there.  NULL with a message in err. */
struct jv *nl_frame_get(const char *body, size_t len, char op[NL_OP_LEN],
                        char *err, size_t errlen);

#endif
