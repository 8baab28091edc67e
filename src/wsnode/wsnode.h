/*
 * wsnode: a sandbox's workspace wherever its node is.  The one place that
 * decides "local or remote": a sandbox whose row has node "" (every
 * sandbox with SANDBOXD_ORCHESTRATOR=docker, and swarm sandboxes on the
 * manager) is read and written through ws/wsfs as today; one on another
 * node through that node's agent (nodelink ws_* ops), confined there by
 * the same wsfs.  Code that has not been ported to it calls
 * wsnode_guard, which refuses a remote sandbox with 409 sandbox_remote
 * instead of reading a local path that does not exist.
 *
 * Paths are relative to the workspace root (<data>/workspaces/<id>:
 * "workspace/app/..." for the app's files, ".sandboxd/..." for the
 * supervisor's), cleaned by the caller (wsfs_clean).  Functions return 0
 * or -1 with e (the agent's status and code, or 503 node_down).  Any
 * thread; a remote call blocks up to NL_CALL_MS per op (never on the
 * edge's loop).
 */
#ifndef WSNODE_WSNODE_H
#define WSNODE_WSNODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/jv.h"
#include "store/store.h"

struct nodelink;
struct wsnode;

/*
 * A sandbox's workspace for code that used to take its local path: ws
 * (that path) serves a local sandbox as before; when sb is on another
 * node (wsnode_remote), wn reaches it.
 */
struct wsnode_ref {
	const char *ws;
	struct wsnode *wn;
	const struct sandbox *sb;
};

/* The handle; what a previous run left in the private directories of
 * wsnode_shadow and wsnode_stage (<data>/state/wsshadow) is removed. */
int wsnode_new(struct wsnode **out, const struct config *cfg,
               struct store *store);
void wsnode_free(struct wsnode *w);
/* The channel to agents (swarm mode; set by serve() once made). */
void wsnode_set_nodelink(struct wsnode *w, struct nodelink *nl);

/* The sandbox lives on another node (its row's node is not ""). */
bool wsnode_remote(const struct sandbox *sb);
/* 0 for a local sandbox; -1 with 409 sandbox_remote ("… is on node N;
 * this does not work across nodes yet") for a remote one. */
int wsnode_guard(const struct sandbox *sb, const char *what, struct err *e);
/* wsnode_guard for sandbox id's row (no row: 0, the caller's own
 * not-found path answers). */
int wsnode_guard_id(struct store *s, const char *id, const char *what,
                    struct err *e);
/* The agent address ("host:port") of node; -1 with 503 node_down. */
int wsnode_addr(struct wsnode *w, const char *node, char addr[128],
                struct err *e);

/* Appends at most max bytes of path from off to out (initialized by the
 * caller); *eof when the file ends there. */
int wsnode_read(struct wsnode *w, const struct sandbox *sb, const char *path,
                int64_t off, size_t max, struct buf *out, bool *eof,
                struct err *e);
/* Writes path whole (atomically: a temporary file then a rename; remote
 * and past one write chunk, 32 KiB, a truncate then appends).  mode 0600
 * (no group or other bits) writes a secret; any other the default. */
int wsnode_write(struct wsnode *w, const struct sandbox *sb, const char *path,
                 const void *data, size_t len, unsigned mode, struct err *e);
/* *out: [{name, type ("file"|"dir"|"link"|"other"), size, mtime}]. */
int wsnode_list(struct wsnode *w, const struct sandbox *sb, const char *path,
                struct jv **out, struct err *e);
/* 404 not_found when missing; type as in wsnode_list. */
int wsnode_stat(struct wsnode *w, const struct sandbox *sb, const char *path,
                char type[8], int64_t *size, int64_t *mtime, struct err *e);
int wsnode_delete(struct wsnode *w, const struct sandbox *sb, const char *path,
                  struct err *e);
int wsnode_mkdir(struct wsnode *w, const struct sandbox *sb, const char *path,
                 struct err *e);
/*
 * Renames from to to, both relative to dir of the workspace ("" its
 * root; "workspace/app" for the app's files, so an error names the
 * paths as the caller gave them): wsfs_move, a file or a directory, to's
 * parents made, never replacing anything (409), following no link.
 */
int wsnode_rename(struct wsnode *w, const struct sandbox *sb, const char *dir,
                  const char *from, const char *to, struct err *e);
/* The bytes the sandbox's workspace holds (ws_usage's walk, cached on
 * its node; local: ws_usage). */
int wsnode_usage(struct wsnode *w, const struct sandbox *sb, int64_t *bytes,
                 struct err *e);

/*
 * Appends to the local file name beneath dirfd (made 0600 when missing)
 * what path of sb's workspace holds past that file's size, at most max
 * bytes: a local mirror of a file that grows.  One read per call (at
 * most NL_WS_CHUNK remote).  A remote file found shorter than the copy
 * (rewritten) empties the copy, to be read again.  1 when the copy
 * changed, 0 when not, -1 with e (404 when path does not exist yet).
 */
int wsnode_mirror(struct wsnode *w, const struct sandbox *sb, const char *path,
                  int dirfd, const char *name, size_t max, struct err *e);

/*
 * A local copy of the regular files directly in dir of sb's workspace
 * (and of extra, paths relative to dir), for code that reads an app's
 * small files through a directory fd: at most 64 files of at most 256
 * KiB each (larger ones are left out).  The fd of a fresh private local
 * directory holding them (its path in path), or -1 with e.  The caller
 * ends with wsnode_shadow_drop(fd, path).
 */
int wsnode_shadow(struct wsnode *w, const struct sandbox *sb, const char *dir,
                  const char *const *extra, size_t nextra, char *path,
                  size_t len, struct err *e);
void wsnode_shadow_drop(int fd, const char *path);

/*
 * The `git` stream of sb's node (a remote sb): *fd speaks the git
 * helper's frames to a helper that node's agent started for its
 * workspace (git.h's gitws_at: status, diff and commit only).
 * wsnode_git_dial_ref is the same as gitws_at's dial, its arg a struct
 * wsnode_ref.  -1 with e (503 node_down when the node is not reached).
 */
int wsnode_git_dial(struct wsnode *w, const struct sandbox *sb, int *fd,
                    struct err *e);
int wsnode_git_dial_ref(void *ref, int *fd, struct err *e);

/*
 * Whole workspaces between nodes ("" is this host), by tar streams
 * relayed through the control plane: the target gets <id>.incoming,
 * checked and renamed into place; the source's copy is then moved to its
 * node's trash (local: ws trash) unless keep_source.  *bytes the tar's
 * size.  The sandbox must not be running (the caller's job).
 */
int wsnode_copy(struct wsnode *w, const char *sandbox_id, const char *from,
                const char *to, bool keep_source, int64_t *bytes,
                struct err *e);

/*
 * The workspace of sb, on another node, read into the empty local
 * directory dirfd by its node's tar_out stream (dependency trees left
 * out with exclude_deps): a copy, the node's left as it is.  *bytes the
 * tar's size.  A local sb: 400 (the caller copies the tree itself).
 */
int wsnode_fetch(struct wsnode *w, const struct sandbox *sb, bool exclude_deps,
                 int dirfd, int64_t *bytes, struct err *e);
/* wsnode_fetch into a fresh private local directory (as wsnode_shadow's:
 * its fd, its path in path; the caller ends with wsnode_shadow_drop). */
int wsnode_fetch_tmp(struct wsnode *w, const struct sandbox *sb,
                     bool exclude_deps, char *path, size_t len, struct err *e);

/*
 * A remote sandbox's workspace staged on the control plane, for code
 * that works on a local workspace's tree there (a publish's copy, a git
 * push, which must not send the token to a node): wsnode_fetch_tmp
 * (dependency trees left out with exclude_deps; .git always kept), the
 * directory made the sandbox user's as a local workspace's root is, so
 * <path>/workspace/app has a local workspace's layout and owners.
 * Bounded: the data filesystem keeps WS_DATA_MIN_FREE_BYTES (507
 * insufficient_storage past that) and the tar is at most about the
 * workspace's size (SANDBOXD_WORKSPACE_MAX_MB when set, else twice what
 * ws_usage counts on the node, plus 64 MiB: 413 too_large).  The caller
 * ends with wsnode_shadow_drop(fd, path).
 */
int wsnode_stage(struct wsnode *w, const struct sandbox *sb, bool exclude_deps,
                 char *path, size_t len, struct err *e);

/*
 * The app's files of sb, a sandbox on another node, replaced by the
 * local tree srcdir (a snapshot's app/): tar_write_tree into its node's
 * app_in stream, which reads at most bytes_max bytes (64 GiB at most)
 * into workspace/app.new (a stale one removed first) and syncs it; then,
 * the whole tree written, app_swap exchanges it with workspace/app in
 * one rename and removes the old tree.  -1 with e: the node's own
 * answer for a full disk (507), a tree past bytes_max (413), a refused
 * archive (400), the app then untouched; 502 or 503 when the node
 * failed otherwise.  The sandbox must be stopped (the caller's job).  A
 * local sb: 400.
 */
int wsnode_put_app(struct wsnode *w, const struct sandbox *sb,
                   const char *srcdir, int64_t bytes_max, struct err *e);

#endif
