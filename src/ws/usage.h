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

#define WS_USAGE_MAX_ENTRIES 1000000
#define WS_USAGE_MAX_MS      2000
#define WS_USAGE_CACHE_S     5
#define WS_USAGE_SLOTS       256
/* Below this much free space the data filesystem counts as full. */
#define WS_DATA_MIN_FREE_BYTES (16ll << 20)

/* Bytes allocated under path (st_blocks); -1 when it cannot be read. */
int64_t ws_usage_walk(const char *path, bool *partial);
/* The same, cached by id for WS_USAGE_CACHE_S. */
int64_t ws_usage(const char *id, const char *path);
/* Forgets id's cached figure (after a delete, say). */
void ws_usage_forget(const char *id);
/* Bytes free for an unprivileged user on the filesystem of path; -1. */
int64_t ws_free_bytes(const char *path);

#endif
