/*
 * Unit tests of the routing table (src/sandbox/routes.c) and of the
 * preview answers built on it (src/preview/preview.c).  The preview tests
 * run with no store at all (c.store is NULL), so a store call on the
 * resolve path would crash them: that is the promise the edge's loop
 * relies on.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "preview/preview.h"
#include "sandbox/routes.h"
#include "lib/clock.h"
#include "store_fixture.h"
#include "orch/internal.h"
#include "unit.h"

static void
make_row(struct sandbox *sb, enum sandbox_state st, const char *ip)
{
	memset(sb, 0, sizeof(*sb));
	ulid_new(sb->id);
	ulid_new(sb->app_id);
	sb->status = st;
	snprintf(sb->container_ip, sizeof(sb->container_ip), "%s", ip);
	snprintf(sb->image, sizeof(sb->image), "img:1");
	snprintf(sb->idle_policy, sizeof(sb->idle_policy), "sleep");
	sb->ports[0] = 3000;
	sb->ports[1] = 5173;
	sb->nports = 2;
	sb->created_at = sb->updated_at = clock_now();
}

static void
put_get_drop(void)
{
	struct routes *r = routes_new();
	struct sandbox sb;
	struct route rt;
	char ip[INET_ADDRSTRLEN];

	make_row(&sb, SANDBOX_RUNNING, "172.30.0.7");
	CHECK(routes_put(r, &sb) == 0);
	CHECK(routes_count(r) == 1);
	CHECK(routes_get(r, sb.id, &rt));
	CHECK_STR(rt.id, sb.id);
	CHECK(rt.state == SANDBOX_RUNNING);
	CHECK(rt.has_addr);
	inet_ntop(AF_INET, &rt.addr, ip, sizeof(ip));
	CHECK_STR(ip, "172.30.0.7");
	CHECK(rt.nports == 2 && rt.ports[0] == 3000 && rt.ports[1] == 5173);
	CHECK(!routes_get(r, "01ARZ3NDEKTSV4RRFFQ69G5FAV", &rt));

	/* a stop clears the address; the same entry is updated */
	sb.status = SANDBOX_STOPPED;
	sb.container_ip[0] = '\0';
	CHECK(routes_put(r, &sb) == 0);
	CHECK(routes_count(r) == 1);
	CHECK(routes_get(r, sb.id, &rt));
	CHECK(rt.state == SANDBOX_STOPPED && !rt.has_addr);

	routes_drop(r, sb.id);
	routes_drop(r, sb.id); /* twice is harmless */
	CHECK(routes_count(r) == 0);
	CHECK(!routes_get(r, sb.id, &rt));
	routes_free(r);
}

static void
started_at_follows_starts(void)
{
	struct routes *r = routes_new();
	struct sandbox sb;
	struct route rt;

	make_row(&sb, SANDBOX_RUNNING, "172.30.0.8");
	sb.updated_at = 1000;
	routes_put(r, &sb);
	sb.updated_at = 2000; /* an OOM mark: still the same start */
	routes_put(r, &sb);
	CHECK(routes_get(r, sb.id, &rt) && rt.started_at == 1000);
	sb.status = SANDBOX_STOPPED;
	sb.updated_at = 3000;
	routes_put(r, &sb);
	sb.status = SANDBOX_RUNNING;
	sb.updated_at = 4000; /* started again */
	routes_put(r, &sb);
	CHECK(routes_get(r, sb.id, &rt) && rt.started_at == 4000);
	routes_free(r);
}

static void
errors_and_bad_addresses(void)
{
	struct routes *r = routes_new();
	struct sandbox sb;
	struct route rt;

	make_row(&sb, SANDBOX_ERROR, "");
	snprintf(sb.error_message, sizeof(sb.error_message), "no such image");
	routes_put(r, &sb);
	CHECK(routes_get(r, sb.id, &rt));
	CHECK(rt.state == SANDBOX_ERROR && !rt.has_addr);
	CHECK_STR(rt.error, "no such image");
	make_row(&sb, SANDBOX_RUNNING, "not-an-address");
	routes_put(r, &sb);
	CHECK(routes_get(r, sb.id, &rt) && !rt.has_addr);
	routes_free(r);
}

/* Far more sandboxes than buckets: chains, and drops in their middle. */
static void
many_sandboxes(void)
{
	enum { N = 5000 };
	struct routes *r = routes_new();
	static char ids[N][ULID_LEN + 1];
	struct sandbox sb;
	struct route rt;
	bool ok = true;

	for (int i = 0; i < N; i++) {
		make_row(&sb, SANDBOX_RUNNING, "172.30.0.9");
		sb.ports[0] = 1000 + i;
		memcpy(ids[i], sb.id, sizeof(ids[i]));
		ok = ok && routes_put(r, &sb) == 0;
	}
	CHECK(ok);
	CHECK(routes_count(r) == N);
	for (int i = 0; i < N; i += 2)
		routes_drop(r, ids[i]);
	CHECK(routes_count(r) == N / 2);
	for (int i = 0; i < N; i++) {
		bool found = routes_get(r, ids[i], &rt);
		ok = ok && found == (i % 2 == 1) &&
		     (!found || rt.ports[0] == 1000 + i);
	}
	CHECK(ok);
	routes_free(r);
}

static void
load_reads_every_row(void)
{
	struct store *s = store_fixture_open();
	struct routes *r = routes_new();
	struct app a = {0};
	struct sandbox sb;
	struct route rt;

	CHECK(s != NULL);
	ulid_new(a.id);
	snprintf(a.owner, sizeof(a.owner), "alice");
	snprintf(a.name, sizeof(a.name), "one");
	snprintf(a.tags_json, sizeof(a.tags_json), "[]");
	CHECK(store_app_insert(s, &a) == 0);
	make_row(&sb, SANDBOX_CREATING, "");
	snprintf(sb.app_id, sizeof(sb.app_id), "%s", a.id);
	CHECK(store_sandbox_insert(s, &sb) == 0);
	sb.status = SANDBOX_RUNNING;
	snprintf(sb.container_ip, sizeof(sb.container_ip), "172.30.0.10");
	CHECK(store_sandbox_update(s, &sb) == 0);
	CHECK(routes_load(r, s) == 0);
	CHECK(routes_count(r) == 1);
	CHECK(routes_get(r, sb.id, &rt));
	CHECK(rt.state == SANDBOX_RUNNING && rt.has_addr);
	CHECK(rt.started_at == sb.updated_at);
	routes_free(r);
	store_fixture_close(s);
}

struct race {
	struct routes *r;
	char id[ULID_LEN + 1];
	atomic_bool done;
	atomic_int torn;
};

/* A reader never sees half a write: running has an address, stopped not. */
static void *
race_reader(void *arg)
{
	struct race *x = arg;
	struct route rt;

	while (!x->done)
		if (routes_get(x->r, x->id, &rt) &&
		    (rt.state == SANDBOX_RUNNING) != rt.has_addr)
			x->torn++;
	return NULL;
}

static void
readers_never_see_half_a_write(void)
{
	struct race x = {.r = routes_new()};
	struct sandbox run, stop;
	pthread_t t[2];

	make_row(&run, SANDBOX_RUNNING, "172.30.0.11");
	stop = run;
	stop.status = SANDBOX_STOPPED;
	stop.container_ip[0] = '\0';
	memcpy(x.id, run.id, sizeof(x.id));
	atomic_init(&x.done, false);
	atomic_init(&x.torn, 0);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, race_reader, &x);
	for (int i = 0; i < 20000; i++) {
		routes_put(x.r, i % 2 ? &stop : &run);
		if (i % 1000 == 999)
			routes_drop(x.r, run.id);
	}
	x.done = true;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK(x.torn == 0);
	routes_free(x.r);
}

static struct config cfg;

/* A core with routes, activity and wakes but no store and no Docker. */
static void
core_without_store(struct core *c)
{
	memset(c, 0, sizeof(*c));
	cfg.wake_ready_s = 60;
	cfg.mem_refuse_pct = 101; /* a stopped sandbox is refused, not woken */
	c->cfg = &cfg;
	c->routes = routes_new();
	c->act = activity_new();
	preview_init(c);
}

static void
core_without_store_free(struct core *c)
{
	preview_release(c);
	activity_free(c->act);
	routes_free(c->routes);
}

static void
preview_answers_from_the_table(void)
{
	struct core c;
	struct sandbox run, stop, err, mk;
	struct preview_target t;

	core_without_store(&c);
	make_row(&run, SANDBOX_RUNNING, "172.30.0.12");
	make_row(&stop, SANDBOX_STOPPED, "");
	make_row(&err, SANDBOX_ERROR, "");
	snprintf(err.error_message, sizeof(err.error_message), "bad image");
	make_row(&mk, SANDBOX_CREATING, "");
	routes_put(c.routes, &run);
	routes_put(c.routes, &stop);
	routes_put(c.routes, &err);
	routes_put(c.routes, &mk);

	preview_resolve(&c, "01ARZ3NDEKTSV4RRFFQ69G5FAV", 3000, &t);
	CHECK(t.state == PREVIEW_UNKNOWN);
	CHECK_STR(t.message, "no such sandbox");
	preview_resolve(&c, run.id, 8080, &t);
	CHECK(t.state == PREVIEW_UNKNOWN);
	CHECK(strstr(t.message, "not declared") != NULL);
	preview_resolve(&c, run.id, 5173, &t);
	CHECK(t.state == PREVIEW_UP);
	CHECK(t.addr.sin_family == AF_INET && ntohs(t.addr.sin_port) == 5173);
	CHECK(ntohl(t.addr.sin_addr.s_addr) == 0xac1e000c);
	preview_resolve(&c, err.id, 3000, &t);
	CHECK(t.state == PREVIEW_FAILED);
	CHECK_STR(t.message, "bad image");
	preview_resolve(&c, mk.id, 3000, &t);
	CHECK(t.state == PREVIEW_STARTING);
	preview_resolve(&c, stop.id, 3000, &t);
	CHECK(t.state == PREVIEW_NO_HEADROOM);

	/* not seen starting by this daemon: the table's start time says */
	preview_resolve(&c, run.id, 3000, &t);
	preview_connect_failed(&c, &t);
	CHECK(t.state == PREVIEW_STARTING);
	run.status = SANDBOX_STOPPED;
	routes_put(c.routes, &run);
	run.status = SANDBOX_RUNNING;
	run.updated_at = clock_now() - 3600;
	routes_put(c.routes, &run);
	preview_resolve(&c, run.id, 3000, &t);
	preview_connect_failed(&c, &t);
	CHECK(t.state == PREVIEW_NOT_LISTENING);
	core_without_store_free(&c);
}

/*
 * A sandbox whose manifest runs workers only: the page says so at once,
 * also while it is still starting, and a row written later (a stop, a
 * start) does not forget it; a manifest with a web process again brings
 * back "starting".
 */
static void
workers_only_sandbox_has_no_web(void)
{
	struct core c;
	struct sandbox run;
	struct preview_target t;
	struct route rt;

	core_without_store(&c);
	make_row(&run, SANDBOX_RUNNING, "172.30.0.13");
	routes_set_procs(c.routes, run.id, false, "lost"); /* no route yet */
	routes_put(c.routes, &run);
	CHECK(routes_get(c.routes, run.id, &rt) && !rt.no_web);
	routes_set_procs(c.routes, run.id, false, "worker, mailer");

	preview_resolve(&c, run.id, 3000, &t);
	CHECK(t.state == PREVIEW_UP); /* a worker may listen all the same */
	preview_connect_failed(&c, &t);
	CHECK(t.state == PREVIEW_NO_WEB);
	CHECK_STR(t.message, "this app has no web process; it runs workers: "
	                     "worker, mailer");

	run.status = SANDBOX_STOPPED;
	routes_put(c.routes, &run);
	run.status = SANDBOX_RUNNING;
	routes_put(c.routes, &run);
	CHECK(routes_get(c.routes, run.id, &rt) && rt.no_web);
	CHECK_STR(rt.workers, "worker, mailer");

	routes_set_procs(c.routes, run.id, true, "ignored");
	CHECK(routes_get(c.routes, run.id, &rt) && !rt.no_web);
	CHECK_STR(rt.workers, "");
	preview_resolve(&c, run.id, 3000, &t);
	preview_connect_failed(&c, &t);
	CHECK(t.state == PREVIEW_STARTING);
	core_without_store_free(&c);
}

/*
 * Sandboxes on another node (swarm): the route carries the node; one
 * whose node is down gets the node-down page (never a wake), and one that
 * runs there without a way to its node (no driver, or one that cannot
 * give a tunnel) too; a local one's target has no preamble.
 */
static void
remote_sandboxes(void)
{
	struct core c;
	struct sandbox run, down, local;
	struct preview_target t;
	struct route rt;

	core_without_store(&c);
	make_row(&run, SANDBOX_RUNNING, "");
	snprintf(run.node, sizeof(run.node), "n2");
	make_row(&down, SANDBOX_STOPPED, "");
	snprintf(down.node, sizeof(down.node), "n2");
	snprintf(down.status_reason, sizeof(down.status_reason), "node_down");
	make_row(&local, SANDBOX_RUNNING, "172.30.0.14");
	routes_put(c.routes, &run);
	routes_put(c.routes, &down);
	routes_put(c.routes, &local);
	CHECK(routes_get(c.routes, run.id, &rt) && !rt.node_down);
	CHECK_STR(rt.node, "n2");
	CHECK(routes_get(c.routes, down.id, &rt) && rt.node_down);

	preview_resolve(&c, down.id, 3000, &t);
	CHECK(t.state == PREVIEW_NODE_DOWN && t.retry_after_s > 0);
	CHECK(strstr(t.message, "n2") != NULL);
	preview_resolve(&c, run.id, 3000, &t);
	CHECK(t.state == PREVIEW_NODE_DOWN && t.preamble_len == 0);
	preview_resolve(&c, local.id, 3000, &t);
	CHECK(t.state == PREVIEW_UP && t.preamble_len == 0);
	/* back up: a row without the reason forgets it */
	down.status_reason[0] = '\0';
	routes_put(c.routes, &down);
	CHECK(routes_get(c.routes, down.id, &rt) && !rt.node_down);
	core_without_store_free(&c);
}

/* A driver whose only call is target: a tunnel on loopback port 7999,
 * as the swarm driver gives one (its own tests cover its tunnel). */
static int
tunnel_target(struct orch *o, const char *sandbox_id, const char *node,
              const char *ip, int port, struct orch_target *out)
{
	struct sockaddr_in *a = (struct sockaddr_in *)&out->addr;

	(void)o, (void)ip;
	if (node[0] == '\0')
		return -1;
	a->sin_family = AF_INET;
	a->sin_port = htons(7999);
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	out->len = sizeof(*a);
	out->preamble_len =
	    (size_t)snprintf(out->preamble, sizeof(out->preamble),
	                     "SBX %s %d\n", sandbox_id, port);
	return 0;
}

static void
remote_target_from_the_driver(void)
{
	static const struct orch_ops ops = {.name = "tunnel",
	                                    .target = tunnel_target};
	struct orch o = {.ops = &ops};
	struct core c;
	struct sandbox run;
	struct preview_target t;
	char want[96];

	core_without_store(&c);
	c.orch = &o;
	make_row(&run, SANDBOX_RUNNING, "");
	snprintf(run.node, sizeof(run.node), "n2");
	routes_put(c.routes, &run);
	preview_resolve(&c, run.id, 5173, &t);
	CHECK(t.state == PREVIEW_UP);
	CHECK(ntohs(t.addr.sin_port) == 7999 &&
	      ntohl(t.addr.sin_addr.s_addr) == INADDR_LOOPBACK);
	snprintf(want, sizeof(want), "SBX %s 5173\n", run.id);
	CHECK(t.preamble_len == strlen(want) &&
	      memcmp(t.preamble, want, t.preamble_len) == 0);
	core_without_store_free(&c);
}

static const struct unit_test tests[] = {
    {"put, get, drop", put_get_drop},
    {"started_at follows starts", started_at_follows_starts},
    {"errors and bad addresses", errors_and_bad_addresses},
    {"many sandboxes", many_sandboxes},
    {"load reads every row", load_reads_every_row},
    {"readers never see half a write", readers_never_see_half_a_write},
    {"preview answers from the table", preview_answers_from_the_table},
    {"workers-only sandbox has no web", workers_only_sandbox_has_no_web},
    {"sandboxes on another node", remote_sandboxes},
    {"a remote target: the driver's tunnel and preamble",
     remote_target_from_the_driver},
};

int
main(void)
{
	return UNIT_RUN("routes", tests);
}
