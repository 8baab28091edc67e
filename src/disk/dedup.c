/*
 * Dependencies stored once (dedup.h).
 *
 * The workspace is written by the sandbox, so it is hostile while we
 * walk it: every directory is opened relative to its parent with
 * O_NOFOLLOW, nothing crosses into another filesystem, and a file is
 * read through the descriptor we opened and checked.  The content we
 * hash is the content we store: a new entry is copied from that
 * descriptor into <data>/store/.tmp (root's, 0700) while it is hashed a
 * second time, and kept only when both hashes agree.  The file is held
 * under a read lease while it is read and replaced (dedup_one), so a
 * file some process has open for writing is left alone, and one opened
 * for writing meanwhile is put back.  Passes run after a task ends and
 * after first boot, when the agent's installs are over, not during one.
 *
 * Rejected: making the workspace's own inode the store entry (chown to
 * root in place): a process of the sandbox may hold it open for
 * writing and change it after it became shared.  Overlay or reflink
 * copy-on-write: needs a filesystem (btrfs, xfs with reflink) or a
 * mount per sandbox that the data directory's ext4 does not give.
 */
#include "disk/dedup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "lib/ulid.h"
#include "vault/vault.h"
#include "ws/usage.h"
#include "ws/workspace.h"

#define DEDUP_DEPTH   64    /* directories open at once */
#define DEDUP_TMP_AGE 3600  /* seconds before gc takes a store temporary */
#define DEDUP_CHUNK   65536 /* bytes read at a time while hashing */

enum dedup_dir
dedup_dir_kind(const char *name, bool in_deps)
{
	/* node_modules/.vite is shared: Vite writes a new optimized-deps
	 * directory and renames it over the old one, never a file in place,
	 * and apps with the same dependencies get the same bytes.  .cache
	 * (babel, eslint and the like) is rewritten in place: never. */
	if (strcmp(name, ".git") == 0 || strcmp(name, ".sandboxd") == 0 ||
	    strcmp(name, ".cache") == 0)
		return DEDUP_DIR_SKIP;
	if (in_deps || strcmp(name, "node_modules") == 0 ||
	    strcmp(name, "site-packages") == 0 ||
	    strcmp(name, "dist-packages") == 0)
		return DEDUP_DIR_DEPS;
	return DEDUP_DIR_PLAIN;
}

bool
dedup_file_wanted(const char *name, int64_t size)
{
	/* Dot files are the tools' own state (npm's .package-lock.json,
	 * written in place): they stay the sandbox's. */
	if (name[0] == '.' || size < DEDUP_MIN_BYTES || size > DEDUP_MAX_BYTES)
		return false;
	return strncmp(name, DEDUP_TMP_PREFIX, strlen(DEDUP_TMP_PREFIX)) != 0;
}

void
dedup_store_name(const char *hex, unsigned mode, char out[80])
{
	snprintf(out, 80, "%.64s%s", hex, (mode & 0111) ? "x" : "");
}

int
dedup_store_init(const char *data_dir)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/store", data_dir);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "%s/store/.tmp", data_dir);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

struct pass {
	int storefd, tmpfd;
	struct ws_inoset have; /* the store's inodes at the start */
	struct dedup_stats *st;
	int64_t files;
	unsigned seq;
	bool no_lease; /* said once: the filesystem grants no leases */
};

/* Hashes fd from its start; optionally copies it to out.  -1 on error. */
static int
hash_fd(int fd, int out, char hex[VAULT_HASH_HEX + 1], int64_t *bytes)
{
	struct vault_sha256 *h;
	/*
	 * On the heap, not thread-local: a 64 KiB __thread array is zeroed
	 * into every thread's stack at its creation, 1.4 MiB resident over
	 * the daemon's ~22 threads for the one thread that hashes.
	 */
	unsigned char *chunk = malloc(DEDUP_CHUNK);
	int64_t total = 0;
	ssize_t n;

	if (chunk == NULL)
		return -1;
	h = vault_sha256_new();
	if (h == NULL) {
		free(chunk);
		return -1;
	}
	if (lseek(fd, 0, SEEK_SET) < 0)
		n = -1;
	else
		while ((n = read(fd, chunk, DEDUP_CHUNK)) > 0 ||
		       (n < 0 && errno == EINTR)) {
			if (n < 0)
				continue;
			vault_sha256_update(h, chunk, (size_t)n);
			total += n;
			if (out >= 0 && write(out, chunk, (size_t)n) != n) {
				n = -1;
				break;
			}
		}
	vault_sha256_end(h, hex);
	free(chunk);
	*bytes = total;
	return n < 0 ? -1 : 0;
}

static bool
same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev &&
	       a->st_size == b->st_size &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	       a->st_ctim.tv_nsec == b->st_ctim.tv_nsec &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Makes store entry sname from fd, whose content hashed to hex. */
static int
store_add(struct pass *p, int fd, const char *hex, const char *sname,
          mode_t mode)
{
	char tname[64], hex2[VAULT_HASH_HEX + 1];
	int64_t bytes;
	int out, rc = -1;

	snprintf(tname, sizeof(tname), "%d-%u-%lld", (int)getpid(), p->seq++,
	         (long long)clock_now_ms());
	out =
	    openat(p->tmpfd, tname,
	           O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return -1;
	if (hash_fd(fd, out, hex2, &bytes) == 0 && strcmp(hex, hex2) == 0 &&
	    fchmod(out, (mode & 0111) ? 0555 : 0444) == 0 &&
	    fdatasync(out) == 0 &&
	    (linkat(p->tmpfd, tname, p->storefd, sname, 0) == 0 ||
	     errno == EEXIST))
		rc = 0;
	close(out);
	unlinkat(p->tmpfd, tname, 0);
	if (rc == 0)
		p->st->added++;
	return rc;
}

/*
 * Replaces dfd/name (which st describes) by a link of the store.  The
 * read lease is what makes it safe: the kernel grants it only while no
 * process has the file open for writing, and breaks it as soon as one
 * opens or truncates it, so a write can neither be under way while the
 * file is read nor begin unseen before the link replaces it.  A lease
 * broken by the time the link is in place puts the file back (its
 * opener, held by the kernel until we let go, then writes to it).
 */
static void
dedup_one(struct pass *p, int dfd, const char *name, const struct stat *st)
{
	char hex[VAULT_HASH_HEX + 1], sname[80], tmp[64], aside[64];
	struct stat a, b, e;
	int64_t bytes;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		goto skip;
	if (fcntl(fd, F_SETLEASE, F_RDLCK) < 0) {
		if (errno != EAGAIN && !p->no_lease) {
			log_warn("dedup: no file leases here (%s); nothing is "
			         "shared",
			         strerror(errno));
			p->no_lease = true;
		}
		goto skip_fd;
	}
	if (fstat(fd, &a) < 0 || !S_ISREG(a.st_mode) ||
	    a.st_ino != st->st_ino || hash_fd(fd, -1, hex, &bytes) < 0 ||
	    fstat(fd, &b) < 0 || !same_file(&a, &b) || bytes != a.st_size)
		goto skip_fd;
	dedup_store_name(hex, a.st_mode, sname);
	if (fstatat(p->storefd, sname, &e, AT_SYMLINK_NOFOLLOW) < 0 &&
	    (errno != ENOENT || store_add(p, fd, hex, sname, a.st_mode) < 0))
		goto skip_fd;
	snprintf(tmp, sizeof(tmp), DEDUP_TMP_PREFIX "%d-%u", (int)getpid(),
	         p->seq++);
	snprintf(aside, sizeof(aside), DEDUP_TMP_PREFIX "%d-%u", (int)getpid(),
	         p->seq++);
	if (linkat(p->storefd, sname, dfd, tmp, 0) < 0)
		goto skip_fd; /* EXDEV: the store is on another filesystem */
	/* The link moves ctime: the name must be our inode as it is now. */
	if (linkat(fd, "", dfd, aside, AT_EMPTY_PATH) < 0 ||
	    fstat(fd, &a) < 0) {
		unlinkat(dfd, tmp, 0);
		unlinkat(dfd, aside, 0);
		goto skip_fd;
	}
	if (fstatat(dfd, name, &b, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !same_file(&a, &b) || renameat(dfd, tmp, dfd, name) < 0) {
		unlinkat(dfd, tmp, 0);
		unlinkat(dfd, aside, 0);
		goto skip_fd;
	}
	if (fcntl(fd, F_GETLEASE) != F_RDLCK) {
		renameat(dfd, aside, dfd, name); /* somebody is writing it */
		p->st->raced++;
		goto skip_fd;
	}
	unlinkat(dfd, aside, 0);
	close(fd);
	p->st->linked++;
	p->st->bytes += bytes;
	return;
skip_fd:
	close(fd);
skip:
	p->st->skipped++;
}

/* dfd is owned here. */
static void
walk(struct pass *p, int dfd, dev_t dev, bool in_deps, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (d == NULL) {
		close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		enum dedup_dir kind;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (p->files >= DEDUP_MAX_FILES) {
			p->st->partial = true;
			break;
		}
		if (strncmp(de->d_name, DEDUP_TMP_PREFIX,
		            strlen(DEDUP_TMP_PREFIX)) == 0) {
			/* A pass that crashed between link and rename. */
			if (unlinkat(dirfd(d), de->d_name, 0) == 0)
				p->st->cleaned++;
			continue;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) <
		        0 ||
		    st.st_dev != dev)
			continue;
		if (S_ISDIR(st.st_mode)) {
			kind = dedup_dir_kind(de->d_name, in_deps);
			if (kind == DEDUP_DIR_SKIP)
				continue;
			if (depth >= DEDUP_DEPTH) {
				p->st->partial = true;
				continue;
			}
			int sub = openat(dirfd(d), de->d_name,
			                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			                     O_CLOEXEC | O_NONBLOCK);
			if (sub >= 0)
				walk(p, sub, dev, kind == DEDUP_DIR_DEPS,
				     depth + 1);
			continue;
		}
		if (!in_deps || !S_ISREG(st.st_mode) ||
		    !dedup_file_wanted(de->d_name, st.st_size))
			continue;
		p->files++;
		if (ws_inoset_has(&p->have, st.st_dev, st.st_ino))
			continue; /* already a link of the store */
		dedup_one(p, dirfd(d), de->d_name, &st);
	}
	closedir(d);
}

int
dedup_tree(const char *data_dir, const char *ws, struct dedup_stats *st)
{
	struct pass p = {.st = st, .storefd = -1, .tmpfd = -1};
	char path[PATH_MAX];
	struct stat wst;
	int fd, rc = -1;

	*st = (struct dedup_stats){0};
	if (dedup_store_init(data_dir) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/store", data_dir);
	p.storefd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/store/.tmp", data_dir);
	p.tmpfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	fd = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (p.storefd < 0 || p.tmpfd < 0 || fd < 0 || fstat(fd, &wst) < 0) {
		if (fd >= 0)
			close(fd);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/store", data_dir);
	ws_inoset_load(path, &p.have);
	walk(&p, fd, wst.st_dev, false, 0);
	rc = 0;
out:
	ws_inoset_release(&p.have);
	if (p.storefd >= 0)
		close(p.storefd);
	if (p.tmpfd >= 0)
		close(p.tmpfd);
	return rc;
}

/* --- the thread ---------------------------------------------------------- */

/* The queue and its thread; one per daemon, made by serve(). */
struct dedup {
	const struct config *cfg;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char q[DEDUP_QUEUE][ULID_LEN + 1];
	size_t head, n;
	bool busy, started, stop;
	pthread_t thread;
};

struct dedup *
dedup_new(const struct config *cfg)
{
	struct dedup *dq = calloc(1, sizeof(*dq));

	if (dq == NULL)
		return NULL;
	dq->cfg = cfg;
	pthread_mutex_init(&dq->mu, NULL);
	pthread_cond_init(&dq->cv, NULL);
	return dq;
}

void
dedup_free(struct dedup *dq)
{
	if (dq == NULL)
		return;
	dedup_stop(dq);
	pthread_cond_destroy(&dq->cv);
	pthread_mutex_destroy(&dq->mu);
	free(dq);
}

static void *
dedup_main(void *arg)
{
	struct dedup *dq = arg;
	const char *data_dir = dq->cfg->data_dir;
	char id[ULID_LEN + 1], ws[PATH_MAX];

	pthread_mutex_lock(&dq->mu);
	for (;;) {
		while (dq->n == 0 && !dq->stop)
			pthread_cond_wait(&dq->cv, &dq->mu);
		if (dq->stop)
			break;
		memcpy(id, dq->q[dq->head], sizeof(id));
		dq->head = (dq->head + 1) % DEDUP_QUEUE;
		dq->n--;
		dq->busy = true;
		pthread_mutex_unlock(&dq->mu);

		struct dedup_stats st;
		int64_t t0 = clock_now_ms();
		workspace_path(data_dir, id, ws, sizeof(ws));
		if (dedup_tree(data_dir, ws, &st) < 0)
			log_warn("dedup: sandbox %s: the store or the "
			         "workspace cannot be opened",
			         id);
		else if (st.linked || st.cleaned || st.partial)
			log_info("dedup: sandbox %s: %lld files linked "
			         "(%lld KiB), %lld new in the store, %lld "
			         "left, %lld leftovers removed%s, %lld ms",
			         id, (long long)st.linked,
			         (long long)(st.bytes >> 10),
			         (long long)st.added, (long long)st.skipped,
			         (long long)st.cleaned,
			         st.partial ? ", stopped at a bound" : "",
			         (long long)(clock_now_ms() - t0));
		pthread_mutex_lock(&dq->mu);
		dq->busy = false;
		pthread_cond_broadcast(&dq->cv);
	}
	pthread_mutex_unlock(&dq->mu);
	return NULL;
}

int
dedup_start(struct dedup *dq)
{
	if (!dq->cfg->dedup)
		return 0;
	/* A broken lease signals its holder; nobody here wants SIGIO. */
	signal(SIGIO, SIG_IGN);
	if (dedup_store_init(dq->cfg->data_dir) < 0)
		log_warn("dedup: cannot make %s/store", dq->cfg->data_dir);
	dq->stop = false;
	if (pthread_create(&dq->thread, NULL, dedup_main, dq) != 0) {
		log_error("dedup: cannot start its thread");
		return -1;
	}
	dq->started = true;
	return 0;
}

void
dedup_stop(struct dedup *dq)
{
	if (dq == NULL || !dq->started)
		return;
	pthread_mutex_lock(&dq->mu);
	dq->stop = true;
	pthread_cond_broadcast(&dq->cv);
	pthread_mutex_unlock(&dq->mu);
	pthread_join(dq->thread, NULL);
	dq->started = false;
	dq->n = 0;
}

void
dedup_kick(struct dedup *dq, const char *sandbox_id)
{
	if (dq == NULL || !dq->cfg->dedup || strlen(sandbox_id) != ULID_LEN)
		return;
	pthread_mutex_lock(&dq->mu);
	bool queued = false;
	for (size_t i = 0; i < dq->n; i++)
		if (strcmp(dq->q[(dq->head + i) % DEDUP_QUEUE], sandbox_id) ==
		    0)
			queued = true;
	if (dq->started && !queued && dq->n < DEDUP_QUEUE) {
		memcpy(dq->q[(dq->head + dq->n) % DEDUP_QUEUE], sandbox_id,
		       ULID_LEN + 1);
		dq->n++;
		pthread_cond_signal(&dq->cv);
	}
	pthread_mutex_unlock(&dq->mu);
}

bool
dedup_idle_wait(struct dedup *dq, int64_t timeout_ms)
{
	int64_t end = clock_now_ms() + timeout_ms;
	bool idle;

	pthread_mutex_lock(&dq->mu);
	while (!(idle = dq->n == 0 && !dq->busy) && clock_now_ms() < end) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&dq->cv, &dq->mu, &ts);
	}
	pthread_mutex_unlock(&dq->mu);
	return idle;
}

/* --- gc ------------------------------------------------------------------ */

static void
gc_dir(int dfd, bool tmp, bool yes, int *n, int64_t *bytes)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	time_t now = time(NULL);

	if (d == NULL) {
		close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		if (de->d_name[0] == '.' ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) <
		        0 ||
		    !S_ISREG(st.st_mode))
			continue;
		/* An entry: no workspace links it.  A temporary: a pass
		 * that died while copying, long enough ago. */
		if (tmp ? now - st.st_mtime < DEDUP_TMP_AGE : st.st_nlink != 1)
			continue;
		(*n)++;
		*bytes += (int64_t)st.st_blocks * 512;
		if (yes)
			unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
}

int
dedup_gc(const char *data_dir, bool yes, int *n, int64_t *bytes)
{
	char path[PATH_MAX];
	int fd;

	*n = 0;
	*bytes = 0;
	snprintf(path, sizeof(path), "%s/store", data_dir);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	gc_dir(fd, false, yes, n, bytes);
	snprintf(path, sizeof(path), "%s/store/.tmp", data_dir);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		gc_dir(fd, true, yes, n, bytes);
	return 0;
}
