/*
 * usage: how much disk a workspace holds, and how much the data
 * filesystem has left.  The walk is over a tree the sandbox wrote, so it
 * follows no symlink, crosses no mount, and stops at WS_USAGE_MAX_ENTRIES
 * entries or WS_USAGE_MAX_MS, whichever comes first (the figure is then
 * a lower bound).  A result is cached per workspace for WS_USAGE_CACHE_S
 * so a busy API does not walk the same tree over and over; the cache's
 * lock is never held during a walk.
 */
#ifndef WS_USAGE_H
#define WS_USAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define WS_USAGE_MAX_ENTRIES 1000000
#define WS_USAGE_MAX_MS      2000
#define WS_USAGE_CACHE_S     5
#define WS_USAGE_SLOTS       256
/* Below this much free space the data filesystem counts as full. */
#define WS_DATA_MIN_FREE_BYTES (16ll << 20)

/* Bytes allocated under path (st_blocks); -1 when it cannot be read. */
int64_t ws_usage_walk(const char *path, bool *partial);

/*
 * A set of inode numbers (the dependency store's entries, disk/dedup.h):
 * sorted, searched by bisection.  ws_inoset_load reads the regular files
 * of one directory, at most WS_INOSET_MAX; it returns -1 when the
 * directory cannot be read (the set is then empty).
 */
#define WS_INOSET_MAX 2000000
struct ws_inoset {
	ino_t *v;
	size_t n;
	dev_t dev;
};
int ws_inoset_load(const char *dir, struct ws_inoset *s);
bool ws_inoset_has(const struct ws_inoset *s, dev_t dev, ino_t ino);
void ws_inoset_release(struct ws_inoset *s);
/* ws_usage_walk that also adds, into *shared, the bytes of files whose
 * inode is in store (NULL: none): those are counted in the result too. */
int64_t ws_usage_walk_shared(const char *path, const struct ws_inoset *store,
                             int64_t *shared, bool *partial);
/* The same, cached by id for WS_USAGE_CACHE_S. */
int64_t ws_usage(const char *id, const char *path);
/* Forgets id's cached figure (after a delete, say). */
void ws_usage_forget(const char *id);
/* Bytes free for an unprivileged user on the filesystem of path; -1. */
int64_t ws_free_bytes(const char *path);

#endif
