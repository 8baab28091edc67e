/* lib/wsframe: the WebSocket frame codec, against hostile input too. */
#include <stdint.h>
#include <string.h>

#include "lib/wsframe.h"
#include "unit.h"

static const uint8_t key4[4] = {0x37, 0xfa, 0x21, 0x3d};

/* A masked frame as a client sends it; returns its length. */
static size_t
client_frame(uint8_t *out, int op, bool fin, const char *data, size_t n)
{
	size_t h = wsframe_head(out, op, fin, n, key4);

	memcpy(out + h, data, n);
	wsframe_mask(out + h, n, key4, 0);
	return h + n;
}

static void
wsframe_accepts_the_rfc_example(void)
{
	char acc[WSFRAME_ACCEPT_LEN];

	wsframe_accept("dGhlIHNhbXBsZSBub25jZQ==", acc);
	CHECK_STR(acc, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
	CHECK(wsframe_key_valid("dGhlIHNhbXBsZSBub25jZQ=="));
	CHECK(!wsframe_key_valid("dGhlIHNhbXBsZSBub25jZQ="));
	CHECK(!wsframe_key_valid("dGhlIHNhbXBsZSBub25j*Q=="));
	CHECK(!wsframe_key_valid(""));
}

static void
wsframe_unmasks_the_rfc_hello(void)
{
	/* RFC 6455 5.7: a masked "Hello". */
	uint8_t b[] = {0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d,
	               0x7f, 0x9f, 0x4d, 0x51, 0x58};
	struct wsframe f;
	int close;

	CHECK(wsframe_parse(b, sizeof(b), 1024, true, &f, &close) ==
	      (long)sizeof(b));
	CHECK(f.opcode == WS_OP_TEXT && f.fin && f.len == 5);
	CHECK(memcmp(f.payload, "Hello", 5) == 0);
	/* The server refuses it unmasked, the client refuses it masked. */
	uint8_t u[] = {0x81, 0x05, 'H', 'e', 'l', 'l', 'o'};
	CHECK(wsframe_parse(u, sizeof(u), 1024, true, &f, &close) == -1);
	CHECK(close == WS_CLOSE_PROTOCOL);
	CHECK(wsframe_parse(u, sizeof(u), 1024, false, &f, &close) == 7);
}

static void
wsframe_waits_for_the_whole_frame(void)
{
	uint8_t b[300];
	char data[200];
	struct wsframe f;
	int close;
	size_t n;

	memset(data, 'x', sizeof(data));
	n = client_frame(b, WS_OP_BINARY, true, data, sizeof(data));
	CHECK(n == 8 + 200); /* 2 + 2 (16-bit length) + 4 mask */
	for (size_t i = 0; i < n; i++) {
		uint8_t c[300];
		memcpy(c, b, n);
		CHECK(wsframe_parse(c, i, 1024, true, &f, &close) == 0);
	}
	CHECK(wsframe_parse(b, n, 1024, true, &f, &close) == (long)n);
	CHECK(f.len == 200 && f.payload[199] == 'x');
}

static void
wsframe_heads_use_the_shortest_length(void)
{
	uint8_t h[WSFRAME_HEAD_LEN];

	CHECK(wsframe_head(h, WS_OP_BINARY, true, 125, NULL) == 2);
	CHECK(h[0] == 0x82 && h[1] == 125);
	CHECK(wsframe_head(h, WS_OP_BINARY, true, 126, NULL) == 4);
	CHECK(h[1] == 126 && h[2] == 0 && h[3] == 126);
	CHECK(wsframe_head(h, WS_OP_TEXT, false, 70000, NULL) == 10);
	CHECK(h[0] == 0x01 && h[1] == 127 && h[7] == 0x01 && h[8] == 0x11 &&
	      h[9] == 0x70);
	CHECK(wsframe_head(h, WS_OP_PING, true, 0, key4) == 6);
	CHECK(h[1] == 0x80);
}

static void
wsframe_refuses_hostile_frames(void)
{
	struct wsframe f;
	int close;
	/* reserved bits */
	uint8_t rsv[] = {0xC1, 0x80, 0, 0, 0, 0};
	/* unknown opcode 3 */
	uint8_t op3[] = {0x83, 0x80, 0, 0, 0, 0};
	/* a fragmented ping */
	uint8_t fping[] = {0x09, 0x80, 0, 0, 0, 0};
	/* a close of 126 bytes */
	uint8_t bigclose[] = {0x88, 0xFE, 0, 126};
	/* 16-bit length used for 5 bytes */
	uint8_t longform[] = {0x82, 0xFE, 0, 5};
	/* a 64-bit length with the top bit set */
	uint8_t top[] = {0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0};
	/* 2^40 bytes: over the cap before any of it is read */
	uint8_t huge[] = {0x82, 0xFF, 0, 0, 1, 0, 0, 0, 0, 0};

	CHECK(wsframe_parse(rsv, sizeof(rsv), 1024, true, &f, &close) == -1);
	CHECK(wsframe_parse(op3, sizeof(op3), 1024, true, &f, &close) == -1);
	CHECK(wsframe_parse(fping, sizeof(fping), 1024, true, &f, &close) ==
	      -1);
	CHECK(wsframe_parse(bigclose, sizeof(bigclose), 1024, true, &f,
	                    &close) == -1);
	CHECK(wsframe_parse(longform, sizeof(longform), 1024, true, &f,
	                    &close) == -1);
	CHECK(wsframe_parse(top, sizeof(top), 1024, true, &f, &close) == -1);
	CHECK(wsframe_parse(huge, sizeof(huge), 1 << 20, true, &f, &close) ==
	      -1);
	CHECK(close == WS_CLOSE_TOO_BIG);
}

static void
wsframe_joins_fragments_around_pings(void)
{
	uint8_t b[256], store[8];
	struct wsframe_msg m = {.data = store, .cap = sizeof(store)};
	struct wsframe f;
	int close;
	size_t n;

	n = client_frame(b, WS_OP_TEXT, false, "abc", 3);
	CHECK(wsframe_parse(b, n, 64, true, &f, &close) == (long)n);
	CHECK(wsframe_msg_add(&m, &f, &close) == 0);
	/* a ping between fragments is the caller's, not the message's */
	n = client_frame(b, WS_OP_PING, true, "p", 1);
	CHECK(wsframe_parse(b, n, 64, true, &f, &close) == (long)n);
	CHECK(f.opcode == WS_OP_PING && f.len == 1 && f.payload[0] == 'p');
	n = client_frame(b, WS_OP_CONT, true, "de", 2);
	CHECK(wsframe_parse(b, n, 64, true, &f, &close) == (long)n);
	CHECK(wsframe_msg_add(&m, &f, &close) == 1);
	CHECK(m.opcode == WS_OP_TEXT && m.len == 5);
	CHECK(memcmp(m.data, "abcde", 5) == 0);
	/* a continuation with nothing begun */
	n = client_frame(b, WS_OP_CONT, true, "x", 1);
	CHECK(wsframe_parse(b, n, 64, true, &f, &close) == (long)n);
	CHECK(wsframe_msg_add(&m, &f, &close) == -1);
	/* a new message before the last ended */
	m.done = false;
	m.opcode = 0;
	n = client_frame(b, WS_OP_BINARY, false, "a", 1);
	wsframe_parse(b, n, 64, true, &f, &close);
	CHECK(wsframe_msg_add(&m, &f, &close) == 0);
	n = client_frame(b, WS_OP_BINARY, true, "b", 1);
	wsframe_parse(b, n, 64, true, &f, &close);
	CHECK(wsframe_msg_add(&m, &f, &close) == -1);
	/* over the cap, in fragments each under it */
	m.opcode = 0;
	m.done = false;
	n = client_frame(b, WS_OP_BINARY, false, "12345", 5);
	wsframe_parse(b, n, 64, true, &f, &close);
	CHECK(wsframe_msg_add(&m, &f, &close) == 0);
	n = client_frame(b, WS_OP_CONT, true, "6789", 4);
	wsframe_parse(b, n, 64, true, &f, &close);
	CHECK(wsframe_msg_add(&m, &f, &close) == -1);
	CHECK(close == WS_CLOSE_TOO_BIG);
}

static void
wsframe_survives_every_prefix_of_noise(void)
{
	uint8_t b[64], c[64];
	struct wsframe f;
	int close;
	uint32_t x = 12345;

	for (int round = 0; round < 20000; round++) {
		for (size_t i = 0; i < sizeof(b); i++) {
			x = x * 1103515245u + 12345u;
			b[i] = (uint8_t)(x >> 16);
		}
		memcpy(c, b, sizeof(b));
		long r = wsframe_parse(c, sizeof(c), 32, round & 1, &f, &close);
		CHECK(r >= -1 && r <= (long)sizeof(c));
		if (r > 0)
			CHECK(f.len <= 32 &&
			      f.payload + f.len <= c + sizeof(c));
	}
}

static const struct unit_test tests[] = {
    {"accepts the RFC's example key", wsframe_accepts_the_rfc_example},
    {"unmasks the RFC's Hello", wsframe_unmasks_the_rfc_hello},
    {"waits for the whole frame", wsframe_waits_for_the_whole_frame},
    {"heads use the shortest length", wsframe_heads_use_the_shortest_length},
    {"refuses hostile frames", wsframe_refuses_hostile_frames},
    {"joins fragments around pings", wsframe_joins_fragments_around_pings},
    {"survives noise", wsframe_survives_every_prefix_of_noise},
};

int
main(void)
{
	return UNIT_RUN("wsframe", tests);
}
