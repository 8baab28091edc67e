/*
 * nodelink STAND-IN (swarm branch only): the client calls the swarm
 * driver makes, weak, so the daemon links until the link parcel's
 * src/nodelink/ is merged; its strong definitions then win, and this
 * file is deleted.  Every call fails as an unreachable node does (503
 * node_down), which is what a swarm of one node (the manager, no
 * agents) never asks for.
 */
#include "nodelink/nodelink.h"

#define WEAK __attribute__((weak))

static int
no_link(struct err *e)
{
	return err_set(e, 503, "node_down",
	               "the node channel is not built into this daemon");
}

WEAK int
nl_call(struct nodelink *nl, const char *addr, enum nl_role want,
        const struct jv *req, struct jv **ans, int timeout_ms, struct err *e)
{
	(void)nl, (void)addr, (void)want, (void)req, (void)timeout_ms;
	*ans = NULL;
	return no_link(e);
}

WEAK int
nl_stream(struct nodelink *nl, const char *addr, enum nl_role want,
          const struct jv *req, struct jv **ans, int *fd, struct err *e)
{
	(void)nl, (void)addr, (void)want, (void)req;
	if (ans)
		*ans = NULL;
	*fd = -1;
	return no_link(e);
}

WEAK int
nl_tunnel_start(struct nl_tunnel **out, struct nodelink *nl,
                int (*resolve)(void *arg, const char *sandbox, char addr[128]),
                void *arg, struct err *e)
{
	(void)nl, (void)resolve, (void)arg;
	*out = NULL;
	return no_link(e);
}

WEAK void
nl_tunnel_stop(struct nl_tunnel *t)
{
	(void)t;
}

WEAK unsigned
nl_tunnel_port(const struct nl_tunnel *t)
{
	(void)t;
	return 0;
}
