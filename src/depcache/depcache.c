/*
 * The dependency cache (depcache.h): save, seed, eviction and gc.  The
 * watcher that decides when to save is watch.c.
 *
 * The workspace is hostile at both ends.  Its dependency trees are
 * found by a walk that opens each directory relative to its parent with
 * O_NOFOLLOW and stays on the workspace's filesystem, and each tree is
 * copied by disk/copytree between directory descriptors: no path
 * through the workspace is ever resolved by the kernel from its root.
 * A seed creates the parents of a tree the same way, owned by the
 * workspace user.  What is copied into the cache keeps its owner and
 * mode; what is seeded out of it is the workspace user's, without
 * setuid or setgid bits, except the store entries' links, which stay
 * root's and read-only as dedup made them.
 *
 * An entry is complete or absent: it is written under .tmp-*, synced
 * (syncfs) and renamed to its key; a save that finds the key taken
 * (another sandbox's install of the same key won) drops its copy.
 * Entries are never changed after the rename, only touched (their
 * mtime is their last use) and removed (gc, eviction).
 *
 * Rejected: a cache of the package managers' download caches (npm's
 * _cacache, pip's wheels): the install would still run, unpack and link
 * (seconds to minutes); the tree itself is what the next app needs.
 * Keying by the lockfile alone: the install command (npm ci vs. pnpm
 * install, flags) changes the tree as much as the lockfile does.
 */
#include "depcache/depcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "depcache/trees.h"
#include "disk/copytree.h"
#include "disk/dedup.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "ws/usage.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"

#define DEPCACHE_GC_TMP_AGE 3600 /* seconds before gc takes a temporary */
#define DEPCACHE_LIST_MAX   4096 /* entries looked at by an eviction */

static atomic_uint tmp_seq; /* two saves at once never share a name */

bool
depcache_key_ok(const char *key)
{
	size_t i;

	for (i = 0; key[i] != '\0'; i++)
		if (!((key[i] >= '0' && key[i] <= '9') ||
		      (key[i] >= 'a' && key[i] <= 'f')))
			return false;
	return i == DEPCACHE_KEY_LEN;
}

static bool
cache_on(const struct config *cfg)
{
	return cfg->dedup && cfg->depcache_max_mb > 0;
}

/* <data>/depcache, made (0700) when missing; its fd or -1. */
static int
open_root(const char *data_dir, bool make)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/depcache", data_dir);
	if (make && mkdir(path, 0700) < 0 && errno != EEXIST)
		return -1;
	return open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static void
remove_at(const char *data_dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/depcache/%s", data_dir, name);
	if (copytree_remove(path) < 0)
		log_warn("depcache: cannot remove %s: %s", path,
		         strerror(errno));
}

/* Copies every tree of t from sbase into dbase (relative paths kept;
 * the parents made in dbase, owned by o->uid when >= 0).  -1 with errno
 * (EFBIG: past a bound).  *made: the trees, first to last, whose
 * directory this call made in dbase (whole or in part): only those are
 * ours to remove after a failure, not one found there (EEXIST). */
static int
copy_trees(const struct depcache_trees *t, int sbase, int dbase,
           struct copytree_opts *o, struct depcache_stats *st, int *made)
{
	int64_t max_entries = o->max_entries, max_own = o->max_own_bytes;

	for (int i = 0; i < t->n; i++) {
		struct copytree_stats cst;
		const char *name = strrchr(t->rel[i], '/') + 1;
		int sp = -1, dp = -1, rc = -1, saved;
		bool called = false;

		sp = trees_open_parent(sbase, t->rel[i], false, -1, -1);
		if (sp >= 0)
			dp = trees_open_parent(dbase, t->rel[i], true, o->uid,
			                       o->gid);
		if (dp >= 0) {
			o->max_entries = max_entries - st->files;
			o->max_own_bytes = max_own - st->own_bytes;
			if (o->max_entries <= 0 || o->max_own_bytes <= 0)
				errno = EFBIG;
			else {
				rc = copytree_at(sp, name, dp, o, &cst);
				called = true;
			}
		}
		saved = errno;
		if (sp >= 0)
			close(sp);
		if (dp >= 0)
			close(dp);
		errno = saved;
		if (rc < 0) {
			if (called && errno != EEXIST)
				(*made)++;
			return -1;
		}
		(*made)++;
		st->trees++;
		st->files += cst.files;
		st->own_bytes += cst.own_bytes;
	}
	return 0;
}

/* Writes the list of trees into the new entry, then syncs it. */
static int
finish_entry(int tmpfd, const struct depcache_trees *t,
             const struct depcache_stats *st)
{
	char line[TREES_REL_MAX + 2];
	int fd, rc = 0;

	fd = openat(tmpfd, TREES_FILE,
	            O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	int n = snprintf(line, sizeof(line), "own_bytes %lld\n",
	                 (long long)st->own_bytes);
	if (write(fd, line, (size_t)n) != n)
		rc = -1;
	for (int i = 0; rc == 0 && i < t->n; i++) {
		n = snprintf(line, sizeof(line), "%s\n", t->rel[i]);
		if (write(fd, line, (size_t)n) != n)
			rc = -1;
	}
	if (close(fd) < 0 || rc < 0)
		return -1;
	return syncfs(tmpfd);
}

/* Copies the trees into a new temporary entry and renames it to key.
 * 1 saved, 0 not (bounds, or the key taken meanwhile), -1 error. */
static int
save_trees(const struct config *cfg, int rootfd, int wsfd, const char *key,
           const struct depcache_trees *t, struct depcache_stats *st)
{
	struct ws_inoset store = {0};
	struct copytree_opts o = {.store = &store,
	                          .uid = -1,
	                          .gid = -1,
	                          .max_entries = DEPCACHE_MAX_ENTRIES,
	                          .max_own_bytes = DEPCACHE_MAX_OWN_BYTES};
	char tmp[64], path[PATH_MAX];
	int tmpfd, rc = -1, made = 0;

	if (cfg->depcache_max_mb < (DEPCACHE_MAX_OWN_BYTES >> 20))
		o.max_own_bytes = cfg->depcache_max_mb << 20;
	snprintf(tmp, sizeof(tmp), DEPCACHE_TMP_PREFIX "%d-%lld-%u",
	         (int)getpid(), (long long)clock_now_ms(),
	         atomic_fetch_add(&tmp_seq, 1));
	if (mkdirat(rootfd, tmp, 0700) < 0 ||
	    (tmpfd = openat(rootfd, tmp,
	                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
	        0)
		return -1;
	snprintf(path, sizeof(path), "%s/store", cfg->data_dir);
	ws_inoset_load(path, &store);
	if (copy_trees(t, wsfd, tmpfd, &o, st, &made) < 0) {
		if (errno == EFBIG || errno == EMLINK) {
			log_info(
			    "depcache: %.12s: over the bounds (%lld files, "
			    "%lld MiB copied): not cached",
			    key, (long long)st->files,
			    (long long)(st->own_bytes >> 20));
			rc = 0;
		}
	} else if (finish_entry(tmpfd, t, st) == 0) {
		rc = renameat(rootfd, tmp, rootfd, key) == 0 ? 1 : -1;
		if (rc < 0 && (errno == EEXIST || errno == ENOTEMPTY))
			rc = 0; /* another save of the same key won */
	}
	ws_inoset_release(&store);
	close(tmpfd);
	if (rc != 1)
		remove_at(cfg->data_dir, tmp);
	return rc;
}

/* The dedup pass before a save: the store entries are then links. */
static void
dedup_first(const struct config *cfg, struct dedup *dq, const char *ws)
{
	struct dedup_stats dst;
	const char *id = strrchr(ws, '/');

	if (dq == NULL) {
		if (dedup_tree(cfg->data_dir, ws, &dst) < 0)
			log_warn("depcache: no dedup pass over %s", ws);
		return;
	}
	dedup_kick(dq, id != NULL ? id + 1 : ws);
	if (!dedup_idle_wait(dq, DEPCACHE_DEDUP_WAIT_MS))
		log_warn("depcache: the dedup pass over %s is late; saving "
		         "without waiting for it",
		         ws);
}

int
depcache_save(const struct config *cfg, struct dedup *dq, const char *ws,
              const char *key, struct depcache_stats *st)
{
	struct depcache_trees t = {0};
	struct stat e;
	int rootfd, wsfd = -1, rc = -1;

	*st = (struct depcache_stats){0};
	if (!cache_on(cfg) || !depcache_key_ok(key))
		return 0;
	rootfd = open_root(cfg->data_dir, true);
	if (rootfd < 0)
		return -1;
	if (fstatat(rootfd, key, &e, AT_SYMLINK_NOFOLLOW) == 0) {
		rc = 0;
		goto out;
	}
	/* The big files become store entries first: linked, not copied. */
	dedup_first(cfg, dq, ws);
	wsfd = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (wsfd < 0 || trees_find(wsfd, &t) < 0)
		goto out;
	rc = 0;
	if (t.n > 0)
		rc = save_trees(cfg, rootfd, wsfd, key, &t, st);
	if (rc == 1)
		st->evicted = depcache_evict(cfg->data_dir,
		                             cfg->depcache_max_mb << 20, key);
out:
	trees_release(&t);
	if (wsfd >= 0)
		close(wsfd);
	close(rootfd);
	return rc;
}

/* Whether any tree of t is in the workspace already. */
static bool
trees_present(int wsfd, const struct depcache_trees *t)
{
	for (int i = 0; i < t->n; i++) {
		struct stat st;
		int p = trees_open_parent(wsfd, t->rel[i], false, -1, -1);
		bool there = p >= 0 && fstatat(p, strrchr(t->rel[i], '/') + 1,
		                               &st, AT_SYMLINK_NOFOLLOW) == 0;
		if (p >= 0)
			close(p);
		if (there || (p < 0 && errno != ENOENT))
			return true;
	}
	return false;
}

static int
seed_into(const struct config *cfg, int entryfd, int wsfd, const char *key,
          const struct depcache_trees *t, struct depcache_stats *st)
{
	struct ws_inoset store = {0};
	struct copytree_opts o = {.store = &store,
	                          .uid = WORKSPACE_UID,
	                          .gid = WORKSPACE_GID,
	                          .max_entries = DEPCACHE_MAX_ENTRIES,
	                          .max_own_bytes = DEPCACHE_MAX_OWN_BYTES};
	char path[PATH_MAX], line[DEPCACHE_KEY_LEN + 2];
	struct err e;
	int rc, made = 0;

	snprintf(path, sizeof(path), "%s/store", cfg->data_dir);
	ws_inoset_load(path, &store);
	rc = copy_trees(t, entryfd, wsfd, &o, st, &made);
	ws_inoset_release(&store);
	/* The supervisor's own format: the key and a newline. */
	snprintf(line, sizeof(line), "%s\n", key);
	if (rc == 0 && wsfs_write(wsfd, DEPCACHE_KEY_FILE, line, strlen(line),
	                          WORKSPACE_UID, WORKSPACE_GID, &e) < 0)
		rc = -1;
	if (rc == 0)
		return 0;
	log_warn("depcache: %.12s: seeding failed (%s); the install runs", key,
	         strerror(errno));
	for (int i = 0; i < made; i++)
		wsfs_remove(wsfd, t->rel[i], true, &e);
	return -1;
}

int
depcache_seed(const struct config *cfg, const char *ws, const char *key,
              struct depcache_stats *st)
{
	struct depcache_trees t = {0};
	int rootfd, entryfd = -1, wsfd = -1, rc = -1;

	*st = (struct depcache_stats){0};
	if (!cache_on(cfg) || !depcache_key_ok(key))
		return 0;
	rootfd = open_root(cfg->data_dir, false);
	if (rootfd < 0)
		return errno == ENOENT ? 0 : -1;
	entryfd = openat(rootfd, key,
	                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (entryfd < 0) {
		rc = errno == ENOENT ? 0 : -1;
		goto out;
	}
	wsfd = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (wsfd < 0 || trees_read(entryfd, &t) < 0)
		goto out;
	if (trees_present(wsfd, &t)) {
		rc = 0; /* the usual case at a later configure: installed */
		goto out;
	}
	if (seed_into(cfg, entryfd, wsfd, key, &t, st) < 0)
		goto out;
	futimens(entryfd, NULL); /* its last use, for gc and eviction */
	rc = 1;
out:
	trees_release(&t);
	if (wsfd >= 0)
		close(wsfd);
	if (entryfd >= 0)
		close(entryfd);
	close(rootfd);
	return rc;
}

/* --- eviction and gc ----------------------------------------------------- */

struct entry {
	char name[80];
	time_t mtime;
	int64_t bytes;
};

static int
by_mtime(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return (x->mtime > y->mtime) - (x->mtime < y->mtime);
}

/* The entries (and temporaries, tmp set) of rootfd, at most max. */
static int
list_entries(int rootfd, bool tmp, struct entry *v, int max)
{
	int fd = dup(rootfd), n = 0;
	struct dirent *de;
	DIR *d;

	if (fd < 0 || (d = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	rewinddir(d); /* the dup shares rootfd's offset */
	while (n < max && (de = readdir(d)) != NULL) {
		struct stat st;
		bool is_tmp = strncmp(de->d_name, DEPCACHE_TMP_PREFIX,
		                      strlen(DEPCACHE_TMP_PREFIX)) == 0;
		if ((tmp ? !is_tmp : !depcache_key_ok(de->d_name)) ||
		    fstatat(rootfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		snprintf(v[n].name, sizeof(v[n].name), "%s", de->d_name);
		v[n].mtime = st.st_mtime;
		v[n].bytes = trees_own_bytes(rootfd, de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

int64_t
depcache_evict(const char *data_dir, int64_t cap, const char *keep)
{
	struct entry *v = calloc(DEPCACHE_LIST_MAX, sizeof(*v));
	int64_t total = 0, evicted = 0;
	int rootfd = open_root(data_dir, false), n;

	if (v == NULL || rootfd < 0) {
		free(v);
		if (rootfd >= 0)
			close(rootfd);
		return 0;
	}
	n = list_entries(rootfd, false, v, DEPCACHE_LIST_MAX);
	close(rootfd);
	qsort(v, (size_t)n, sizeof(*v), by_mtime);
	for (int i = 0; i < n; i++)
		total += v[i].bytes;
	for (int i = 0; i < n && total > cap; i++) {
		if (keep != NULL && strcmp(v[i].name, keep) == 0)
			continue;
		log_info("depcache: %.12s evicted (%lld KiB; the cache is "
		         "over %lld MiB)",
		         v[i].name, (long long)(v[i].bytes >> 10),
		         (long long)(cap >> 20));
		remove_at(data_dir, v[i].name);
		total -= v[i].bytes;
		evicted++;
	}
	free(v);
	return evicted;
}

int
depcache_gc(const char *data_dir, int64_t max_age_days, bool yes, int *n,
            int64_t *bytes)
{
	struct entry *v = calloc(DEPCACHE_LIST_MAX, sizeof(*v));
	time_t now = time(NULL);
	int rootfd, k;

	*n = 0;
	*bytes = 0;
	if (v == NULL)
		return -1;
	rootfd = open_root(data_dir, false);
	if (rootfd < 0) {
		int saved = errno;
		free(v);
		return saved == ENOENT ? 0 : -1;
	}
	for (int pass = 0; pass < 2; pass++) {
		bool tmp = pass == 1;
		int64_t age = tmp ? DEPCACHE_GC_TMP_AGE : max_age_days * 86400;
		k = list_entries(rootfd, tmp, v, DEPCACHE_LIST_MAX);
		for (int i = 0; i < k; i++) {
			if (now - v[i].mtime < age)
				continue;
			(*n)++;
			*bytes += v[i].bytes;
			if (yes)
				remove_at(data_dir, v[i].name);
		}
	}
	close(rootfd);
	free(v);
	return 0;
}
