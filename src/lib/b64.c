/*
 * b64: base64 both ways, strict on input (the text comes from a peer):
 * only the padded standard alphabet, no white space, no stray bits, so
 * one byte string has exactly one text.
 */
#include <stdbool.h>

#include "lib/b64.h"

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void
b64_encode(const void *in, size_t n, char *out)
{
	const unsigned char *p = in;
	size_t i, o = 0;
	unsigned v;

	for (i = 0; i + 2 < n; i += 3) {
		v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
		out[o++] = alphabet[v >> 18];
		out[o++] = alphabet[(v >> 12) & 63];
		out[o++] = alphabet[(v >> 6) & 63];
		out[o++] = alphabet[v & 63];
	}
	if (i < n) {
		v = (unsigned)p[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)p[i + 1] << 8;
		out[o++] = alphabet[v >> 18];
		out[o++] = alphabet[(v >> 12) & 63];
		out[o++] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
		out[o++] = '=';
	}
	out[o] = '\0';
}

static int
sextet(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

long
b64_decode(const char *in, size_t n, unsigned char *out)
{
	size_t o = 0, pad = 0;
	int s[4];

	if (n % 4 != 0)
		return -1;
	if (n && in[n - 1] == '=')
		pad = n >= 2 && in[n - 2] == '=' ? 2 : 1;
	for (size_t i = 0; i < n; i += 4) {
		bool last = i + 4 == n;
		for (int k = 0; k < 4; k++) {
			s[k] = sextet(in[i + k]);
			if (s[k] < 0 && !(last && k >= 4 - (int)pad))
				return -1;
		}
		out[o++] = (unsigned char)(s[0] << 2 | s[1] >> 4);
		if (last && pad == 2) {
			if (s[1] & 15)
				return -1;
			break;
		}
		out[o++] = (unsigned char)((s[1] & 15) << 4 | s[2] >> 2);
		if (last && pad == 1) {
			if (s[2] & 3)
				return -1;
			break;
		}
		out[o++] = (unsigned char)((s[2] & 3) << 6 | s[3]);
	}
	return (long)o;
}
