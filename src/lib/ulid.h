/*
 * ULIDs: 26 characters of Crockford base32, a 48-bit millisecond time and
 * 80 random bits.  Ids of every object and of every request.
 */
#ifndef LIB_ULID_H
#define LIB_ULID_H

#include <stdbool.h>

#define ULID_LEN 26

/* Writes a new id and its NUL into out.  Thread-safe. */
void ulid_new(char out[ULID_LEN + 1]);
/*
 * Strict check: exactly 26 Crockford characters (either case, no I L O U),
 * first one 0-7.  On success the canonical upper-case form goes to out
 * (when out is not NULL).
 */
bool ulid_parse(const char *s, char out[ULID_LEN + 1]);

#endif
