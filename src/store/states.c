/*
 * The names of sandbox and task states: one table each, indexed by the
 * enum, the only spelling of a state in the daemon.  The database
 * stores these names (its CHECK constraints, in migrations.h, list the
 * same ones) and the API shows them.
 *
 * Rows are read through *_state_parse(), so a name this daemon does not
 * know (a row written by a newer version, or by hand) is an error the
 * store reports, never a value out of the enum's range.
 */
#include <string.h>

#include "store/store.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const sandbox_states[] = {
    [SANDBOX_CREATING] = "creating",
    [SANDBOX_RUNNING] = "running",
    [SANDBOX_STOPPED] = "stopped",
    [SANDBOX_ERROR] = "error",
};

static const char *const task_states[] = {
    [TASK_RUNNING] = "running",       [TASK_SUCCEEDED] = "succeeded",
    [TASK_FAILED] = "failed",         [TASK_CANCELLED] = "cancelled",
    [TASK_CANCELLING] = "cancelling",
};

static int
parse(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	return -1;
}

const char *
sandbox_state_name(enum sandbox_state st)
{
	return (unsigned)st < NELEM(sandbox_states) ? sandbox_states[st] : NULL;
}

int
sandbox_state_parse(const char *s)
{
	return parse(sandbox_states, NELEM(sandbox_states), s);
}

const char *
task_state_name(enum task_state st)
{
	return (unsigned)st < NELEM(task_states) ? task_states[st] : NULL;
}

int
task_state_parse(const char *s)
{
	return parse(task_states, NELEM(task_states), s);
}
