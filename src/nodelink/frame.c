/*
 * The frame codec of the node channel: a length then JSON, both ways.
 * Pure, so that the fuzz target and the unit test drive it without a
 * socket.  A body is parsed only once its length passed the cap, so a
 * peer never makes us hold more than NL_HDR_MAX (a request) or
 * NL_ANS_MAX (an answer) bytes.
 */
#include "nodelink/frame.h"

#include <stdio.h>
#include <string.h>

long
nl_frame_len(const unsigned char h[4], size_t max)
{
	uint32_t n = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 |
	             (uint32_t)h[2] << 8 | (uint32_t)h[3];

	if (n == 0 || n > max)
		return -1;
	return (long)n;
}

int
nl_frame_put(const struct jv *v, size_t max, struct buf *out)
{
	size_t start = out->len, n;
	unsigned char h[4] = {0};

	if (jv_type(v) != JV_OBJECT || buf_append(out, h, 4) < 0)
		return -1;
	if (jv_dump(v, out) < 0) {
		out->len = start;
		return -1;
	}
	n = out->len - start - 4;
	if (n == 0 || n > max) {
		out->len = start;
		return -1;
	}
	h[0] = (unsigned char)(n >> 24);
	h[1] = (unsigned char)(n >> 16);
	h[2] = (unsigned char)(n >> 8);
	h[3] = (unsigned char)n;
	memcpy(out->data + start, h, 4);
	return 0;
}

static bool
op_valid(const char *s, size_t n)
{
	if (s == NULL || n == 0 || n >= NL_OP_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || s[i] == '_'))
			return false;
	return true;
}

struct jv *
nl_frame_get(const char *body, size_t len, char op[NL_OP_LEN], char *err,
             size_t errlen)
{
	struct jv *v = jv_parse(body, len, NL_FRAME_DEPTH, err, errlen);
	struct jv *o;

	if (v == NULL)
		return NULL;
	if (jv_type(v) != JV_OBJECT) {
		snprintf(err, errlen, "not an object");
		jv_free(v);
		return NULL;
	}
	if (op == NULL)
		return v;
	o = jv_get(v, "op");
	if (!op_valid(jv_str(o), jv_str_len(o))) {
		snprintf(err, errlen, "no valid op");
		jv_free(v);
		return NULL;
	}
	memcpy(op, jv_str(o), jv_str_len(o) + 1);
	return v;
}
