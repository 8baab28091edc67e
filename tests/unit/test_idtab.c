/* lib/idtab: find, make, and reuse the entry worth least when full. */
#include <stdbool.h>
#include <stdio.h>

#include "lib/idtab.h"
#include "unit.h"

struct ent {
	char id[ULID_LEN + 1];
	int64_t used;
	bool pinned;
};

static int64_t
keep(const void *entry)
{
	const struct ent *e = entry;

	return e->pinned ? IDTAB_PINNED : e->used;
}

/* The n-th of a family of 26-character ids. */
static const char *
id_of(int n, char buf[ULID_LEN + 1])
{
	snprintf(buf, ULID_LEN + 1, "01ARZ3NDEKTSV4RRFFQ69G%04d", n);
	return buf;
}

static void
idtab_finds_what_it_made(void)
{
	struct ent e[8] = {0};
	struct idtab t;
	char a[ULID_LEN + 1], b[ULID_LEN + 1];
	struct ent *x, *y;

	idtab_init(&t, e, 8, sizeof(e[0]), keep);
	CHECK(idtab_get(&t, id_of(1, a)) == NULL);
	x = idtab_put(&t, a);
	CHECK(x != NULL);
	CHECK_STR(x->id, a);
	CHECK(x->used == 0);
	x->used = 42;
	CHECK(idtab_get(&t, a) == x);
	CHECK(idtab_put(&t, a) == x); /* found, not made again */
	CHECK(x->used == 42);
	y = idtab_put(&t, id_of(2, b));
	CHECK(y != NULL && y != x);
	CHECK(idtab_get(&t, b) == y);
	CHECK(idtab_get(&t, id_of(3, b)) == NULL);
}

static void
idtab_full_reuses_the_least(void)
{
	struct ent e[4] = {0};
	struct idtab t;
	char id[ULID_LEN + 1];
	struct ent *least = NULL, *n;

	idtab_init(&t, e, 4, sizeof(e[0]), keep);
	for (int i = 0; i < 4; i++) {
		struct ent *x = idtab_put(&t, id_of(i, id));
		CHECK(x != NULL);
		x->used = 100 - i; /* id 3 is used least recently */
		if (i == 3)
			least = x;
	}
	n = idtab_put(&t, id_of(9, id));
	CHECK(n == least);
	CHECK_STR(n->id, id);
	CHECK(n->used == 0);                        /* zeroed */
	CHECK(idtab_get(&t, id_of(3, id)) == NULL); /* forgotten */
	for (int i = 0; i < 3; i++)
		CHECK(idtab_get(&t, id_of(i, id)) != NULL);
}

static void
idtab_never_reuses_pinned(void)
{
	struct ent e[3] = {0};
	struct idtab t;
	char id[ULID_LEN + 1];
	struct ent *x;

	idtab_init(&t, e, 3, sizeof(e[0]), keep);
	for (int i = 0; i < 3; i++) {
		x = idtab_put(&t, id_of(i, id));
		x->pinned = i != 1;
		x->used = 0;
	}
	x = idtab_put(&t, id_of(7, id)); /* only id 1 may go */
	CHECK(x != NULL);
	CHECK(idtab_get(&t, id_of(1, id)) == NULL);
	x->pinned = true;
	CHECK(idtab_put(&t, id_of(8, id)) == NULL); /* all pinned */
	CHECK(idtab_get(&t, id_of(7, id)) == x);
}

static const struct unit_test tests[] = {
    {"finds what it made", idtab_finds_what_it_made},
    {"full, reuses the entry worth least", idtab_full_reuses_the_least},
    {"never reuses a pinned entry", idtab_never_reuses_pinned},
};

int
main(void)
{
	return UNIT_RUN("idtab", tests);
}
