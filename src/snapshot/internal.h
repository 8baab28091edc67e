/* Shared by snapshot/'s own files only. */
#ifndef SNAPSHOT_INTERNAL_H
#define SNAPSHOT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox/core.h"
#include "disk/copytree.h"

/* <data>/snapshots/<id><suffix>. */
void snap_path(const struct core *c, const char *id, const char *suffix,
               char *out, size_t len);
/* <workspace of sandbox_id>/workspace/<leaf>. */
void snap_app_dir(const struct core *c, const char *sandbox_id,
                  const char *leaf, char *out, size_t len);
/* The dependency store's inodes (empty when it cannot be read). */
void snap_store_set(struct core *c, struct ws_inoset *set);
/* copytree with the dependency store's inodes; -1 with errno. */
int snap_copy(struct core *c, const char *src, const char *dst,
              struct copytree_stats *st);
/*
 * The app's tree of sb, a sandbox on another node, into dst (in the
 * snapshot's tmp directory) by its node's tar stream (remote.c); st's
 * figures counted.  -1 with e.
 */
int snap_fetch(struct core *c, const struct sandbox *sb, const char *tmp,
               const char *dst, struct copytree_stats *st, struct err *e);
/* syncfs of dir's filesystem. */
int snap_sync(const char *dir);
/* A failed copy's errno as an error (507 for a full disk); -1. */
int snap_copy_err(int err, const char *what, struct err *e);
/*
 * Records an event of type on app_id's timeline (timeline.h), with the
 * snapshot's id, the sandbox's (or NULL) and payload (freed; NULL none);
 * the message made by fmt.
 */
void snap_note(struct core *c, const char *app_id, const char *type,
               const char *snapshot_id, const char *sandbox_id,
               struct jv *payload, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
/*
 * A fork in progress: on, the marker <data>/snapshots/.forking/<app_id>
 * is made (synced; -1 with errno); off, removed.
 */
#define SNAP_FORKING ".forking"
int snap_fork_mark(struct core *c, const char *app_id, bool on);
/* The HEAD commit (hex) of the repository <snapshot dir>/app/.git, or
 * "" (no repository, or one it cannot read). */
void snap_head(const char *dir, char *out, size_t len);

#endif
