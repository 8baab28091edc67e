/*
 * Task event logs and their subscribers (see evlog.h).
 *
 * A log holds events in their text/event-stream form, "id: N\nevent:
 * T\ndata: <compact JSON>\n\n", so replaying is copying bytes.  JSON
 * escapes newlines inside strings, so an empty line only ever ends an
 * event.  Each event is one write(2) to an O_APPEND file; `committed`
 * (kept under the subscriber's lock) tells readers how far whole events
 * go, so nobody reads an event being written.
 */
#include "task/evlog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/core.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/limits.h"
#include "lib/log.h"
#include "task/internal.h"

#define HEARTBEAT ": keep-alive\n\n"

struct evlog_sub {
	struct evlog_sub *next;
	struct tasks *ts;
	char id[ULID_LEN + 1];
	pthread_mutex_t mu;
	int fd;
	off_t off;       /* next byte to send */
	off_t committed; /* end of whole events readers may send */
	int64_t cur;     /* id of the event at or around off */
	int64_t since;   /* events up to this id are skipped */
	bool mid;        /* off is inside event cur (being sent/skipped) */
	bool prev_nl;    /* the byte before off was '\n' */
	bool finished;   /* nothing will be appended any more */
	bool listed;     /* in ts->subs */
	bool armed;      /* suspended, waiting for resume */
	bool heartbeat;  /* a heartbeat is due */
	int64_t last_send_ms;
	void (*suspend)(void *);
	void (*resume)(void *);
	void *arg;
};

void
evlog_path(const char *data_dir, const char *id, char *out, size_t len)
{
	snprintf(out, len, "%s/tasks/%s.events", data_dir, id);
}

/* The data line of one event's text, as JSON (NULL when unreadable). */
static struct jv *
event_data(const char *ev, size_t len)
{
	const char *p = memmem(ev, len, "\ndata: ", 7);
	const char *end;

	if (p == NULL)
		return NULL;
	p += 7;
	end = memchr(p, '\n', len - (size_t)(p - ev));
	if (end == NULL)
		return NULL;
	return jv_parse(p, (size_t)(end - p), 64, NULL, 0);
}

/*
 * The type line of an outside event.  JSON data holds no raw newline,
 * so the line can only be an event's type.  '\n' is only its first and
 * last byte: after a mismatch a match can only start again at a '\n'.
 */
#define OUTSIDE_LINE "\nevent: " EVLOG_OUTSIDE_TYPE "\n"

static size_t
outside_match(size_t k, char ch)
{
	if (k == sizeof(OUTSIDE_LINE) - 1)
		k = 1; /* its last '\n' may start the next line */
	if (ch == OUTSIDE_LINE[k])
		return k + 1;
	return ch == '\n' ? 1 : 0;
}

static bool
is_outside(const struct evlog *l, int64_t n)
{
	for (unsigned i = 0; i < l->nout; i++)
		if (l->outside[i] == n)
			return true;
	return false;
}

/* While replaying: steps over the outside events at the replay point. */
static void
skip_outside(struct evlog *l)
{
	while (l->n < l->have && is_outside(l, l->n))
		l->n++;
}

int
evlog_open(const char *data_dir, const char *id, struct evlog *l,
           struct jv **last)
{
	char path[WORKSPACE_PATH_MAX], *chunk;
	off_t pos = 0, ev_start = 0, last_start = -1, last_end = 0;
	bool prev_nl = false;
	size_t k = 0;
	ssize_t n;

	memset(l, 0, sizeof(*l));
	if (last)
		*last = NULL;
	evlog_path(data_dir, id, path, sizeof(path));
	l->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
	             0600);
	if (l->fd < 0) {
		log_error("task %s: %s: %s", id, path, strerror(errno));
		return -1;
	}
	chunk = malloc(EVLOG_SCAN_CHUNK);
	if (chunk == NULL) {
		close(l->fd);
		return -1;
	}
	/* Count whole events; remember where the last one starts and
	 * which are outside events. */
	while ((n = pread(l->fd, chunk, EVLOG_SCAN_CHUNK, pos)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			bool nl = chunk[i] == '\n';
			k = outside_match(k, chunk[i]);
			if (k == sizeof(OUTSIDE_LINE) - 1 &&
			    l->nout < EVLOG_OUTSIDE_MAX)
				l->outside[l->nout++] = l->n;
			if (nl && prev_nl) {
				last_start = ev_start;
				last_end = pos + i + 1;
				ev_start = last_end;
				l->n++;
			}
			prev_nl = nl;
		}
		pos += n;
	}
	free(chunk);
	if (last_end < pos && ftruncate(l->fd, last_end) < 0)
		log_warn("task %s: cannot cut a torn event: %s", id,
		         strerror(errno));
	l->committed = last_end;
	l->have = l->n; /* derived events up to have are already here */
	l->n = 0;
	if (last_start >= 0) {
		size_t len = (size_t)(last_end - last_start);
		char *ev = malloc(len + 1);
		if (ev && pread(l->fd, ev, len, last_start) == (ssize_t)len) {
			/* "id: N\nevent: done\n": the type is the 2nd line. */
			l->done =
			    memmem(ev, len, "\nevent: done\n", 13) != NULL;
			if (last)
				*last = event_data(ev, len);
		}
		free(ev);
	}
	return 0;
}

void
evlog_close(struct evlog *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

static void
sub_tell(struct evlog_sub *s, off_t committed, bool finished)
{
	pthread_mutex_lock(&s->mu);
	if (committed > s->committed)
		s->committed = committed;
	s->finished = s->finished || finished;
	if (s->armed) {
		s->armed = false;
		s->resume(s->arg);
	}
	pthread_mutex_unlock(&s->mu);
}

static void
subs_tell(struct tasks *ts, const char *id, off_t committed, bool finished)
{
	pthread_mutex_lock(&ts->mu);
	for (struct evlog_sub *s = ts->subs; s; s = s->next)
		if (strcmp(s->id, id) == 0)
			sub_tell(s, committed, finished);
	pthread_mutex_unlock(&ts->mu);
}

/* Writes event n, one write(2); steals data. */
static int
write_event(struct tasks *ts, const char *id, struct evlog *l, const char *type,
            struct jv *data)
{
	struct buf b;
	ssize_t w;
	int rc = 0;

	buf_init(&b, 0);
	buf_appendf(&b, "id: %lld\nevent: %s\ndata: ", (long long)l->n, type);
	if (data == NULL || jv_dump(data, &b) < 0 || buf_append(&b, "\n\n", 2))
		rc = -1;
	jv_free(data);
	if (rc == 0) {
		w = write(l->fd, b.data, b.len);
		if (w != (ssize_t)b.len) {
			log_error("task %s: event log: %s", id,
			          w < 0 ? strerror(errno) : "short write");
			if (w > 0 && ftruncate(l->fd, l->committed) < 0)
				log_error("task %s: event log: %s", id,
				          strerror(errno));
			rc = -1;
		}
	}
	if (rc < 0) {
		l->failed = true;
	} else {
		l->committed += (off_t)b.len;
		l->n++;
		l->have = l->n;
		l->done = strcmp(type, "done") == 0;
		subs_tell(ts, id, l->committed, l->done);
	}
	buf_release(&b);
	return rc;
}

int
evlog_append(struct tasks *ts, const char *id, struct evlog *l,
             const char *type, struct jv *data)
{
	skip_outside(l);
	if (l->n < l->have) { /* replaying: the file has it already */
		l->n++;
		jv_free(data);
		return 0;
	}
	return write_event(ts, id, l, type, data);
}

int
evlog_append_outside(struct tasks *ts, const char *id, struct evlog *l,
                     struct jv *data)
{
	skip_outside(l);
	if (l->n < l->have)
		return 1;
	if (l->nout >= EVLOG_OUTSIDE_MAX) {
		jv_free(data);
		return 0;
	}
	l->outside[l->nout] = l->n;
	if (write_event(ts, id, l, EVLOG_OUTSIDE_TYPE, data) < 0)
		return -1;
	l->nout++;
	return 0;
}

void
evlog_subs_finish(struct tasks *ts, const char *id)
{
	subs_tell(ts, id, 0, true);
}

void
evlog_subs_heartbeat(struct tasks *ts, int64_t quiet_ms)
{
	int64_t now = clock_mono_ms();

	pthread_mutex_lock(&ts->mu);
	for (struct evlog_sub *s = ts->subs; s; s = s->next) {
		pthread_mutex_lock(&s->mu);
		if (now - s->last_send_ms >= quiet_ms) {
			s->heartbeat = true;
			if (s->armed) {
				s->armed = false;
				s->resume(s->arg);
			}
		}
		pthread_mutex_unlock(&s->mu);
	}
	pthread_mutex_unlock(&ts->mu);
}

void
evlog_subs_end_all(struct tasks *ts)
{
	pthread_mutex_lock(&ts->mu);
	for (struct evlog_sub *s = ts->subs; s; s = s->next)
		sub_tell(s, 0, true);
	pthread_mutex_unlock(&ts->mu);
}

/*
 * Subscribing: the log's committed end comes from the follower when the
 * task is live (it may hold bytes not yet whole), else from the file.
 * The follower is asked through ts->committed (the hook task_init sets
 * to follow_committed): the follower appends to this log, so a direct
 * call would tie the two files into a circle.
 */
int
evlog_sub_open(struct core *c, const char *id, int64_t since,
               void (*suspend)(void *), void (*resume)(void *), void *arg,
               struct evlog_sub **out, struct err *e)
{
	struct tasks *ts = c->tasks;
	struct evlog_sub *s;
	char path[WORKSPACE_PATH_MAX];
	struct stat st;
	off_t committed;

	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return ERR_INTERNAL(e, "out of memory");
	evlog_path(c->cfg->data_dir, id, path, sizeof(path));
	s->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (s->fd < 0 || fstat(s->fd, &st) < 0) {
		if (s->fd >= 0)
			close(s->fd);
		free(s);
		return ERR_NOTFOUND(e, "this task has no event log");
	}
	pthread_mutex_init(&s->mu, NULL);
	s->ts = ts;
	snprintf(s->id, sizeof(s->id), "%s", id);
	s->since = since;
	s->suspend = suspend;
	s->resume = resume;
	s->arg = arg;
	s->last_send_ms = clock_mono_ms();
	pthread_mutex_lock(&ts->mu);
	if (ts->committed && ts->committed(ts, id, &committed) == 0) {
		s->committed = committed;
		s->listed = true;
		s->next = ts->subs;
		ts->subs = s;
	} else {
		s->committed = st.st_size; /* finished: whole events only */
		s->finished = true;
	}
	pthread_mutex_unlock(&ts->mu);
	*out = s;
	return 0;
}

/* Index just past the first "\n\n" boundary in b[0..n), or 0. */
static size_t
boundary(struct evlog_sub *s, const char *b, size_t n)
{
	bool prev = s->prev_nl;

	for (size_t i = 0; i < n; i++) {
		bool nl = b[i] == '\n';
		if (nl && prev)
			return i + 1;
		prev = nl;
	}
	return 0;
}

static void
consume(struct evlog_sub *s, const char *b, size_t n, bool whole_event)
{
	s->off += (off_t)n;
	if (whole_event) {
		s->cur++;
		s->mid = false;
		s->prev_nl = false;
	} else {
		s->mid = true;
		s->prev_nl = n > 0 ? b[n - 1] == '\n' : s->prev_nl;
	}
}

ssize_t
evlog_sub_read(struct evlog_sub *s, char *buf, size_t max)
{
	ssize_t rc = -1;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		off_t avail = s->committed - s->off;
		size_t want, end;
		ssize_t n;

		if (avail <= 0) {
			if (s->finished)
				break; /* rc -1: the end */
			if (s->heartbeat && !s->mid &&
			    max >= sizeof(HEARTBEAT) - 1) {
				s->heartbeat = false;
				s->last_send_ms = clock_mono_ms();
				memcpy(buf, HEARTBEAT, sizeof(HEARTBEAT) - 1);
				rc = (ssize_t)(sizeof(HEARTBEAT) - 1);
				break;
			}
			s->armed = true;
			s->suspend(s->arg);
			rc = 0;
			break;
		}
		want = (size_t)avail < max ? (size_t)avail : max;
		n = pread(s->fd, buf, want, s->off);
		if (n <= 0)
			break;
		end = boundary(s, buf, (size_t)n);
		if (s->cur <= s->since) { /* skipped: already seen */
			consume(s, buf, end ? end : (size_t)n, end != 0);
			continue;
		}
		consume(s, buf, end ? end : (size_t)n, end != 0);
		s->heartbeat = false;
		s->last_send_ms = clock_mono_ms();
		rc = (ssize_t)(end ? end : (size_t)n);
		break;
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

void
evlog_sub_close(struct evlog_sub *s)
{
	struct tasks *ts = s->ts;

	pthread_mutex_lock(&ts->mu);
	if (s->listed)
		for (struct evlog_sub **p = &ts->subs; *p; p = &(*p)->next)
			if (*p == s) {
				*p = s->next;
				break;
			}
	pthread_mutex_unlock(&ts->mu);
	close(s->fd);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
