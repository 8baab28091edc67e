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
 * Paths are app-relative, cleaned by the caller (wsfs_clean).  Functions
 * return 0 or -1 with e (the agent's status and code, or 503 node_down).
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
/* The agent address ("host:port") of node; -1 with 503 node_down. */
int wsnode_addr(struct wsnode *w, const char *node, char addr[128],
                struct err *e);

/* At most max bytes of path from off; *eof when the file ends there. */
int wsnode_read(struct wsnode *w, const struct sandbox *sb, const char *path,
                int64_t off, size_t max, struct buf *out, bool *eof,
                struct err *e);
/* Writes path whole (atomically: a temporary file then a rename). */
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
 * Whole workspaces between nodes ("" is this host), by tar streams
 * relayed through the control plane: the target gets <id>.incoming,
 * checked and renamed into place; the source's copy is then moved to its
 * node's trash (local: ws trash) unless keep_source.  *bytes the tar's
 * size.  The sandbox must not be running (the caller's job).
 */
int wsnode_copy(struct wsnode *w, const char *sandbox_id, const char *from,
                const char *to, bool keep_source, int64_t *bytes,
                struct err *e);

#endif
