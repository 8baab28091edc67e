/*
 * The cluster's pure rules (cluster/rules.c): the join command's text,
 * a node's status after each heartbeat, and node names.
 */
#include <string.h>

#include "cluster/cluster.h"
#include "unit.h"

static void
join_command_text(void)
{
	char out[256], tiny[16];

	CHECK(cluster_join_command_text("10.0.0.1:7444", "SBXJ1-ab-cd", out,
	                                sizeof(out)) == 0);
	CHECK_STR(
	    out,
	    "sandboxd node join --control 10.0.0.1:7444 --token SBXJ1-ab-cd");
	/* Cut short is an error, never a command that looks whole. */
	CHECK(cluster_join_command_text("10.0.0.1:7444", "SBXJ1-ab-cd", tiny,
	                                sizeof(tiny)) == -1);
}

/* One node's statuses along a run of heartbeats. */
static void
node_status_transitions(void)
{
	/* A ready node: two misses are not enough, the third is. */
	CHECK_STR(cluster_node_next("ready", 0, "ready"), "ready");
	CHECK_STR(cluster_node_next("ready", 1, "ready"), "ready");
	CHECK_STR(cluster_node_next("ready", 2, "ready"), "ready");
	CHECK_STR(cluster_node_next("ready", CLUSTER_MISSES_DOWN, "ready"),
	          "down");
	/* Swarm's down wins at once, even over an answering agent. */
	CHECK_STR(cluster_node_next("ready", 0, "down"), "down");
	CHECK_STR(cluster_node_next("down", 0, "down"), "down");
	/* Back: answering and not down in Swarm's eyes. */
	CHECK_STR(cluster_node_next("down", 0, "ready"), "ready");
	CHECK_STR(cluster_node_next("down", 0, ""), "ready");
	CHECK_STR(cluster_node_next("down", 0, "unknown"), "ready");
	CHECK_STR(cluster_node_next("down", 1, "ready"), "down");
	/* Draining and drained keep their status while they answer. */
	CHECK_STR(cluster_node_next("draining", 0, "ready"), "draining");
	CHECK_STR(cluster_node_next("drained", 1, "ready"), "drained");
	CHECK_STR(cluster_node_next("draining", 3, "ready"), "down");
	/* A joining node is its join thread's, not the heartbeats'. */
	CHECK_STR(cluster_node_next("joining", 5, "down"), "joining");
}

static void
node_names(void)
{
	CHECK(cluster_node_name_ok("n2"));
	CHECK(cluster_node_name_ok("Node-2.lan_a"));
	CHECK(!cluster_node_name_ok(""));
	CHECK(!cluster_node_name_ok("-n2"));
	CHECK(!cluster_node_name_ok(".n2"));
	CHECK(!cluster_node_name_ok("n 2"));
	CHECK(!cluster_node_name_ok("n2/../x"));
	CHECK(!cluster_node_name_ok("n2\n"));
	CHECK(!cluster_node_name_ok("a23456789012345678901234567890123456789012"
	                            "3456789012345678901234"));
	CHECK(cluster_node_name_ok(
	    "a23456789012345678901234567890123456789012345678901234567890123"));
}

static const struct unit_test tests[] = {
    {"the join command's text", join_command_text},
    {"a node's status after each heartbeat", node_status_transitions},
    {"node names", node_names},
};

int
main(void)
{
	return UNIT_RUN("cluster", tests);
}
