/*
 * wsnode STAND-IN (seam branch only): just enough of wsnode.h for the
 * daemon to link and for docker mode, where every workspace is local,
 * until the wsnode parcel's wsnode.c replaces it.  Every definition is
 * weak so the real one wins if both are linked; the wsnode parcel
 * deletes this file.  Anything remote fails (500 internal; wsnode.c has the
 * real codes).
 */
#include "wsnode/wsnode.h"

#include <stdlib.h>

struct wsnode {
	const struct config *cfg;
	struct store *store;
	struct nodelink *nl;
};

#define WEAK __attribute__((weak))

static int
not_built(struct err *e)
{
	return ERR_INTERNAL(e, "remote workspaces are not built into this "
	                       "daemon");
}

WEAK int
wsnode_new(struct wsnode **out, const struct config *cfg, struct store *store)
{
	struct wsnode *w = calloc(1, sizeof(*w));

	if (w == NULL)
		return -1;
	w->cfg = cfg;
	w->store = store;
	*out = w;
	return 0;
}

WEAK void
wsnode_free(struct wsnode *w)
{
	free(w);
}

WEAK void
wsnode_set_nodelink(struct wsnode *w, struct nodelink *nl)
{
	w->nl = nl;
}

WEAK bool
wsnode_remote(const struct sandbox *sb)
{
	return sb->node[0] != '\0';
}

WEAK int
wsnode_guard(const struct sandbox *sb, const char *what, struct err *e)
{
	if (!wsnode_remote(sb))
		return 0;
	return err_set(e, 409, "conflict",
	               "%s: sandbox %s is on node %s; this does not work "
	               "across nodes yet",
	               what, sb->id, sb->node);
}

WEAK int
wsnode_addr(struct wsnode *w, const char *node, char addr[128], struct err *e)
{
	(void)w;
	(void)node;
	addr[0] = '\0';
	return not_built(e);
}

WEAK int
wsnode_copy(struct wsnode *w, const char *sandbox_id, const char *from,
            const char *to, bool keep_source, int64_t *bytes, struct err *e)
{
	(void)w;
	(void)sandbox_id;
	(void)from;
	(void)to;
	(void)keep_source;
	*bytes = 0;
	return not_built(e);
}
