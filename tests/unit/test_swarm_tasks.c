/*
 * Swarm tasks and nodes as the engine describes them (canned answers of
 * a 20.10 engine, tests/unit/fixtures/swarm/): which task speaks for a
 * service, what its state means for a sandbox (running, pending on a
 * node that has no room, failed with an OOM's 137, shut down), and the
 * node's labels as sandboxd reads them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker/swarm.h"
#include "lib/jv.h"
#include "unit.h"

#define FIXTURES "tests/unit/fixtures/swarm/"

static struct jv *
load(const char *name)
{
	char path[256], err[128], *text = NULL;
	size_t len = 0;
	FILE *f;
	struct jv *v;

	snprintf(path, sizeof(path), FIXTURES "%s", name);
	f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, "  cannot read %s (run from the repo root)\n",
		        path);
		unit_failed = 1;
		return NULL;
	}
	text = malloc(1 << 16);
	len = fread(text, 1, 1 << 16, f);
	fclose(f);
	v = jv_parse(text, len, 32, err, sizeof(err));
	free(text);
	CHECK(v != NULL);
	return v;
}

static void
test_running_is_current(void)
{
	struct jv *v = load("tasks.json");
	struct swarm_task t[SWARM_MAX_TASKS];
	const struct swarm_task *cur;
	size_t n = swarm_tasks_parse(v, t, SWARM_MAX_TASKS);

	CHECK(n == 3);
	/* newest first, by Version.Index, whatever the answer's order */
	CHECK_STR(t[0].id, "t-run");
	CHECK_STR(t[1].id, "t-fail");
	CHECK_STR(t[2].id, "t-old");
	cur = swarm_task_current(t, n);
	CHECK(cur == &t[0]);
	CHECK(swarm_task_phase(cur) == SWARM_RUNNING);
	CHECK_STR(cur->node_id, "nodeB");
	CHECK_STR(cur->container_id, "c-run");
	CHECK_STR(cur->service_id, "svc1");
	CHECK(cur->created_ms == 1796450460123LL);
	CHECK(cur->updated_ms == 1796450460723LL);
	CHECK(cur->err[0] == '\0');
	jv_free(v);
}

static void
test_failed_oom(void)
{
	struct jv *v = load("tasks.json");
	struct swarm_task t[SWARM_MAX_TASKS];
	size_t n = swarm_tasks_parse(v, t, SWARM_MAX_TASKS);

	CHECK(n == 3);
	CHECK(swarm_task_phase(&t[1]) == SWARM_FAILED);
	CHECK(t[1].exit_code == 137);
	CHECK_STR(t[1].err, "task: non-zero exit (137)");
	CHECK(swarm_task_phase(&t[2]) == SWARM_SHUTDOWN);
	CHECK(t[2].created_ms == 1796450400500LL);
	/* with none running, the newest speaks */
	CHECK(swarm_task_current(t + 1, 2) == &t[1]);
	jv_free(v);
}

static void
test_pending_no_node(void)
{
	struct jv *v = load("tasks_pending.json");
	struct swarm_task t[4];
	size_t n = swarm_tasks_parse(v, t, 4);

	CHECK(n == 1);
	CHECK(swarm_task_phase(&t[0]) == SWARM_NO_NODE);
	CHECK(strstr(t[0].err, "no suitable node") != NULL);
	CHECK(t[0].node_id[0] == '\0');
	/* pending without an error is only waiting */
	t[0].err[0] = '\0';
	CHECK(swarm_task_phase(&t[0]) == SWARM_PENDING);
	snprintf(t[0].state, sizeof(t[0].state), "starting");
	CHECK(swarm_task_phase(&t[0]) == SWARM_PENDING);
	snprintf(t[0].state, sizeof(t[0].state), "rejected");
	CHECK(swarm_task_phase(&t[0]) == SWARM_FAILED);
	CHECK(swarm_task_phase(NULL) == SWARM_NONE);
	CHECK(swarm_task_current(t, 0) == NULL);
	jv_free(v);
}

static void
test_bad_tasks(void)
{
	char err[64];
	struct swarm_task t[2];
	const char *bad[] = {"{}", "[1,\"x\",null,{\"ID\":7}]",
	                     "[{\"ID\":\"a\",\"Status\":\"no\","
	                     "\"Version\":\"x\",\"CreatedAt\":\"garbage\"}]",
	                     "[{\"ID\":\"b\",\"CreatedAt\":"
	                     "\"0001-01-01T00:00:00Z\"}]"};
	size_t want[] = {0, 0, 1, 1};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct jv *v =
		    jv_parse(bad[i], strlen(bad[i]), 8, err, sizeof(err));
		CHECK(swarm_tasks_parse(v, t, 2) == want[i]);
		if (want[i]) {
			CHECK(t[0].created_ms == 0);
			CHECK(swarm_task_phase(&t[0]) == SWARM_SHUTDOWN);
		}
		jv_free(v);
	}
}

static void
test_nodes(void)
{
	struct jv *v = load("nodes.json");
	struct swarm_node a, b;

	CHECK(swarm_node_parse(jv_at(v, 0), &a) == 0);
	CHECK(swarm_node_parse(jv_at(v, 1), &b) == 0);
	CHECK_STR(a.name, "cp");
	CHECK_STR(a.role, "manager");
	CHECK(a.leader && a.agent && !a.drain && !a.disk_full);
	CHECK(a.mem_bytes == 25000000000LL);
	CHECK(a.version == 9);
	CHECK_STR(b.name, "n2");
	CHECK_STR(b.state, "down");
	CHECK_STR(b.availability, "drain");
	CHECK_STR(b.hostname, "host-b");
	CHECK_STR(b.addr, "10.0.0.2");
	CHECK(b.drain && b.disk_full && !b.leader);
	CHECK(swarm_node_parse(jv_at(v, 5), &b) < 0);
	jv_free(v);
}

static const struct unit_test tests[] = {
    {"the running task speaks, newest first", test_running_is_current},
    {"failed (137) and shut down tasks", test_failed_oom},
    {"pending with no suitable node", test_pending_no_node},
    {"malformed tasks are skipped or read as empty", test_bad_tasks},
    {"nodes and their sandboxd labels", test_nodes},
};

int
main(void)
{
	return UNIT_RUN("swarm_tasks", tests);
}
