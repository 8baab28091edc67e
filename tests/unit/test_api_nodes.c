/*
 * The nodes API's routes and its refusals (src/api/nodes.c), with one
 * server (core.cluster NULL, as SANDBOXD_ORCHESTRATOR=docker leaves it):
 * the paths are routed to it, a tenant's token is refused (403
 * operator_only) and an operator's answered 409 not_swarm, naming the
 * setting.  The calls in swarm mode are the integration tests' (111).
 */
#include <string.h>

#include "api/api.h"
#include "api/routes.h"
#include "unit.h"

#define SB "01ARZ3NDEKTSV4RRFFQ69G5FAV"

/* Routes method path and calls its handler; w's status and body. */
static int
call(struct core *c, const char *method, const char *path, bool op,
     struct resp *w)
{
	struct req r = {.core = c, .method = method, .path = path};
	const struct route *rt;
	bool known = false, bad = false;

	memset(w, 0, sizeof(*w));
	buf_init(&w->body, 1u << 16);
	buf_init(&r.body, 1u << 16);
	r.operator= op;
	snprintf(r.owner, sizeof(r.owner), "%s", op ? "default" : "alice");
	rt = api_route_find(&r, &known, &bad, w->allow, sizeof(w->allow));
	if (rt == NULL || bad)
		return known ? 405 : 404;
	rt->fn(&r, w);
	buf_release(&r.body);
	return w->status;
}

static bool
says(const struct resp *w, const char *what)
{
	return w->body.data && strstr(w->body.data, what) != NULL;
}

static void
one_server_answers_not_swarm(void)
{
	static const char *const calls[][2] = {
	    {"GET", "/v1/nodes"},
	    {"POST", "/v1/nodes/join-command"},
	    {"POST", "/v1/nodes/n2/drain"},
	    {"POST", "/v1/sandboxes/" SB "/restore-elsewhere"},
	};
	struct core c = {0};
	struct resp w;

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		CHECK(call(&c, calls[i][0], calls[i][1], true, &w) == 409);
		CHECK(says(&w, "\"not_swarm\""));
		CHECK(says(&w, "SANDBOXD_ORCHESTRATOR"));
		buf_release(&w.body);
		CHECK(call(&c, calls[i][0], calls[i][1], false, &w) == 403);
		CHECK(says(&w, "\"operator_only\""));
		buf_release(&w.body);
	}
}

static void
routes_and_methods(void)
{
	struct core c = {0};
	struct resp w;

	CHECK(call(&c, "GET", "/v1/nodes/n2/drain", true, &w) == 405);
	CHECK(call(&c, "DELETE", "/v1/nodes", true, &w) == 405);
	CHECK(call(&c, "GET", "/v1/sandboxes/" SB "/restore-elsewhere", true,
	           &w) == 405);
	CHECK(call(&c, "POST", "/v1/nodes/n2/drain/now", true, &w) == 404);
	buf_release(&w.body);
}

static const struct unit_test tests[] = {
    {"one server: 409 not_swarm, 403 for a tenant",
     one_server_answers_not_swarm},
    {"routes and methods", routes_and_methods},
};

int
main(void)
{
	return UNIT_RUN("api nodes", tests);
}
