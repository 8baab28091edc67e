/*
 * Placeholders, weak, for the functions wsnode calls whose owners'
 * branches (nodelink) have not been merged here yet:
 * each answers "not available".  The real definitions win at link time;
 * this file goes once they are merged.
 */
#include "nodelink/nodelink.h"

__attribute__((weak)) int
nl_call(struct nodelink *nl, const char *addr, enum nl_role want,
        const struct jv *req, struct jv **ans, int timeout_ms, struct err *e)
{
	(void)nl, (void)addr, (void)want, (void)req, (void)timeout_ms;
	*ans = NULL;
	return err_set(e, 503, "node_down", "no node channel in this build");
}

__attribute__((weak)) int
nl_stream(struct nodelink *nl, const char *addr, enum nl_role want,
          const struct jv *req, struct jv **ans, int *fd, struct err *e)
{
	(void)nl, (void)addr, (void)want, (void)req;
	if (ans)
		*ans = NULL;
	*fd = -1;
	return err_set(e, 503, "node_down", "no node channel in this build");
}
