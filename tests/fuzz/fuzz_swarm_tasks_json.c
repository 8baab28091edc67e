/*
 * libFuzzer target: the engine's answers about Swarm tasks and nodes
 * (GET /tasks, GET /nodes) as swarm.c reads them.  A manager's answer
 * is trusted less than it looks: a node's agent or a compromised node
 * can put strings of any size into task status.  None of it may crash,
 * overrun a field or leak, whatever the bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "docker/swarm.h"
#include "lib/jv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct swarm_task t[SWARM_MAX_TASKS];
	const struct swarm_task *cur;
	struct swarm_node node;
	char err[128];
	struct jv *v;
	size_t n;

	v = jv_parse((const char *)data, size, 64, err, sizeof(err));
	if (v == NULL)
		return 0;
	n = swarm_tasks_parse(v, t, SWARM_MAX_TASKS);
	if (n > SWARM_MAX_TASKS)
		__builtin_trap();
	for (size_t i = 0; i < n; i++)
		if (strlen(t[i].state) >= sizeof(t[i].state) ||
		    strlen(t[i].err) >= sizeof(t[i].err) ||
		    (i && t[i].version > t[i - 1].version))
			__builtin_trap();
	cur = swarm_task_current(t, n);
	(void)swarm_task_phase(cur);
	for (size_t i = 0; i < jv_len(v); i++)
		(void)swarm_node_parse(jv_at(v, i), &node);
	(void)swarm_node_parse(v, &node);
	jv_free(v);
	return 0;
}
