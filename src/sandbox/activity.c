/*
 * The activity table: id → last use (wall clock), last flush, last start
 * (monotonic).  A fixed array (lib/idtab.h) under one mutex; no
 * entry is ever removed, and when the table is full the entry with the
 * oldest use is reused (its use was flushed or is older than any other,
 * so at worst a sandbox looks idle a little early).  Flushing copies 64
 * entries at a time under the lock and writes them without it, so the
 * edge's loop never waits on SQLite.
 */
#include "sandbox/activity.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/idtab.h"
#include "lib/ulid.h"

struct act_entry {
	char id[ULID_LEN + 1]; /* "" when free */
	int64_t active_ms;     /* wall clock of the last use */
	int64_t flushed_ms;    /* active_ms last written to the store */
	int64_t started_ms;    /* monotonic time of the last start */
};

struct activity {
	pthread_mutex_t mu;
	struct idtab tab; /* over e */
	struct act_entry e[ACTIVITY_SLOTS];
};

/* Of a full table, the entry used longest ago is reused. */
static int64_t
act_keep(const void *entry)
{
	const struct act_entry *e = entry;

	return e->active_ms;
}

/* Called with a->mu held. */
static struct act_entry *
slot(struct activity *a, const char *id, bool create)
{
	return create ? idtab_put(&a->tab, id) : idtab_get(&a->tab, id);
}

struct activity *
activity_new(void)
{
	struct activity *a = calloc(1, sizeof(*a));

	if (a) {
		pthread_mutex_init(&a->mu, NULL);
		idtab_init(&a->tab, a->e, ACTIVITY_SLOTS, sizeof(a->e[0]),
		           act_keep);
	}
	return a;
}

void
activity_free(struct activity *a)
{
	if (a == NULL)
		return;
	pthread_mutex_destroy(&a->mu);
	free(a);
}

void
activity_touch(struct activity *a, const char *id)
{
	struct act_entry *e;

	pthread_mutex_lock(&a->mu);
	if ((e = slot(a, id, true)) != NULL)
		e->active_ms = clock_now_ms();
	pthread_mutex_unlock(&a->mu);
}

void
activity_started(struct activity *a, const char *id)
{
	struct act_entry *e;

	pthread_mutex_lock(&a->mu);
	if ((e = slot(a, id, true)) != NULL)
		e->started_ms = clock_mono_ms();
	pthread_mutex_unlock(&a->mu);
}

int64_t
activity_last_active(struct activity *a, const char *id)
{
	struct act_entry *e;
	int64_t at = 0;

	pthread_mutex_lock(&a->mu);
	if ((e = slot(a, id, false)) != NULL)
		at = e->active_ms / 1000;
	pthread_mutex_unlock(&a->mu);
	return at;
}

int64_t
activity_since_start_ms(struct activity *a, const char *id)
{
	struct act_entry *e;
	int64_t since = -1;

	pthread_mutex_lock(&a->mu);
	if ((e = slot(a, id, false)) != NULL && e->started_ms)
		since = clock_mono_ms() - e->started_ms;
	pthread_mutex_unlock(&a->mu);
	return since;
}

void
activity_flush(struct activity *a, struct store *s)
{
	struct act_entry copy[64];
	size_t n = 0;

	for (size_t i = 0; i < ACTIVITY_SLOTS; i += 64) {
		pthread_mutex_lock(&a->mu);
		n = 0;
		for (size_t j = i; j < i + 64 && j < ACTIVITY_SLOTS; j++) {
			struct act_entry *e = &a->e[j];
			if (e->id[0] && e->active_ms > e->flushed_ms) {
				e->flushed_ms = e->active_ms;
				copy[n++] = *e;
			}
		}
		pthread_mutex_unlock(&a->mu);
		for (size_t k = 0; k < n; k++)
			store_sandbox_touch(s, copy[k].id,
			                    copy[k].active_ms / 1000);
	}
}
