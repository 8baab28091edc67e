/*
 * The activity timeline: events written to the store (store/events.c)
 * and an in-memory fan-out that wakes each app's followers.
 *
 * An event's id is a ULID made strictly greater than the last one this
 * process made (the random part of two ULIDs of one millisecond would
 * order them at random), so the id order is the order of recording and
 * a cursor never skips an event written in the same millisecond.
 *
 * A follower holds a cursor (the last id sent), a flag that more may be
 * there, and the bytes of the events it read but has not sent yet; the
 * writer only sets the flag and resumes it, under the follower's own
 * lock, so a slow client never blocks a writer and costs no memory per
 * event.  Reading from the store is the replay after Last-Event-ID as
 * well as the live path.
 *
 * Rejected: a ring of event copies per follower, which needs an
 * overflow path back to the store anyway, and a bound that drops events
 * for a client that reconnects a little late.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/ulid.h"
#include "timeline/timeline.h"

#define TL_SUB_BUF_MAX (TL_SUB_BATCH * 8192) /* bytes a follower holds */
#define TL_HEARTBEAT   ": keep-alive\n\n"    /* as the tasks' streams say */

static _Thread_local char actor_tl[STORE_EVENT_ACTOR_MAX + 1];

struct tl_sub {
	struct timeline *tl;
	struct tl_sub *next; /* tl->subs */
	pthread_mutex_t mu;
	char app_id[ULID_LEN + 1];
	char last[ULID_LEN + 1]; /* the last event read, "" none yet */
	char type[STORE_EVENT_TYPE_MAX + 1];
	bool more;      /* events may be there after last */
	bool beat;      /* a heartbeat is due */
	bool ended;     /* the timeline is stopping */
	bool suspended; /* suspend() was called, resume() not yet */
	int64_t sent_ms;
	struct buf out; /* read, not sent yet */
	size_t off;     /* of out, sent */
	void (*suspend)(void *);
	void (*resume)(void *);
	void *arg;
};

struct timeline {
	struct store *store;
	pthread_mutex_t mu; /* last, subs, nsubs */
	char last[ULID_LEN + 1];
	struct tl_sub *subs;
	int nsubs;
	bool stopping; /* timeline_subs_end_all ran: new followers end too */
};

struct timeline *
timeline_new(struct store *store)
{
	struct timeline *tl = calloc(1, sizeof(*tl));

	if (tl == NULL)
		return NULL;
	tl->store = store;
	pthread_mutex_init(&tl->mu, NULL);
	return tl;
}

void
timeline_free(struct timeline *tl)
{
	if (tl == NULL)
		return;
	pthread_mutex_destroy(&tl->mu);
	free(tl);
}

void
tl_set_actor(const char *actor)
{
	snprintf(actor_tl, sizeof(actor_tl), "%s",
	         actor && *actor ? actor : "");
}

const char *
tl_payload(struct jv *v, char *out, size_t len)
{
	struct buf b;
	const char *ret = NULL;

	if (v == NULL)
		return NULL;
	buf_init(&b, STORE_EVENT_PAYLOAD_MAX);
	if (jv_dump(v, &b) == 0 && b.data && b.len < len) {
		memcpy(out, b.data, b.len + 1);
		ret = out;
	}
	buf_release(&b);
	jv_free(v);
	return ret;
}

const char *
tl_actor(void)
{
	return actor_tl[0] ? actor_tl : "system";
}

/* Adds one to a ULID in Crockford base32, in place. */
static void
ulid_next(char id[ULID_LEN + 1])
{
	static const char digits[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

	for (int i = ULID_LEN - 1; i >= 0; i--) {
		const char *p = strchr(digits, id[i]);
		size_t v = p ? (size_t)(p - digits) : 0;

		if (v < 31) {
			id[i] = digits[v + 1];
			return;
		}
		id[i] = '0';
	}
}

/* A new id, greater than every one made before; tl->mu held. */
static void
next_id(struct timeline *tl, char out[ULID_LEN + 1])
{
	ulid_new(out);
	if (strcmp(out, tl->last) <= 0) {
		memcpy(out, tl->last, sizeof(tl->last));
		ulid_next(out);
	}
	memcpy(tl->last, out, sizeof(tl->last));
}

static void
copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* The payload if it is one JSON object that fits, else "". */
static void
copy_payload(struct app_event *row, const char *json, const char *type)
{
	struct jv *v;
	char err[64];
	size_t n;

	if (json == NULL)
		return;
	n = strlen(json);
	v = n <= STORE_EVENT_PAYLOAD_MAX
	        ? jv_parse(json, n, 4, err, sizeof(err))
	        : NULL;
	if (v != NULL && jv_type(v) == JV_OBJECT)
		memcpy(row->payload, json, n + 1);
	else
		log_warn("timeline: the payload of a %s event is dropped",
		         type);
	jv_free(v);
}

static void
wake_subs(struct timeline *tl, const char *app_id)
{
	pthread_mutex_lock(&tl->mu);
	for (struct tl_sub *s = tl->subs; s; s = s->next) {
		if (strcmp(s->app_id, app_id) != 0)
			continue;
		pthread_mutex_lock(&s->mu);
		s->more = true;
		if (s->suspended) {
			s->suspended = false;
			s->resume(s->arg);
		}
		pthread_mutex_unlock(&s->mu);
	}
	pthread_mutex_unlock(&tl->mu);
}

void
timeline_record(struct timeline *tl, const struct tl_event *ev)
{
	struct app_event *row;
	int rc;

	if (tl == NULL || ev == NULL || ev->app_id == NULL || !ev->app_id[0] ||
	    ev->type == NULL)
		return;
	row = calloc(1, sizeof(*row));
	if (row == NULL)
		return;
	copy(row->app_id, sizeof(row->app_id), ev->app_id);
	copy(row->type, sizeof(row->type), ev->type);
	copy(row->severity, sizeof(row->severity),
	     ev->severity ? ev->severity : "info");
	copy(row->message, sizeof(row->message), ev->message);
	copy(row->sandbox_id, sizeof(row->sandbox_id), ev->sandbox_id);
	copy(row->task_id, sizeof(row->task_id), ev->task_id);
	copy(row->snapshot_id, sizeof(row->snapshot_id), ev->snapshot_id);
	copy(row->actor, sizeof(row->actor), tl_actor());
	copy_payload(row, ev->payload_json, row->type);
	row->created_at = clock_now();
	/* The id and the insert under one lock: ids reach the table in
	 * their order, so a follower's cursor never passes an event that
	 * is still being written. */
	pthread_mutex_lock(&tl->mu);
	next_id(tl, row->id);
	rc = store_event_insert(tl->store, row);
	pthread_mutex_unlock(&tl->mu);
	if (rc == 0)
		wake_subs(tl, row->app_id);
	else if (rc != STORE_NOT_FOUND)
		log_warn("timeline: a %s event of app %s is dropped", row->type,
		         row->app_id);
	free(row);
}

static const struct {
	const char *type, *severity;
} severities[] = {
    {"sandbox.oom_killed", "error"},
    {"task.failed", "error"},
    {"app.budget_reached", "warning"},
    {"publish.failed", "error"},
};

void
timeline_note(struct timeline *tl, const struct tl_event *ev, const char *fmt,
              ...)
{
	struct tl_event e;
	va_list ap;

	if (tl == NULL || ev == NULL || ev->type == NULL)
		return;
	e = *ev;
	va_start(ap, fmt);
	vsnprintf(e.message, sizeof(e.message), fmt, ap);
	va_end(ap);
	for (size_t i = 0;
	     !e.severity && i < sizeof(severities) / sizeof(severities[0]); i++)
		if (strcmp(severities[i].type, e.type) == 0)
			e.severity = severities[i].severity;
	timeline_record(tl, &e);
}

static void
set_opt(struct jv *o, const char *key, const char *s)
{
	jv_set(o, key, s[0] ? jv_new_str(s) : jv_new_null());
}

struct jv *
timeline_event_json(const struct app_event *ev)
{
	struct jv *o = jv_obj(), *p = NULL;
	char t[CLOCK_RFC3339_LEN], err[64];

	if (o == NULL)
		return NULL;
	jv_set_str(o, "id", ev->id);
	jv_set_str(o, "type", ev->type);
	jv_set_str(o, "severity", ev->severity);
	jv_set_str(o, "message", ev->message);
	jv_set_str(o, "app_id", ev->app_id);
	set_opt(o, "sandbox_id", ev->sandbox_id);
	set_opt(o, "task_id", ev->task_id);
	set_opt(o, "snapshot_id", ev->snapshot_id);
	jv_set_str(o, "actor", ev->actor);
	if (ev->payload[0])
		p = jv_parse(ev->payload, strlen(ev->payload), 4, err,
		             sizeof(err));
	jv_set(o, "payload", p ? p : jv_new_null());
	clock_rfc3339(ev->created_at, t);
	jv_set_str(o, "created_at", t);
	return o;
}

int64_t
timeline_prune(struct timeline *tl, int64_t days, int64_t max_per_app)
{
	int64_t n = 0;

	if (tl == NULL)
		return 0;
	if (store_event_prune(tl->store,
	                      days > 0 ? clock_now() - days * 86400 : 0,
	                      max_per_app, &n) < 0)
		return -1;
	if (n > 0)
		log_info("timeline: %lld old events deleted", (long long)n);
	return n;
}

int
timeline_sub_open(struct timeline *tl, const char *app_id, const char *after,
                  const char *type_prefix, void (*suspend)(void *),
                  void (*resume)(void *), void *arg, struct tl_sub **out)
{
	struct tl_sub *s;

	*out = NULL;
	if (tl == NULL || (s = calloc(1, sizeof(*s))) == NULL)
		return -1;
	s->tl = tl;
	pthread_mutex_init(&s->mu, NULL);
	copy(s->app_id, sizeof(s->app_id), app_id);
	copy(s->type, sizeof(s->type), type_prefix);
	buf_init(&s->out, TL_SUB_BUF_MAX);
	s->suspend = suspend;
	s->resume = resume;
	s->arg = arg;
	s->sent_ms = clock_mono_ms();
	pthread_mutex_lock(&tl->mu);
	if (tl->nsubs >= TL_SUBS_MAX) {
		pthread_mutex_unlock(&tl->mu);
		pthread_mutex_destroy(&s->mu);
		free(s);
		return -1;
	}
	/* Without a cursor the follower starts at an id of now: every
	 * event recorded later has a greater one (next_id). */
	if (after)
		copy(s->last, sizeof(s->last), after);
	else
		next_id(tl, s->last);
	s->more = after != NULL;
	s->ended = tl->stopping;
	s->next = tl->subs;
	tl->subs = s;
	tl->nsubs++;
	pthread_mutex_unlock(&tl->mu);
	*out = s;
	return 0;
}

struct fill {
	struct tl_sub *s;
	struct buf *b;
	int n;
	bool full; /* stopped before the batch's end */
};

static int
fill_one(const struct app_event *ev, void *arg)
{
	struct fill *f = arg;
	struct jv *o = timeline_event_json(ev);
	struct buf data;
	int rc = -1;

	buf_init(&data, 8192);
	if (o && jv_dump(o, &data) == 0)
		rc = buf_appendf(f->b, "event: app_event\nid: %s\ndata: %s\n\n",
		                 ev->id, data.data);
	jv_free(o);
	buf_release(&data);
	if (rc < 0) {
		f->full = true; /* the rest waits for the next read */
		return 1;
	}
	memcpy(f->s->last, ev->id, sizeof(f->s->last));
	f->n++;
	return 0;
}

/*
 * Reads the next batch after s->last into s->out (the lock not held: the
 * store is slow next to a writer's wake).  The number of events.
 */
static int
sub_fill(struct tl_sub *s, const char *last)
{
	struct buf b;
	struct fill f = {s, &b, 0, false};
	char after[ULID_LEN + 1];

	memcpy(after, last, sizeof(after));
	buf_init(&b, TL_SUB_BUF_MAX);
	if (store_event_list(s->tl->store, s->app_id, NULL,
	                     after[0] ? after : "0", s->type, TL_SUB_BATCH,
	                     fill_one, &f) < 0) {
		buf_release(&b);
		return -1;
	}
	pthread_mutex_lock(&s->mu);
	buf_release(&s->out);
	s->out = b;
	s->off = 0;
	if (f.n == TL_SUB_BATCH || f.full)
		s->more = true;
	pthread_mutex_unlock(&s->mu);
	return f.n;
}

/* Copies what is held, or a heartbeat; 0 when there is neither. */
static ssize_t
sub_take(struct tl_sub *s, char *buf, size_t max)
{
	size_t n;

	if (s->off < s->out.len) {
		n = s->out.len - s->off;
		n = n < max ? n : max;
		memcpy(buf, s->out.data + s->off, n);
		s->off += n;
		s->sent_ms = clock_mono_ms();
		return (ssize_t)n;
	}
	if (s->beat && max >= sizeof(TL_HEARTBEAT) - 1) {
		s->beat = false;
		s->sent_ms = clock_mono_ms();
		memcpy(buf, TL_HEARTBEAT, sizeof(TL_HEARTBEAT) - 1);
		return (ssize_t)(sizeof(TL_HEARTBEAT) - 1);
	}
	return 0;
}

ssize_t
timeline_sub_read(struct tl_sub *s, char *buf, size_t max)
{
	char last[ULID_LEN + 1];
	ssize_t n;

	for (;;) {
		pthread_mutex_lock(&s->mu);
		if (s->ended) {
			pthread_mutex_unlock(&s->mu);
			return -1;
		}
		n = sub_take(s, buf, max);
		if (n > 0 || !s->more) {
			if (n == 0) {
				s->suspended = true;
				s->suspend(s->arg);
			}
			pthread_mutex_unlock(&s->mu);
			return n;
		}
		s->more = false;
		memcpy(last, s->last, sizeof(last));
		pthread_mutex_unlock(&s->mu);
		if (sub_fill(s, last) < 0)
			return -1;
	}
}

void
timeline_sub_close(struct tl_sub *s)
{
	struct timeline *tl;

	if (s == NULL)
		return;
	tl = s->tl;
	pthread_mutex_lock(&tl->mu);
	for (struct tl_sub **p = &tl->subs; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			tl->nsubs--;
			break;
		}
	pthread_mutex_unlock(&tl->mu);
	buf_release(&s->out);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* Sets beat (quiet_ms >= 0: when quiet that long) or ended, and
 * resumes. */
static void
subs_poke(struct timeline *tl, int64_t quiet_ms, bool end)
{
	int64_t now = clock_mono_ms();

	if (tl == NULL)
		return;
	pthread_mutex_lock(&tl->mu);
	tl->stopping |= end;
	for (struct tl_sub *s = tl->subs; s; s = s->next) {
		pthread_mutex_lock(&s->mu);
		if (end)
			s->ended = true;
		else if (now - s->sent_ms >= quiet_ms)
			s->beat = true;
		if ((s->ended || s->beat) && s->suspended) {
			s->suspended = false;
			s->resume(s->arg);
		}
		pthread_mutex_unlock(&s->mu);
	}
	pthread_mutex_unlock(&tl->mu);
}

void
timeline_subs_heartbeat(struct timeline *tl, int64_t quiet_ms)
{
	subs_poke(tl, quiet_ms, false);
}

void
timeline_subs_end_all(struct timeline *tl)
{
	subs_poke(tl, 0, true);
}
