/*
 * idtab: a fixed-size table from a 26-character id (lib/ulid.h) to an
 * entry, open-addressed with linear probing.  The caller owns the
 * entries (an array it sizes, each entry beginning with
 * char id[ULID_LEN + 1], "" when free) and the lock; the table only
 * finds and claims slots.  No entry is ever removed; when the table is
 * full, the entry with the lowest keep() is reused.
 */
#ifndef LIB_IDTAB_H
#define LIB_IDTAB_H

#include <stddef.h>
#include <stdint.h>

#include "lib/ulid.h"

/* keep()'s answer for an entry that must never be reused. */
#define IDTAB_PINNED INT64_MAX

struct idtab {
	char *slots; /* n entries of size bytes */
	size_t n;    /* the table's size, fixed */
	size_t size; /* of one entry */
	/* How much an entry is worth keeping (its last use, say): of a
	 * full table the lowest goes first, the first found of equals. */
	int64_t (*keep)(const void *entry);
};

/* A table over slots (n entries of size bytes, zeroed by the caller). */
void idtab_init(struct idtab *t, void *slots, size_t n, size_t size,
                int64_t (*keep)(const void *entry));
/* id's entry, or NULL. */
void *idtab_get(const struct idtab *t, const char *id);
/*
 * id's entry; a missing one is made, zeroed but for its id, in a free
 * slot or else in place of the entry worth least.  NULL when the table
 * is full of pinned entries.
 */
void *idtab_put(struct idtab *t, const char *id);

#endif
