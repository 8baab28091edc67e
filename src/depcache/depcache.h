/*
 * depcache: the dependency trees of a finished install, kept by its
 * install key (sha256 of the install command and its input files'
 * bytes, src/sandbox/runtime.c), so that a second app with the same key
 * gets them before its first boot and installs nothing.
 *
 * An entry is <data>/depcache/<key>/: the workspace's dependency trees
 * at their workspace-relative paths (every node_modules under workspace/app/ at
 * most TREES_SCAN_DEPTH directories down and not inside another,
 * .local/lib/python3* /site-packages, .local/bin), plus the list of them
 * in <key>/trees.  A file that is a dependency-store entry
 * (disk/dedup.h) is a hard link of it, in the entry as in each seeded
 * workspace; the rest is copied.  An entry is made in a .tmp-* directory
 * and renamed into place; its mtime is its last use.
 *
 * Shared across tenants like the store: an entry holds what an install
 * with the same command and the same input bytes produced
 * (docs/design.md, "Dependency cache").  Off with SANDBOXD_DEDUP=false or
 * SANDBOXD_DEPCACHE_MAX_MB=0.
 */
#ifndef DEPCACHE_DEPCACHE_H
#define DEPCACHE_DEPCACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"

#define DEPCACHE_KEY_LEN       64             /* hex of a sha256 */
#define DEPCACHE_MAX_ENTRIES   500000         /* files, dirs, links */
#define DEPCACHE_MAX_OWN_BYTES (1024ll << 20) /* copied, not linked */
#define DEPCACHE_WATCH_MAX     256            /* installs watched at once */
#define DEPCACHE_POLL_MS       1000
#define DEPCACHE_DEDUP_WAIT_MS 120000 /* for the dedup thread's pass */
#define DEPCACHE_TMP_PREFIX    ".tmp-"
#define DEPCACHE_KEY_FILE      ".sandboxd/install.key"

struct depcache_stats {
	int64_t trees;     /* dependency trees */
	int64_t files;     /* regular files and symlinks */
	int64_t own_bytes; /* copied bytes (not links of the store) */
	int64_t evicted;   /* entries evicted to keep the cap (save) */
};

/* A well-formed key: DEPCACHE_KEY_LEN lowercase hex digits (pure). */
bool depcache_key_ok(const char *key);

/*
 * Saves the dependency trees of the workspace at ws under key, after a
 * dedup pass over it: dq's (kicked, then waited for, at most
 * DEPCACHE_DEDUP_WAIT_MS), or with dq NULL one on the caller's thread
 * (no other pass may run on ws meanwhile).  Seconds for a big tree.
 * 1 saved; 0 not (off, an entry exists, no tree, or past a bound:
 * logged); -1 error.  Then evicts the least recently used entries past
 * SANDBOXD_DEPCACHE_MAX_MB.
 */
struct dedup;
int depcache_save(const struct config *cfg, struct dedup *dq, const char *ws,
                  const char *key, struct depcache_stats *st);
/*
 * Copies key's entry into the workspace at ws (store entries linked,
 * the rest owned by the workspace user) and writes DEPCACHE_KEY_FILE,
 * so the supervisor skips the install.  Call before the run.conf with
 * the install record reaches the supervisor (runtime_configure, or the
 * import before the first boot).  Safe with the sandbox running: every
 * step is relative to a directory opened with O_NOFOLLOW, every file
 * made with O_EXCL.  1 seeded; 0 no entry (or off, or a tree already in
 * the workspace: the usual case once installed); -1 error, what it
 * seeded removed again: the install then simply runs.
 */
int depcache_seed(const struct config *cfg, const char *ws, const char *key,
                  struct depcache_stats *st);
/* Removes the least recently used entries (but keep) until the cache's
 * own bytes are at most cap; the number removed. */
int64_t depcache_evict(const char *data_dir, int64_t cap, const char *keep);
/*
 * Entries unused for max_age_days, and temporaries of saves that died:
 * counted, and removed when yes.
 */
int depcache_gc(const char *data_dir, int64_t max_age_days, bool yes, int *n,
                int64_t *bytes);

/*
 * The watcher: a thread that, for each sandbox told to it, reads the
 * workspace's DEPCACHE_KEY_FILE every DEPCACHE_POLL_MS for up to
 * timeout_s; when it holds the key and the cache has no entry for it,
 * saves.  depcache_new (NULL: out of memory) holds cfg and dq (the
 * daemon's dedup thread, which runs the pass before a save; NULL: the
 * watcher runs it), which outlive it; depcache_start starts the thread unless
 * the cache is off; depcache_stop joins it (NULL or not started: a no-op);
 * depcache_free stops and frees.  depcache_watch never blocks (a full table, a
 * bad key or a stopped watcher: nothing); a second watch of a sandbox replaces
 * its first.  Any thread.
 */
struct depcache;
struct depcache *depcache_new(const struct config *cfg, struct dedup *dq);
int depcache_start(struct depcache *dc);
void depcache_stop(struct depcache *dc);
void depcache_free(struct depcache *dc);
void depcache_watch(struct depcache *dc, const char *sandbox_id,
                    const char *key, int64_t timeout_s);
/* Sandboxes watched now, or being saved (tests). */
int depcache_watching(struct depcache *dc);

#endif
