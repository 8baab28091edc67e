/*
 * result: what a task that ended comes to, from what its files said
 * (struct derive) and how the control plane saw it end (struct
 * task_end): its status, failure reason and message, and the TaskResult
 * object the API shows and the `done` event carries (docs/api.md).
 *
 * Pure functions, except that a spawn failure's reason is read from the
 * task directory's agent.log (through derive_last_line).
 */
#ifndef TASK_RESULT_H
#define TASK_RESULT_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/jv.h"
#include "store/store.h"
#include "task/derive.h"

/* How the task ended, as the follower saw it; copied once, at the end. */
struct task_end {
	char reason[32];    /* a failure of ours ("" when the files decide) */
	char msg[384];      /* its message */
	char provider[384]; /* the credential proxy's error ("" none) */
	bool cancelled;     /* a cancel was asked for */
	bool sb_oom;        /* Docker saw an OOM kill in the sandbox */
};

struct result_outcome {
	enum task_state status; /* succeeded, failed, cancelled */
	const char *reason;     /* failure_reason, NULL when succeeded */
	char msg[1024];         /* error_message, "" none */
};

/* Decides status, reason and message; row gives the timeout. */
void result_classify(const struct task *row, const struct derive *d,
                     const struct task_end *end, struct result_outcome *o);
/* The TaskResult (a new object); finished_ms is when it ended. */
struct jv *result_json(const struct task *row, const struct derive *d,
                       const struct result_outcome *o, int64_t finished_ms);
/*
 * r.spend: what the credential proxy counted for task id (spend_json;
 * zeros when it counted nothing), for the done event.
 */
void result_add_spend(struct store *s, const char *id, struct jv *r);
/* Sets key to ms as RFC 3339 time, unless ms is 0 or less. */
void result_set_time(struct jv *o, const char *key, int64_t ms);

#endif
