/*
 * libFuzzer target: ids from request paths.  ulid_parse() must accept
 * exactly the 26-character Crockford ids, and its canonical form must
 * parse to itself.
 */
#include <stdint.h>
#include <string.h>

#include "lib/ulid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[64], canon[ULID_LEN + 1], again[ULID_LEN + 1];

	if (size >= sizeof(s))
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (!ulid_parse(s, canon))
		return 0;
	if (strlen(s) != ULID_LEN || !ulid_parse(canon, again) ||
	    strcmp(canon, again) != 0)
		__builtin_trap();
	return 0;
}
