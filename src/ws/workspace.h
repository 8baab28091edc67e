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
void workspace_empty_trash(const char *data_dir);

#endif
