/*
 * dedup: dependencies stored once.  Files of a workspace's dependency
 * trees (under a node_modules, site-packages or dist-packages directory)
 * that another workspace holds too are kept once in <data>/store, named
 * by the SHA-256 of their content (<hex> for a plain file, <hex>x for an
 * executable one), and hard-linked into each workspace.  A store entry
 * is owned by root with mode 0444 (0555): the sandbox user, which has no
 * capabilities, can neither write it nor chmod it, but it owns the
 * directories, so it can unlink or replace its link (npm install,
 * uninstall, an editor's write-and-rename), which changes only its own
 * tree.  An in-place write of a shared file fails with EACCES.
 *
 * A pass runs on the dedup thread, never on a request: after each
 * configure at a start (the preset's dependencies after the first
 * boot), after each task, and with each disk-usage pass (disk/diskuse.h)
 * for what the others missed.  It holds no lock while it walks.  Crash-safe: a
 * new store entry is written under <data>/store/.tmp, synced, then linked into
 * place; a workspace file is replaced by linking the entry under a
 * temporary name beside it and renaming that over the file, so a crash
 * leaves the old file or the link, plus at most a temporary name that
 * the next pass removes.  Bounded: DEDUP_MAX_FILES files per pass, each
 * DEDUP_MIN_BYTES to DEDUP_MAX_BYTES, no .git, no .sandboxd, no .cache, no
 * symlinks, no other filesystem.
 *
 * An entry whose link count is 1 is no longer used by any workspace:
 * `sandboxd gc` removes it (dedup_gc).
 */
#ifndef DISK_DEDUP_H
#define DISK_DEDUP_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"

#define DEDUP_MIN_BYTES  1
#define DEDUP_MAX_BYTES  (64ll << 20)
#define DEDUP_MAX_FILES  200000
#define DEDUP_QUEUE      256 /* sandboxes waiting for a pass */
#define DEDUP_TMP_PREFIX ".sandboxd-dedup-"

struct dedup_stats {
	int64_t linked;  /* files now links of the store */
	int64_t added;   /* new store entries */
	int64_t skipped; /* candidates left as they were */
	int64_t raced;   /* of those, opened for writing while replaced */
	int64_t cleaned; /* leftover temporary names removed */
	int64_t bytes;   /* bytes of the files linked */
	bool partial;    /* a bound ended the pass */
};

/* What a directory entry's name means to the walk (pure). */
enum dedup_dir {
	DEDUP_DIR_SKIP,  /* never entered */
	DEDUP_DIR_PLAIN, /* entered; its files are not dependencies */
	DEDUP_DIR_DEPS,  /* entered; its files are dependencies */
};
enum dedup_dir dedup_dir_kind(const char *name, bool in_deps);
/* Whether a regular file in a dependency tree is a candidate (pure). */
bool dedup_file_wanted(const char *name, int64_t size);
/* The store name of content hash hex and mode (pure). */
void dedup_store_name(const char *hex, unsigned mode, char out[80]);

/* <data>/store, made (root, 0700) when missing. */
int dedup_store_init(const char *data_dir);
/* One pass over the workspace at ws (caller's thread). */
int dedup_tree(const char *data_dir, const char *ws, struct dedup_stats *st);

/*
 * The thread and its queue: dedup_new (NULL: out of memory) holds cfg,
 * which outlives it; dedup_start starts the thread when SANDBOXD_DEDUP
 * is on (else nothing); dedup_stop joins it (NULL, or not started: a
 * no-op); dedup_free stops and frees.  serve() makes, starts, stops and
 * frees the one of the daemon.
 */
struct dedup;
struct dedup *dedup_new(const struct config *cfg);
int dedup_start(struct dedup *dq);
void dedup_stop(struct dedup *dq);
void dedup_free(struct dedup *dq);
/* Asks the thread for a pass over a sandbox (never blocks; NULL, off or
 * not running: nothing). */
void dedup_kick(struct dedup *dq, const char *sandbox_id);
/* Waits (bounded by timeout_ms) until the queue is empty and idle. */
bool dedup_idle_wait(struct dedup *dq, int64_t timeout_ms);

/* Store entries no workspace links (and stale temporaries): listed, and
 * removed when yes.  Counts what was (or would be) removed. */
int dedup_gc(const char *data_dir, bool yes, int *n, int64_t *bytes);

#endif
