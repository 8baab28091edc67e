/*
 * files_remote: the files API's reads and writes for a sandbox on
 * another node (wsnode), answering as files.c does for a local one.
 * Paths are app-relative, cleaned (wsfs_clean).  Any API thread; each
 * call blocks on the node channel (bounded by its deadlines).
 */
#ifndef API_FILES_REMOTE_H
#define API_FILES_REMOTE_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"
#include "lib/err.h"
#include "lib/jv.h"
#include "sandbox/core.h"
#include "wsnode/wsnode.h"

/* "workspace/app/<app_rel>" (wsnode's paths are the workspace's). */
void files_remote_path(const char *app_rel, char *out, size_t len);
/* As wsfs_list: [{path, type, size}] sorted by path. */
int files_remote_list(struct core *c, const struct sandbox *sb,
                      const char *path, bool recursive, struct jv **out,
                      bool *truncated, struct err *e);
/* The whole file into out (initialized here; empty on -1), at most max
 * bytes (413). */
int files_remote_read(struct core *c, const struct sandbox *sb,
                      const char *path, size_t max, struct buf *out,
                      struct err *e);
/* As wsfs_remove: a non-empty directory only when recursive (409). */
int files_remote_delete(struct core *c, const struct sandbox *sb,
                        const char *path, bool recursive, struct err *e);

/*
 * wsfs_move on the node (ws_rename beneath the app directory): a
 * regular file or a directory, one rename, the same answers as a local
 * move (never replaces: 409 when `to` exists).  The caller holds the
 * sandbox's write lock.
 */
int files_remote_move(struct core *c, const struct sandbox *sb,
                      const char *from, const char *to, struct err *e);

#endif
