/*
 * idtab (idtab.h): the id tables of the activity and the previews' wake
 * states, once two copies of the same fourteen lines.  The hash is
 * FNV-1a (lib/hash.h) modulo the size, probing on from there; a probe
 * stops at the first free slot, so with nothing ever removed a lookup
 * never misses an entry.  Rejected: a growing table (a fixed size bounds
 * memory against a flood of made-up ids, and each caller's reuse rule
 * already says what to forget) and tombstones (nothing is removed).
 */
#include "lib/idtab.h"

#include <string.h>

#include "lib/hash.h"

static char *
at(const struct idtab *t, size_t i)
{
	return t->slots + i * t->size;
}

static void *
claim(char *e, size_t size, const char *id)
{
	memset(e, 0, size);
	memcpy(e, id, strnlen(id, ULID_LEN));
	return e;
}

void
idtab_init(struct idtab *t, void *slots, size_t n, size_t size,
           int64_t (*keep)(const void *entry))
{
	t->slots = slots;
	t->n = n;
	t->size = size;
	t->keep = keep;
}

/* id's entry, or the free slot that ends its probe (or NULL), and the
 * entry worth least on the way. */
static char *
probe(const struct idtab *t, const char *id, char **free_slot, char **least)
{
	uint32_t h = hash_fnv1a(id);
	int64_t low = 0;

	*free_slot = *least = NULL;
	for (size_t i = 0; i < t->n; i++) {
		char *e = at(t, (h + i) % t->n);
		int64_t k;
		if (e[0] == '\0') {
			*free_slot = e;
			return NULL;
		}
		if (strcmp(e, id) == 0)
			return e;
		k = t->keep(e);
		if (k != IDTAB_PINNED && (*least == NULL || k < low)) {
			*least = e;
			low = k;
		}
	}
	return NULL;
}

void *
idtab_get(const struct idtab *t, const char *id)
{
	char *free_slot, *least;

	return probe(t, id, &free_slot, &least);
}

void *
idtab_put(struct idtab *t, const char *id)
{
	char *free_slot, *least, *e = probe(t, id, &free_slot, &least);

	if (e)
		return e;
	if (free_slot)
		return claim(free_slot, t->size, id);
	return least ? claim(least, t->size, id) : NULL;
}
