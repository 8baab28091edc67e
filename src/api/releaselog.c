/*
 * GET /v1/apps/{id}/releases/{rid}/log: a release's build log.
 *
 * As text/plain it is the file as it is now (its last
 * RELEASELOG_TEXT_MAX bytes), pulled from the file a step at a time.
 * With `Accept: text/event-stream` or ?follow=1 it is the API's event
 * stream (server.c's resp.sse, as the timeline's followers use it):
 * `event: log` per line (api_loglines, loglines.c), as the build writes
 * them, and
 * `event: end` with the release's JSON once its row is no longer
 * "building"; `id:` is the file offset after the line, so a client that
 * reconnects with Last-Event-ID goes on from there.
 *
 * The build (publish/build.c) writes the file and knows nothing of its
 * readers: a follower reads the file by its own offset, a bounded step at
 * a time, and at its end suspends its connection.  A periodic job
 * (api_releaselog_tick, about a second) resumes every suspended follower
 * to look again: the file, then (at most every RELEASELOG_POLL_MS) the
 * release's row, then a heartbeat when quiet.  So a build never waits on
 * a reader, a slow client costs its connection and one step's events,
 * and the stream ends by the row the build finishes, whatever the file
 * holds.
 *
 * Rejected: a wake from the build's writer (the tasks' evlog does so):
 * the build's log is the output of a container, written by another
 * module's thread that would then name the API's followers; a second
 * of latency on a build log is not worth that coupling.  inotify: one
 * more fd per follower and the row must be polled anyway.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "api/server.h"
#include "lib/clock.h"
#include "publish/publish.h"

#define RL_HEARTBEAT ": keep-alive\n\n" /* as the other streams say */

/* --- the release ------------------------------------------------------- */

static bool
release_active(struct core *c, const struct release *r)
{
	struct publication p;

	return store_publication_get(c->store, r->app_id, &p) == 0 &&
	       strcmp(p.release_id, r->id) == 0;
}

/* --- followers --------------------------------------------------------- */

struct rl_follow {
	struct rl_follow *next; /* followers.list */
	pthread_mutex_t mu;     /* everything below */
	struct core *core;
	char owner[64];
	char release_id[ULID_LEN + 1];
	char path[WORKSPACE_PATH_MAX];
	int fd; /* -1 until the file exists */
	struct api_loglines lines;
	struct buf out; /* events made, not sent yet */
	size_t sent;    /* of out */
	int64_t sent_ms, polled_ms;
	bool last_pass; /* the row is final: read to the end, then end */
	bool finished;  /* `end` is in out: -1 once it is sent */
	bool ended;     /* the daemon stops */
	bool suspended; /* suspend() was called, resume() not yet */
	void (*suspend)(void *);
	void (*resume)(void *);
	void *arg;
};

static struct {
	pthread_mutex_t mu; /* list, n, stopping */
	struct rl_follow *list;
	int n;
	bool stopping;
} followers = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* The next step of the file into f->out: 1 bytes read, 0 at its end. */
static int
follow_file(struct rl_follow *f)
{
	char chunk[RELEASELOG_READ_BYTES];
	ssize_t n;

	if (f->fd < 0) {
		f->fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (f->fd < 0)
			return errno == ENOENT ? 0 : -1;
		/* Resumed after a CR: its LF, if next, ends no new line. */
		if (f->lines.off > 0 &&
		    pread(f->fd, chunk, 1, f->lines.off - 1) == 1)
			f->lines.cr = chunk[0] == '\r';
	}
	n = pread(f->fd, chunk, sizeof(chunk), f->lines.off);
	if (n <= 0)
		return n == 0 || errno == EINTR ? 0 : -1;
	return api_loglines_feed(&f->lines, chunk, (size_t)n, &f->out) < 0 ? -1
	                                                                   : 1;
}

/* The end of the file: the release's row says whether more can come. */
static int
follow_row(struct rl_follow *f)
{
	struct release r;
	struct jv *o;
	int rc;

	if (f->last_pass) {
		if (store_release_get(f->core->store, f->owner, f->release_id,
		                      &r) != 0)
			return -1;
		o = api_release_json(&r, release_active(f->core, &r));
		if (api_loglines_flush(&f->lines, &f->out) < 0 ||
		    buf_append(&f->out, "event: end\ndata: ", 17) < 0 ||
		    jv_dump(o, &f->out) < 0 ||
		    buf_append(&f->out, "\n\n", 2) < 0)
			rc = -1;
		else
			rc = 1;
		jv_free(o);
		f->finished = true;
		return rc;
	}
	if (clock_mono_ms() - f->polled_ms < RELEASELOG_POLL_MS)
		return 0;
	f->polled_ms = clock_mono_ms();
	rc = store_release_get(f->core->store, f->owner, f->release_id, &r);
	if (rc != 0)
		return -1; /* deleted under the reader: the stream ends */
	if (strcmp(r.status, "building") != 0) {
		f->last_pass = true; /* whatever it wrote before, then end */
		return 1;
	}
	return 0;
}

/*
 * Fills f->out: 1 something to send, 0 nothing now, -1 the end.  A line
 * being skipped past its cut makes no events: at most
 * RELEASELOG_SKIP_STEPS steps of it a call, then the tick's next wake.
 */
static int
follow_fill(struct rl_follow *f)
{
	int rc, steps = 0;

	if (f->finished || f->ended)
		return -1;
	buf_reset(&f->out);
	f->sent = 0;
	for (;;) {
		if ((rc = follow_file(f)) < 0)
			return -1;
		if (rc > 0 && f->out.len > 0)
			return 1;
		if (rc > 0 && ++steps == RELEASELOG_SKIP_STEPS)
			return 0;
		if (rc > 0)
			continue; /* bytes, but no whole line yet */
		if ((rc = follow_row(f)) < 0)
			return -1;
		if (f->finished)
			return 1;
		if (rc == 0)
			break;
	}
	if (clock_mono_ms() - f->sent_ms >= RELEASELOG_HEARTBEAT_MS &&
	    buf_append(&f->out, RL_HEARTBEAT, sizeof(RL_HEARTBEAT) - 1) == 0)
		return 1;
	return 0;
}

static ssize_t
follow_read(void *arg, char *buf, size_t max)
{
	struct rl_follow *f = arg;
	ssize_t n = 0;
	int rc = 1;

	pthread_mutex_lock(&f->mu);
	if (f->sent >= f->out.len)
		rc = follow_fill(f);
	if (rc > 0) {
		n = (ssize_t)(f->out.len - f->sent < max ? f->out.len - f->sent
		                                         : max);
		memcpy(buf, f->out.data + f->sent, (size_t)n);
		f->sent += (size_t)n;
		f->sent_ms = clock_mono_ms();
	} else if (rc == 0) {
		f->suspended = true;
		f->suspend(f->arg);
	} else {
		n = -1;
	}
	pthread_mutex_unlock(&f->mu);
	return n;
}

static void
follow_free(void *arg)
{
	struct rl_follow *f = arg;

	pthread_mutex_lock(&followers.mu);
	for (struct rl_follow **p = &followers.list; *p; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			followers.n--;
			break;
		}
	pthread_mutex_unlock(&followers.mu);
	if (f->fd >= 0)
		close(f->fd);
	buf_release(&f->out);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

/* Resumes every suspended follower (end: ending them). */
static void
followers_poke(bool end)
{
	pthread_mutex_lock(&followers.mu);
	followers.stopping |= end;
	for (struct rl_follow *f = followers.list; f; f = f->next) {
		pthread_mutex_lock(&f->mu);
		f->ended |= end;
		if (f->suspended) {
			f->suspended = false;
			f->resume(f->arg);
		}
		pthread_mutex_unlock(&f->mu);
	}
	pthread_mutex_unlock(&followers.mu);
}

void
api_releaselog_tick(void)
{
	followers_poke(false);
}

void
api_releaselog_end_all(void)
{
	followers_poke(true);
}

/* Registers a follower of r from byte off; -1 when too many exist. */
static struct rl_follow *
follow_open(struct req *rq, const struct release *r, const char *path,
            int64_t off)
{
	struct rl_follow *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	pthread_mutex_init(&f->mu, NULL);
	f->core = rq->core;
	snprintf(f->owner, sizeof(f->owner), "%s", rq->owner);
	memcpy(f->release_id, r->id, sizeof(f->release_id));
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->fd = -1;
	f->lines.off = off;
	buf_init(&f->out, RELEASELOG_OUT_MAX);
	f->sent_ms = clock_mono_ms();
	f->suspend = api_stream_suspend;
	f->resume = api_stream_resume;
	f->arg = rq->conn;
	pthread_mutex_lock(&followers.mu);
	if (followers.n >= RELEASELOG_FOLLOWERS_MAX) {
		pthread_mutex_unlock(&followers.mu);
		pthread_mutex_destroy(&f->mu);
		free(f);
		return NULL;
	}
	f->ended = followers.stopping;
	f->next = followers.list;
	followers.list = f;
	followers.n++;
	pthread_mutex_unlock(&followers.mu);
	return f;
}

/* --- text/plain ---------------------------------------------------------- */

struct rl_text {
	int fd;
	off_t off, end;
};

static ssize_t
text_read(void *arg, char *buf, size_t max)
{
	struct rl_text *t = arg;
	ssize_t n;

	if (t->off >= t->end)
		return 0;
	if ((off_t)max > t->end - t->off)
		max = (size_t)(t->end - t->off);
	n = pread(t->fd, buf, max, t->off);
	if (n > 0)
		t->off += n;
	return n < 0 ? -1 : n;
}

static void
text_free(void *arg)
{
	struct rl_text *t = arg;

	close(t->fd);
	free(t);
}

/* The file as it is now, its last RELEASELOG_TEXT_MAX bytes. */
static void
log_text(struct resp *w, const char *path)
{
	struct rl_text *t;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0 && errno == ENOENT) { /* the build has not begun it yet */
		api_reply_bytes(w, 200, "text/plain; charset=utf-8", "", 0);
		return;
	}
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (t = malloc(sizeof(*t))) == NULL) {
		if (fd >= 0)
			close(fd);
		api_fail(w, 500, "internal", "cannot read the build log");
		return;
	}
	t->fd = fd;
	t->end = st.st_size;
	t->off = st.st_size > (off_t)RELEASELOG_TEXT_MAX
	             ? st.st_size - (off_t)RELEASELOG_TEXT_MAX
	             : 0;
	w->status = 200;
	w->content_type = "text/plain; charset=utf-8";
	w->pull =
	    (struct api_pull){.read = text_read, .free = text_free, .arg = t};
}

/* --- the route ------------------------------------------------------------ */

/* Whether the caller asked for the event stream. */
static int
wants_stream(struct req *r, struct resp *w, bool *yes)
{
	const char *accept = api_header(r, "Accept"), *q;
	bool bad = false;

	q = api_query(r, w, "follow", &bad);
	if (bad)
		return -1;
	*yes = (accept && strstr(accept, "text/event-stream")) ||
	       (q && (strcmp(q, "1") == 0 || strcmp(q, "true") == 0));
	return 0;
}

/* Last-Event-ID: a byte offset the stream goes on from; -1 bad. */
static int64_t
resume_offset(struct req *r)
{
	const char *h = api_header(r, "Last-Event-ID");
	char *end;
	long long v;

	if (h == NULL || *h == '\0')
		return 0;
	errno = 0;
	v = strtoll(h, &end, 10);
	return errno || *end || v < 0 || *h < '0' || *h > '9' ? -1 : v;
}

static void
releases_log(struct req *r, struct resp *w)
{
	char path[WORKSPACE_PATH_MAX];
	struct rl_follow *f;
	struct release rel;
	struct app a;
	int64_t off;
	bool stream;
	int rc;

	if (api_load_app(r, w, &a) < 0 || wants_stream(r, w, &stream) < 0)
		return;
	rc = store_release_get(r->core->store, r->owner, r->ids[1], &rel);
	if (rc == STORE_NOT_FOUND || (rc == 0 && strcmp(rel.app_id, a.id))) {
		api_fail(w, 404, "not_found", "no such release of this app");
		return;
	}
	if (rc != 0 ||
	    publish_log_path(r->core, &rel, path, sizeof(path)) < 0) {
		api_fail(w, 500, "internal", "cannot read the release");
		return;
	}
	if (!stream) {
		log_text(w, path);
		return;
	}
	if ((off = resume_offset(r)) < 0) {
		api_fail(w, 400, "invalid_request",
		         "Last-Event-ID must be a byte offset of the log (an "
		         "event's id)");
		return;
	}
	if ((f = follow_open(r, &rel, path, off)) == NULL) {
		api_fail(w, 503, "event_streams_full",
		         "%d build log streams are open; try again later",
		         RELEASELOG_FOLLOWERS_MAX);
		return;
	}
	w->status = 200;
	w->sse = (struct api_sse){follow_read, follow_free, f};
}

/* The routes of this file, in the router's order (routes.c). */
const struct route releaselog_routes[] = {
    {.method = "GET",
     .pattern = "/v1/apps/{id}/releases/{id}/log",
     .fn = releases_log},
    {0},
};
