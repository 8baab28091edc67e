/*
 * wsframe: the WebSocket frame codec (RFC 6455), pure functions over
 * buffers so it can be unit-tested and fuzzed.  The API's terminal
 * (api/terminal.c) and the command line's client both use it.
 *
 * wsframe_parse() reads one frame from the bytes received; the reader
 * (struct wsframe_msg) joins fragments into a message, bounded by a cap
 * that hostile input cannot pass.  Control frames (ping, pong, close)
 * may come between the fragments of a message, as the RFC allows.
 */
#ifndef LIB_WSFRAME_H
#define LIB_WSFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	WS_OP_CONT = 0x0,
	WS_OP_TEXT = 0x1,
	WS_OP_BINARY = 0x2,
	WS_OP_CLOSE = 0x8,
	WS_OP_PING = 0x9,
	WS_OP_PONG = 0xA,
};

/* Close codes we send. */
enum {
	WS_CLOSE_NORMAL = 1000,
	WS_CLOSE_PROTOCOL = 1002,
	WS_CLOSE_TOO_BIG = 1009,
};

#define WSFRAME_HEAD_LEN 14
/* The Sec-WebSocket-Accept value: 28 base64 characters and a NUL. */
#define WSFRAME_ACCEPT_LEN 29

struct wsframe {
	int opcode;
	bool fin;
	bool masked;
	const uint8_t *payload; /* into the buffer parsed, unmasked in place */
	size_t len;
};

/*
 * Parses one frame at the start of p (n bytes).  Returns the bytes it
 * takes (> 0) with *f filled and its payload unmasked in place; 0 when
 * more bytes are needed; -1 on a protocol error (*close set to the code
 * to close with): reserved bits set, an unknown opcode, a control frame
 * fragmented or over 125 bytes, a length over max or not in its
 * shortest form's range, a frame not masked when must_mask (the server
 * reading a client) or masked when it must not.
 */
long wsframe_parse(uint8_t *p, size_t n, size_t max, bool must_mask,
                   struct wsframe *f, int *close);

/*
 * Writes the head of a frame of len bytes to out: the length in its
 * shortest form, and when mask is not NULL the mask bit and the 4 mask
 * bytes (the caller masks the payload with wsframe_mask).  Returns the
 * head's length.
 */
size_t wsframe_head(uint8_t out[WSFRAME_HEAD_LEN], int opcode, bool fin,
                    uint64_t len, const uint8_t *mask);

/* XORs n bytes with the mask, starting at offset off of the payload. */
void wsframe_mask(uint8_t *p, size_t n, const uint8_t mask[4], size_t off);

/* The Sec-WebSocket-Accept for a Sec-WebSocket-Key. */
void wsframe_accept(const char *key, char out[WSFRAME_ACCEPT_LEN]);

/* Whether key is a valid Sec-WebSocket-Key (base64 of 16 bytes). */
bool wsframe_key_valid(const char *key);

/*
 * A message being joined from its fragments, at most cap bytes.
 * wsframe_msg_add() takes every data frame in order: 1 when the message
 * is complete (opcode and data in *m, until the next add), 0 when more
 * fragments are due, -1 on a protocol error (*close set): a
 * continuation with no message begun, a new message before the last
 * one ended, or a message over cap (WS_CLOSE_TOO_BIG).
 */
struct wsframe_msg {
	uint8_t *data; /* cap bytes, the caller's */
	size_t cap;
	size_t len;
	int opcode; /* of the message begun, 0 when none */
	bool done;
};

int wsframe_msg_add(struct wsframe_msg *m, const struct wsframe *f, int *close);

#endif
