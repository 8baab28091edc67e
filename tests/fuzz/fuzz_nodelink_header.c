/*
 * libFuzzer target: the node channel's frame (nodelink/frame.c), which
 * reads every header an agent or the control plane receives and every
 * answer it gets back.  The input is a stream of frames: a length is
 * refused when 0 or over the cap (NL_HDR_MAX for requests, NL_ANS_MAX
 * for answers, picked by the first byte), a body parses to an object
 * (a request's with a valid op) or to nothing, and what parsed is
 * written back with nl_frame_put and must parse to the same op.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nodelink/frame.h"
#include "nodelink/nodelink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
round_trip(const struct jv *v, const char *op, size_t max)
{
	struct buf b;
	char op2[NL_OP_LEN], err[128];
	struct jv *w;

	buf_init(&b, 0);
	if (nl_frame_put(v, max, &b) == 0) {
		long n = nl_frame_len((const unsigned char *)b.data, max);

		if (n < 0 || (size_t)n + 4 != b.len)
			__builtin_trap();
		w = nl_frame_get(b.data + 4, b.len - 4, op ? op2 : NULL, err,
		                 sizeof(err));
		if (w == NULL || (op != NULL && strcmp(op, op2) != 0))
			__builtin_trap();
		jv_free(w);
	}
	buf_release(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool request;
	size_t off = 1, max;

	if (size < 1)
		return 0;
	request = (data[0] & 1) == 0;
	max = request ? NL_HDR_MAX : NL_ANS_MAX;
	while (size - off >= 4) {
		char op[NL_OP_LEN], err[128];
		long n = nl_frame_len(data + off, max);
		struct jv *v;

		if (n < 0)
			break;
		if (n == 0 || (size_t)n > max)
			__builtin_trap();
		off += 4;
		if ((size_t)n > size - off)
			break;
		v = nl_frame_get((const char *)data + off, (size_t)n,
		                 request ? op : NULL, err, sizeof(err));
		if (v != NULL) {
			if (request &&
			    (strlen(op) == 0 || strlen(op) >= NL_OP_LEN ||
			     strspn(op, "abcdefghijklmnopqrstuvwxyz_") !=
			         strlen(op)))
				__builtin_trap();
			round_trip(v, request ? op : NULL, max);
			jv_free(v);
		}
		off += (size_t)n;
	}
	return 0;
}
