/* GET /healthz: liveness only; answers while the daemon runs. */
#include "api/api.h"

void
health_get(struct req *r, struct resp *w)
{
	(void)r;
	api_reply_text(w, 200, "ok\n");
}

/* The routes of this file, in the router's order (routes.c). */
const struct route health_routes[] = {
    {.method = "GET", .pattern = "/healthz", .fn = health_get, .open = true},
    {0},
};
