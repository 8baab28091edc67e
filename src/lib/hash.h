/*
 * hash: FNV-1a over a string, for lock stripes, open-addressed tables
 * and stable short names.  Not for anything an attacker may steer into
 * collisions that matter (every table using it has a fixed size and a
 * bounded probe).
 */
#ifndef LIB_HASH_H
#define LIB_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t
hash_fnv1a_bytes(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static inline uint32_t
hash_fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

#endif
