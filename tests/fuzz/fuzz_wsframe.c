/*
 * libFuzzer target: the WebSocket frame codec (lib/wsframe.c), which
 * reads every byte a browser or the command line sends to a terminal
 * (and, in the client, every byte the daemon sends back).  The first
 * byte picks the side (masked frames required or refused) and the
 * message cap; the rest is the stream.  Frames are parsed one after
 * another and their data frames joined into messages, as the terminal's
 * relay does: a frame never takes more bytes than there are, a payload
 * stays inside the buffer and under the cap, a control frame is at most
 * 125 bytes, a message never passes its cap.  Then the frame's payload
 * is written back with wsframe_head (masked when it came masked) and
 * must parse to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/wsframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FRAME (64 * 1024)

static void
round_trip(const struct wsframe *f)
{
	static const uint8_t key[4] = {0x12, 0x34, 0x56, 0x78};
	uint8_t *out = malloc(WSFRAME_HEAD_LEN + f->len + 1);
	struct wsframe g;
	size_t h;
	int close = 0;
	long n;

	if (out == NULL)
		return;
	h = wsframe_head(out, f->opcode, f->fin, f->len,
	                 f->masked ? key : NULL);
	if (h > WSFRAME_HEAD_LEN)
		__builtin_trap();
	memcpy(out + h, f->payload, f->len);
	if (f->masked)
		wsframe_mask(out + h, f->len, key, 0);
	n = wsframe_parse(out, h + f->len, MAX_FRAME, f->masked, &g, &close);
	if (n != (long)(h + f->len) || g.opcode != f->opcode ||
	    g.fin != f->fin || g.len != f->len ||
	    memcmp(g.payload, f->payload, f->len) != 0)
		__builtin_trap();
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wsframe_msg m = {0};
	struct wsframe f;
	uint8_t *buf, msgbuf[4096];
	size_t off = 0, max;
	bool must_mask;
	int close;

	if (size < 1)
		return 0;
	must_mask = data[0] & 1;
	max = (data[0] & 2) ? 125 : MAX_FRAME;
	m.data = msgbuf;
	m.cap = (data[0] & 4) ? 16 : sizeof(msgbuf);
	buf = malloc(size);
	if (buf == NULL)
		return 0;
	memcpy(buf, data + 1, size - 1);
	size--;
	while (off < size) {
		long n;

		close = 0;
		n = wsframe_parse(buf + off, size - off, max, must_mask, &f,
		                  &close);
		if (n <= 0) {
			if (n < 0 && close == 0)
				__builtin_trap(); /* an error names its close
				                     code */
			break;
		}
		if ((size_t)n > size - off || f.len > max ||
		    f.payload < buf + off ||
		    f.payload + f.len > buf + off + n ||
		    (f.opcode >= WS_OP_CLOSE && (f.len > 125 || !f.fin)) ||
		    f.masked != must_mask)
			__builtin_trap();
		round_trip(&f);
		if (f.opcode < WS_OP_CLOSE) {
			int rc = wsframe_msg_add(&m, &f, &close);

			if (m.len > m.cap)
				__builtin_trap();
			if (rc < 0)
				break;
		}
		off += (size_t)n;
	}
	free(buf);
	return 0;
}
