/*
 * The WebSocket frame codec (wsframe.h), with the SHA-1 and base64 the
 * opening handshake needs (RFC 3174, RFC 4648): SHA-1 is used for
 * nothing else, and no library of ours that has it may be included
 * from lib/.
 */
#include "lib/wsframe.h"

#include <string.h>

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static uint32_t
rol(uint32_t x, int n)
{
	return (x << n) | (x >> (32 - n));
}

static void
sha1_block(uint32_t h[5], const uint8_t *p)
{
	uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 80; i++)
		w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	for (int i = 0; i < 80; i++) {
		uint32_t f, k, t;
		if (i < 20) {
			f = (b & c) | (~b & d);
			k = 0x5A827999;
		} else if (i < 40) {
			f = b ^ c ^ d;
			k = 0x6ED9EBA1;
		} else if (i < 60) {
			f = (b & c) | (b & d) | (c & d);
			k = 0x8F1BBCDC;
		} else {
			f = b ^ c ^ d;
			k = 0xCA62C1D6;
		}
		t = rol(a, 5) + f + e + k + w[i];
		e = d;
		d = c;
		c = rol(b, 30);
		b = a;
		a = t;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

/* SHA-1 of n bytes (n < 120: a key and the GUID). */
static void
sha1(const uint8_t *msg, size_t n, uint8_t out[20])
{
	uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476,
	                 0xC3D2E1F0};
	uint8_t blk[128] = {0};
	size_t total = n + 9 <= 64 ? 64 : 128;
	uint64_t bits = (uint64_t)n * 8;

	memcpy(blk, msg, n);
	blk[n] = 0x80;
	for (int i = 0; i < 8; i++)
		blk[total - 1 - i] = (uint8_t)(bits >> (8 * i));
	for (size_t o = 0; o < total; o += 64)
		sha1_block(h, blk + o);
	for (int i = 0; i < 5; i++) {
		out[4 * i] = (uint8_t)(h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(h[i] >> 8);
		out[4 * i + 3] = (uint8_t)h[i];
	}
}

void
wsframe_accept(const char *key, char out[WSFRAME_ACCEPT_LEN])
{
	static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
	uint8_t in[120], d[21] = {0};
	size_t kl = strnlen(key, 64), o = 0;

	memcpy(in, key, kl);
	memcpy(in + kl, guid, sizeof(guid) - 1);
	sha1(in, kl + sizeof(guid) - 1, d);
	for (int i = 0; i < 21; i += 3) {
		uint32_t v = (uint32_t)d[i] << 16 |
		             (uint32_t)(i + 1 < 21 ? d[i + 1] : 0) << 8 |
		             (i + 2 < 21 ? d[i + 2] : 0);
		out[o++] = b64[(v >> 18) & 63];
		out[o++] = b64[(v >> 12) & 63];
		out[o++] = i + 1 < 20 ? b64[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < 20 ? b64[v & 63] : '=';
	}
	out[28] = '\0';
}

bool
wsframe_key_valid(const char *key)
{
	size_t n = strnlen(key, 32);

	if (n != 24 || key[22] != '=' || key[23] != '=')
		return false;
	for (size_t i = 0; i < 22; i++)
		if (strchr(b64, key[i]) == NULL || key[i] == '\0')
			return false;
	return true;
}

void
wsframe_mask(uint8_t *p, size_t n, const uint8_t mask[4], size_t off)
{
	for (size_t i = 0; i < n; i++)
		p[i] ^= mask[(off + i) & 3];
}

static bool
opcode_known(int op)
{
	return op == WS_OP_CONT || op == WS_OP_TEXT || op == WS_OP_BINARY ||
	       op == WS_OP_CLOSE || op == WS_OP_PING || op == WS_OP_PONG;
}

long
wsframe_parse(uint8_t *p, size_t n, size_t max, bool must_mask,
              struct wsframe *f, int *close)
{
	size_t head = 2;
	uint64_t len;
	uint8_t *mask = NULL;

	*close = WS_CLOSE_PROTOCOL;
	if (n < 2)
		return 0;
	f->fin = (p[0] & 0x80) != 0;
	f->opcode = p[0] & 0x0f;
	f->masked = (p[1] & 0x80) != 0;
	if ((p[0] & 0x70) != 0 || !opcode_known(f->opcode) ||
	    f->masked != must_mask)
		return -1;
	len = p[1] & 0x7f;
	if (len == 126) {
		if (n < 4)
			return 0;
		len = (uint64_t)p[2] << 8 | p[3];
		head = 4;
		if (len < 126)
			return -1;
	} else if (len == 127) {
		if (n < 10)
			return 0;
		len = 0;
		for (int i = 0; i < 8; i++)
			len = len << 8 | p[2 + i];
		head = 10;
		if (len < 65536 || (len >> 63) != 0)
			return -1;
	}
	if (f->opcode >= WS_OP_CLOSE && (!f->fin || len > 125))
		return -1;
	if (len > max) {
		*close = WS_CLOSE_TOO_BIG;
		return -1;
	}
	if (f->masked) {
		if (n < head + 4)
			return 0;
		mask = p + head;
		head += 4;
	}
	if (n - head < len)
		return 0;
	if (mask)
		wsframe_mask(p + head, (size_t)len, mask, 0);
	f->payload = p + head;
	f->len = (size_t)len;
	return (long)(head + len);
}

size_t
wsframe_head(uint8_t out[WSFRAME_HEAD_LEN], int opcode, bool fin, uint64_t len,
             const uint8_t *mask)
{
	size_t h = 2;

	out[0] = (uint8_t)((fin ? 0x80 : 0) | (opcode & 0x0f));
	out[1] = mask ? 0x80 : 0;
	if (len < 126) {
		out[1] |= (uint8_t)len;
	} else if (len < 65536) {
		out[1] |= 126;
		out[2] = (uint8_t)(len >> 8);
		out[3] = (uint8_t)len;
		h = 4;
	} else {
		out[1] |= 127;
		for (int i = 0; i < 8; i++)
			out[2 + i] = (uint8_t)(len >> (8 * (7 - i)));
		h = 10;
	}
	if (mask) {
		memcpy(out + h, mask, 4);
		h += 4;
	}
	return h;
}

int
wsframe_msg_add(struct wsframe_msg *m, const struct wsframe *f, int *close)
{
	*close = WS_CLOSE_PROTOCOL;
	if (m->done) {
		m->done = false;
		m->len = 0;
		m->opcode = 0;
	}
	if (f->opcode == WS_OP_CONT) {
		if (m->opcode == 0)
			return -1;
	} else {
		if (m->opcode != 0)
			return -1;
		m->opcode = f->opcode;
		m->len = 0;
	}
	if (f->len > m->cap - m->len) {
		*close = WS_CLOSE_TOO_BIG;
		return -1;
	}
	if (f->len)
		memcpy(m->data + m->len, f->payload, f->len);
	m->len += f->len;
	if (!f->fin)
		return 0;
	m->done = true;
	return 1;
}
