/*
 * hosts: the publish host names (publish.h).  Only publish_app_host for
 * now; the host table the edge reads is the core's part of this file.
 */
#include <stdio.h>

#include "publish/publish.h"

void
publish_app_host(struct core *c, const char *label, char *out, size_t len)
{
	snprintf(out, len, "%s.apps.%s", label, c->cfg->preview_domain);
}
