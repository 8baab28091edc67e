/*
 * wsnode's own: the handle and the helpers its files share.
 */
#ifndef WSNODE_INTERNAL_H
#define WSNODE_INTERNAL_H

#include <stdatomic.h>

#include "wsnode/wsnode.h"

/* Raw bytes of one ws_write: its base64 with the JSON around it must
 * fit the request header (NL_HDR_MAX, 64 KiB). */
#define WSNODE_WRITE_CHUNK (32u << 10)
/* A workspace's tar between nodes, at most (past it the copy fails). */
#define WSNODE_TAR_MAX (64ll << 30)
/* A tar_in's trailer line, at most. */
#define WSNODE_TRAILER_MAX 4096

/* wsnode_shadow's bounds. */
#define WSNODE_SHADOW_FILES    64
#define WSNODE_SHADOW_FILE_MAX (256u << 10)

struct wsnode {
	const struct config *cfg;
	struct store *store;
	_Atomic(struct nodelink *) nl;
};

/* One unary op to node's agent; takes req (adds "op"). */
int wsnode_call(struct wsnode *w, const char *node, const char *op,
                struct jv *req, struct jv **ans, struct err *e);
/* wsnode_fetch stopped past max bytes of the tar (413 too_large). */
int wsnode_fetch_max(struct wsnode *w, const struct sandbox *sb,
                     bool exclude_deps, int64_t max, int dirfd, int64_t *bytes,
                     struct err *e);
/* The local workspace of sandbox id, opened (wsfs_open_dir). */
int wsnode_open_local(struct wsnode *w, const char *id, struct err *e);

#endif
