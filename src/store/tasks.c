/*
 * Task rows.  The row is the index (who, when, which status); the
 * TaskResult JSON in `result` is what the API shows once a task ended.
 * "One running task per sandbox" is a partial unique index, so two
 * concurrent submissions cannot both win.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "store/internal.h"
#include "store/store.h"

#define TASK_COLS                                                              \
	"id, sandbox_id, agent, model, timeout_s, status, failure_reason, "    \
	"checkpoint_id, prompt, result, created_at, finished_at, reverted_at"

static char *
col_dup(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);

	return t ? strdup((const char *)t) : NULL;
}

/* A row is never cancelling: that state is only ever an answer. */
static int
task_from_row(sqlite3_stmt *st, void *out)
{
	struct task *t = out;
	char state[16];
	int status;

	memset(t, 0, sizeof(*t));
	store_col_text(st, 0, t->id, sizeof(t->id));
	store_col_text(st, 1, t->sandbox_id, sizeof(t->sandbox_id));
	store_col_text(st, 2, t->agent, sizeof(t->agent));
	store_col_text(st, 3, t->model, sizeof(t->model));
	t->timeout_s = sqlite3_column_int64(st, 4);
	store_col_text(st, 5, state, sizeof(state));
	status = task_state_parse(state);
	if (status < 0 || status == TASK_CANCELLING) {
		log_error("store: task %s has an unknown status \"%s\"", t->id,
		          state);
		return -1;
	}
	t->status = (enum task_state)status;
	store_col_text(st, 6, t->failure_reason, sizeof(t->failure_reason));
	store_col_text(st, 7, t->checkpoint_id, sizeof(t->checkpoint_id));
	t->prompt = col_dup(st, 8);
	t->result = col_dup(st, 9);
	t->created_at = sqlite3_column_int64(st, 10);
	t->finished_at = sqlite3_column_int64(st, 11);
	t->reverted_at = sqlite3_column_int64(st, 12);
	return 0;
}

void
store_task_release(struct task *t)
{
	free(t->prompt);
	free(t->result);
	t->prompt = t->result = NULL;
}

int
store_task_insert(struct store *s, const struct task *t)
{
	return store_exec(s,
	                  "INSERT INTO task (id, sandbox_id, agent, "
	                  "model, timeout_s, status, prompt, "
	                  "created_at) VALUES (?,?,?,?,?,?,?,?)",
	                  "ssssissi", t->id, t->sandbox_id, t->agent, t->model,
	                  t->timeout_s, task_state_name(t->status),
	                  t->prompt ? t->prompt : "", t->created_at);
}

int
store_task_get(struct store *s, const char *sandbox_id, const char *id,
               struct task *out)
{
	int rc;

	memset(out, 0, sizeof(*out));
	LOCK(s);
	rc = store_one(store_prep(s,
	                          "SELECT " TASK_COLS " FROM task WHERE id = ? "
	                          "AND (? IS NULL OR sandbox_id = ?)",
	                          "sss", id, sandbox_id, sandbox_id),
	               task_from_row, out);
	UNLOCK(s);
	return rc;
}

STORE_CALLER(call_task, struct task)

static void
task_row_release(void *row)
{
	store_task_release(row);
}

static const struct store_rows task_rows = {sizeof(struct task), task_from_row,
                                            call_task, task_row_release};

/* -1, 0, or 1 when fn stopped early. */
int
store_task_list(struct store *s, const char *sandbox_id, int max,
                int (*fn)(const struct task *, void *), void *arg)
{
	return store_each(s, &task_rows, (store_any_fn *)fn, arg,
	                  "SELECT " TASK_COLS " FROM task WHERE "
	                  "sandbox_id = ? ORDER BY id DESC LIMIT ?",
	                  "sn", sandbox_id, max);
}

int
store_task_list_running(struct store *s, int (*fn)(const struct task *, void *),
                        void *arg)
{
	return store_each(s, &task_rows, (store_any_fn *)fn, arg,
	                  "SELECT " TASK_COLS " FROM task WHERE "
	                  "status = ? ORDER BY id",
	                  "s", task_state_name(TASK_RUNNING));
}

int
store_task_finish(struct store *s, const char *id, enum task_state status,
                  const char *failure_reason, const char *checkpoint_id,
                  const char *result, int64_t finished_at)
{
	int rc;

	if (status != TASK_SUCCEEDED && status != TASK_FAILED &&
	    status != TASK_CANCELLED) {
		log_error("store: task %s cannot end as %s", id,
		          task_state_name(status) ?: "?");
		return -1;
	}
	LOCK(s);
	rc = store_run(s, store_prep(s,
	                             "UPDATE task SET status = ?, "
	                             "failure_reason = ?, checkpoint_id = ?, "
	                             "result = ?, finished_at = ? WHERE id = ? "
	                             "AND status = ?",
	                             "ssssiss", task_state_name(status),
	                             failure_reason, checkpoint_id, result,
	                             finished_at, id,
	                             task_state_name(TASK_RUNNING)));
	if (rc == 0 && sqlite3_changes(s->db) == 0)
		rc = STORE_NOT_FOUND;
	UNLOCK(s);
	return rc;
}

int
store_task_set_reverted(struct store *s, const char *id, int64_t at)
{
	return store_exec(s, "UPDATE task SET reverted_at = ? WHERE id = ?",
	                  "is", at, id);
}

int
store_task_delete_sandbox(struct store *s, const char *sandbox_id)
{
	return store_exec(s, "DELETE FROM task WHERE sandbox_id = ?", "s",
	                  sandbox_id);
}
