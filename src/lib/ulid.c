/*
 * ULID generation and validation.  Randomness comes from getrandom(2);
 * ids made in the same millisecond are not ordered among themselves,
 * which nothing here relies on (lists order by created_at, then id).
 */
#include "lib/ulid.h"

#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static const char crockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

void
ulid_new(char out[ULID_LEN + 1])
{
	unsigned char rnd[10];
	struct timespec ts;
	uint64_t ms;
	size_t got = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	while (got < sizeof(rnd)) {
		ssize_t n = getrandom(rnd + got, sizeof(rnd) - got, 0);
		if (n > 0)
			got += (size_t)n;
	}
	for (int i = 9; i >= 0; i--) {
		out[i] = crockford[ms & 31];
		ms >>= 5;
	}
	/* 80 random bits as 16 characters of 5 bits each. */
	for (int i = 0; i < 16; i++) {
		int bit = i * 5, byte = bit / 8, shift = bit % 8;
		unsigned v = (unsigned)rnd[byte] << 8;
		if (byte + 1 < 10)
			v |= rnd[byte + 1];
		out[10 + i] = crockford[(v >> (11 - shift)) & 31];
	}
	out[ULID_LEN] = '\0';
}

bool
ulid_parse(const char *s, char out[ULID_LEN + 1])
{
	char tmp[ULID_LEN + 1];

	if (s == NULL || strlen(s) != ULID_LEN)
		return false;
	for (int i = 0; i < ULID_LEN; i++) {
		char c = s[i];
		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		if (c == '\0' || strchr(crockford, c) == NULL)
			return false;
		tmp[i] = c;
	}
	if (tmp[0] > '7')
		return false;
	tmp[ULID_LEN] = '\0';
	if (out)
		memcpy(out, tmp, sizeof(tmp));
	return true;
}
