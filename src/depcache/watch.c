/*
 * The watcher (depcache.h): one thread, a small table of sandboxes
 * whose install may be running.  Once a second it reads each one's
 * DEPCACHE_KEY_FILE (through wsfs: bounded, no link followed, a FIFO
 * refused); the supervisor writes it after a successful install, so the
 * key there is the sign the trees are complete.  Then, unless the
 * cache has the key already, it saves, on this thread, with the table's
 * lock released.  A watch ends at its save, or at its deadline (the
 * install's timeout and a margin: an install that failed never writes
 * the key).
 *
 * Rejected: asking the supervisor (its status answer carries the
 * install's state): one more request per second per sandbox on the
 * control socket for what a file already says.  inotify: the workspace
 * may be replaced wholesale (restore), and a poll of a 64-byte file is
 * cheap.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "depcache/depcache.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/ulid.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"

#define DEPCACHE_WATCH_MARGIN_S 60 /* past the install's timeout */

struct watch {
	char id[ULID_LEN + 1];
	char key[DEPCACHE_KEY_LEN + 1];
	int64_t deadline_ms;
};

struct depcache {
	const struct config *cfg;
	struct dedup *dq;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct watch w[DEPCACHE_WATCH_MAX];
	int n, saving; /* watches; of those taken out, saves under way */
	bool started, stop;
	pthread_t thread;
};

struct depcache *
depcache_new(const struct config *cfg, struct dedup *dq)
{
	struct depcache *dc = calloc(1, sizeof(*dc));

	if (dc == NULL)
		return NULL;
	dc->cfg = cfg;
	dc->dq = dq;
	pthread_mutex_init(&dc->mu, NULL);
	pthread_cond_init(&dc->cv, NULL);
	return dc;
}

void
depcache_free(struct depcache *dc)
{
	if (dc == NULL)
		return;
	depcache_stop(dc);
	pthread_cond_destroy(&dc->cv);
	pthread_mutex_destroy(&dc->mu);
	free(dc);
}

/* Whether the workspace's key file holds key (trailing space aside). */
static bool
installed(const char *data_dir, const char *id, const char *key)
{
	char ws[PATH_MAX];
	struct buf b;
	struct err e;
	bool yes = false;
	int fd;

	workspace_path(data_dir, id, ws, sizeof(ws));
	fd = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (wsfs_read(fd, DEPCACHE_KEY_FILE, 256, &b, &e) == 0) {
		size_t n = b.len;
		while (n > 0 && (b.data[n - 1] == '\n' ||
		                 b.data[n - 1] == ' ' || b.data[n - 1] == '\r'))
			n--;
		yes = n == DEPCACHE_KEY_LEN && memcmp(b.data, key, n) == 0;
	}
	buf_release(&b);
	close(fd);
	return yes;
}

static void
save(const struct depcache *dc, const struct watch *w)
{
	const struct config *cfg = dc->cfg;
	struct depcache_stats st;
	char ws[PATH_MAX];
	int64_t t0 = clock_now_ms();
	int rc;

	workspace_path(cfg->data_dir, w->id, ws, sizeof(ws));
	rc = depcache_save(cfg, dc->dq, ws, w->key, &st);
	if (rc < 0)
		log_warn("depcache: sandbox %s: saving %.12s failed: %s", w->id,
		         w->key, strerror(errno));
	else if (rc == 1)
		log_info("depcache: sandbox %s: saved %.12s (%lld trees, %lld "
		         "files, %lld KiB copied, %lld evicted), %lld ms",
		         w->id, w->key, (long long)st.trees,
		         (long long)st.files, (long long)(st.own_bytes >> 10),
		         (long long)st.evicted,
		         (long long)(clock_now_ms() - t0));
}

/* Takes a watch out when it is still the one seen (same key): true. */
static bool
take(struct depcache *dc, const struct watch *w)
{
	for (int i = 0; i < dc->n; i++)
		if (strcmp(dc->w[i].id, w->id) == 0) {
			if (strcmp(dc->w[i].key, w->key) != 0)
				return false;
			dc->w[i] = dc->w[--dc->n];
			return true;
		}
	return false;
}

/* One look at every watch (a copy of the table: the files are read and
 * the saves made with the lock released).  Called and returns with
 * dc->mu held. */
static void
poll_once(struct depcache *dc)
{
	struct watch *v = malloc(sizeof(dc->w));
	int n = dc->n;

	if (v == NULL)
		return;
	memcpy(v, dc->w, sizeof(*v) * (size_t)n);
	pthread_mutex_unlock(&dc->mu);
	for (int i = 0; i < n; i++) {
		bool done = installed(dc->cfg->data_dir, v[i].id, v[i].key);
		bool gone;
		if (!done && clock_now_ms() <= v[i].deadline_ms)
			continue;
		pthread_mutex_lock(&dc->mu);
		gone = dc->stop || !take(dc, &v[i]);
		if (done && !gone)
			dc->saving++;
		pthread_mutex_unlock(&dc->mu);
		if (done && !gone) {
			save(dc, &v[i]);
			pthread_mutex_lock(&dc->mu);
			dc->saving--;
			pthread_mutex_unlock(&dc->mu);
		}
	}
	free(v);
	pthread_mutex_lock(&dc->mu);
}

static void *
depcache_main(void *arg)
{
	struct depcache *dc = arg;

	pthread_mutex_lock(&dc->mu);
	while (!dc->stop) {
		struct timespec ts;
		if (dc->n == 0) {
			pthread_cond_wait(&dc->cv, &dc->mu);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += DEPCACHE_POLL_MS % 1000 * 1000000L;
		ts.tv_sec += DEPCACHE_POLL_MS / 1000 + ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&dc->cv, &dc->mu, &ts);
		if (!dc->stop)
			poll_once(dc);
	}
	pthread_mutex_unlock(&dc->mu);
	return NULL;
}

int
depcache_start(struct depcache *dc)
{
	if (!dc->cfg->dedup || dc->cfg->depcache_max_mb == 0)
		return 0;
	dc->stop = false;
	if (pthread_create(&dc->thread, NULL, depcache_main, dc) != 0) {
		log_error("depcache: cannot start its thread");
		return -1;
	}
	dc->started = true;
	return 0;
}

void
depcache_stop(struct depcache *dc)
{
	if (dc == NULL || !dc->started)
		return;
	pthread_mutex_lock(&dc->mu);
	dc->stop = true;
	pthread_cond_broadcast(&dc->cv);
	pthread_mutex_unlock(&dc->mu);
	pthread_join(dc->thread, NULL);
	dc->started = false;
	dc->n = 0;
}

void
depcache_watch(struct depcache *dc, const char *sandbox_id, const char *key,
               int64_t timeout_s)
{
	struct watch w = {0};
	int i;

	if (dc == NULL || strlen(sandbox_id) != ULID_LEN ||
	    !depcache_key_ok(key))
		return;
	memcpy(w.id, sandbox_id, ULID_LEN);
	memcpy(w.key, key, DEPCACHE_KEY_LEN);
	w.deadline_ms =
	    clock_now_ms() + (timeout_s + DEPCACHE_WATCH_MARGIN_S) * 1000;
	pthread_mutex_lock(&dc->mu);
	for (i = 0; i < dc->n; i++)
		if (strcmp(dc->w[i].id, sandbox_id) == 0)
			break;
	if (dc->started && !dc->stop && i < DEPCACHE_WATCH_MAX) {
		dc->w[i] = w;
		if (i == dc->n)
			dc->n++;
		pthread_cond_signal(&dc->cv);
	}
	pthread_mutex_unlock(&dc->mu);
}

int
depcache_watching(struct depcache *dc)
{
	int n;

	pthread_mutex_lock(&dc->mu);
	n = dc->n + dc->saving;
	pthread_mutex_unlock(&dc->mu);
	return n;
}
