/*
 * b64: standard base64 (RFC 4648 §4, padded), for bytes carried inside
 * JSON (the node channel's ws_read and ws_write).  Pure; any thread.
 */
#ifndef LIB_B64_H
#define LIB_B64_H

#include <stddef.h>

/* The encoded length of n bytes, without the NUL. */
#define B64_ENC_LEN(n) ((((n) + 2) / 3) * 4)
/* The most bytes n characters can decode to. */
#define B64_DEC_MAX(n) (((n) / 4) * 3)

/* Writes B64_ENC_LEN(n) characters and a NUL to out. */
void b64_encode(const void *in, size_t n, char *out);
/*
 * Decodes n characters of in into out (room for B64_DEC_MAX(n) bytes):
 * the decoded length, or -1 when in is not padded base64 (a length not a
 * multiple of 4, a character outside the alphabet, padding not at the
 * end, non-zero bits left over).
 */
long b64_decode(const char *in, size_t n, unsigned char *out);

#endif
