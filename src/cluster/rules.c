/*
 * The cluster's pure rules: the join command's text, a node's status
 * after a heartbeat, what the journal's resume does with a move, a
 * node's name.  No I/O, so the unit tests read them as the table they
 * are.
 */
#include <stdio.h>
#include <string.h>

#include "cluster/cluster.h"

int
cluster_join_command_text(const char *addr, const char *token, char *out,
                          size_t len)
{
	int n = snprintf(out, len, "sandboxd node join --control %s --token %s",
	                 addr, token);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/*
 * Swarm's "down" wins over an answering agent (its engine left the
 * swarm: its tasks are gone whatever the agent says); an answering agent
 * brings a down node back.  A node being drained or drained keeps that
 * status while it answers, and goes down like any other.  A joining
 * node is not beaten (its join thread watches it).
 */
const char *
cluster_node_next(const char *status, int misses, const char *swarm_state)
{
	bool swarm_down = swarm_state && strcmp(swarm_state, "down") == 0;

	if (strcmp(status, "joining") == 0)
		return "joining";
	if (swarm_down || misses >= CLUSTER_MISSES_DOWN)
		return "down";
	if (strcmp(status, "down") == 0)
		return misses == 0 ? "ready" : "down";
	return status;
}

enum cluster_move_step
cluster_move_resume_step(const char *state)
{
	static const struct {
		const char *state;
		enum cluster_move_step step;
	} table[] = {
	    {"sleeping", CLUSTER_MOVE_ROLLBACK},
	    {"copying", CLUSTER_MOVE_ROLLBACK},
	    {"copied", CLUSTER_MOVE_REPIN},
	    {"repinned", CLUSTER_MOVE_FINISH},
	    {"done", CLUSTER_MOVE_NOTHING},
	    {"failed", CLUSTER_MOVE_NOTHING},
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(state, table[i].state) == 0)
			return table[i].step;
	/* A state this build does not know: the safe side. */
	return CLUSTER_MOVE_ROLLBACK;
}

bool
cluster_node_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 63)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = name[i];
		bool alnum = (ch >= 'a' && ch <= 'z') ||
		             (ch >= 'A' && ch <= 'Z') ||
		             (ch >= '0' && ch <= '9');

		if (!alnum && (i == 0 || (ch != '.' && ch != '_' && ch != '-')))
			return false;
	}
	return true;
}
