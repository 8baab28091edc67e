/*
 * Workspaces: one host directory per sandbox, <data>/workspaces/<id>,
 * owned by uid 1000 and mounted at /home/sandbox.  The app lives in
 * workspace/app inside it.  Removal first renames the directory into
 * <data>/trash (atomic), so a crash mid-delete never leaves a half-removed
 * workspace where a sandbox expects its files; the trash is emptied after
 * the rename and again at every start.
 */
#ifndef WS_WORKSPACE_H
#define WS_WORKSPACE_H

#include <stddef.h>

#define WORKSPACE_UID 1000
#define WORKSPACE_GID 1000

/* Creates <data>/{state,workspaces,trash,log} as needed. */
int workspace_init_dirs(const char *data_dir);
void workspace_path(const char *data_dir, const char *id, char *out,
                    size_t len);
/* Creates the workspace (idempotent; existing files are kept). */
int workspace_create(const char *data_dir, const char *id);
/* Moves the workspace to the trash and empties it.  Missing is fine. */
int workspace_remove(const char *data_dir, const char *id);
/* Empties <data>/trash, all but the kept workspaces (below). */
void workspace_empty_trash(const char *data_dir);

/*
 * Kept workspaces: a deleted app's workspace while it may be restored,
 * <data>/trash/kept/<trash id> (trash/trash.c).  Moves are one rename on
 * the same filesystem; each returns 0 when moved (or found moved
 * already, as after a crash), 1 when neither end exists, -1 on error.
 */
#define WORKSPACE_KEPT_DIR "kept"
void workspace_kept_path(const char *data_dir, const char *trash_id, char *out,
                         size_t len);
int workspace_keep(const char *data_dir, const char *id, const char *trash_id);
int workspace_unkeep(const char *data_dir, const char *trash_id,
                     const char *id);
/* Removes a kept workspace for good (through the trash, as above). */
int workspace_kept_remove(const char *data_dir, const char *trash_id);

#endif
