/*
 * Sandbox rows.  Ports are stored as a comma-separated list ("3000,5173");
 * the API layer bounds their number and range.  Status changes that race
 * with Docker events are single conditional UPDATEs
 * (store_sandbox_mark_exited), so no caller needs a lock for them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "store/internal.h"
#include "store/store.h"

#define SB_COLS                                                                \
	"s.id, s.app_id, a.owner, s.status, s.status_reason, "                 \
	"s.error_message, s.container_id, s.image, s.exit_code, "              \
	"s.oom_killed, s.ports, s.idle_policy, s.created_at, s.updated_at, "   \
	"s.last_active_at, s.stopped_at, s.preset, s.manifest_source, "        \
	"s.manifest_error, s.container_ip, s.frozen, s.node"
#define SB_FROM " FROM sandbox s JOIN app a ON a.id = s.app_id "

static void
ports_parse(const char *text, struct sandbox *sb)
{
	const char *p = text;
	char *end;

	sb->nports = 0;
	while (*p && sb->nports < API_MAX_PORTS) {
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		sb->ports[sb->nports++] = (int)v;
		p = *end == ',' ? end + 1 : end;
	}
}

static void
ports_format(const struct sandbox *sb, char *out, size_t len)
{
	size_t off = 0;

	out[0] = '\0';
	for (int i = 0; i < sb->nports && off < len; i++)
		off += (size_t)snprintf(out + off, len - off, "%s%d",
		                        i ? "," : "", sb->ports[i]);
}

static int
sandbox_from_row(sqlite3_stmt *st, void *out)
{
	struct sandbox *sb = out;
	char ports[128], state[16];
	int status;

	memset(sb, 0, sizeof(*sb));
	store_col_text(st, 0, sb->id, sizeof(sb->id));
	store_col_text(st, 1, sb->app_id, sizeof(sb->app_id));
	store_col_text(st, 2, sb->owner, sizeof(sb->owner));
	store_col_text(st, 3, state, sizeof(state));
	if ((status = sandbox_state_parse(state)) < 0) {
		log_error("store: sandbox %s has an unknown status \"%s\"",
		          sb->id, state);
		return -1;
	}
	sb->status = (enum sandbox_state)status;
	store_col_text(st, 4, sb->status_reason, sizeof(sb->status_reason));
	store_col_text(st, 5, sb->error_message, sizeof(sb->error_message));
	store_col_text(st, 6, sb->container_id, sizeof(sb->container_id));
	store_col_text(st, 7, sb->image, sizeof(sb->image));
	sb->has_exit_code = sqlite3_column_type(st, 8) != SQLITE_NULL;
	sb->exit_code = sqlite3_column_int(st, 8);
	sb->oom_killed = sqlite3_column_int(st, 9) != 0;
	store_col_text(st, 10, ports, sizeof(ports));
	ports_parse(ports, sb);
	store_col_text(st, 11, sb->idle_policy, sizeof(sb->idle_policy));
	sb->created_at = sqlite3_column_int64(st, 12);
	sb->updated_at = sqlite3_column_int64(st, 13);
	sb->last_active_at = sqlite3_column_int64(st, 14);
	sb->stopped_at = sqlite3_column_int64(st, 15);
	store_col_text(st, 16, sb->preset, sizeof(sb->preset));
	store_col_text(st, 17, sb->manifest_source,
	               sizeof(sb->manifest_source));
	store_col_text(st, 18, sb->manifest_error, sizeof(sb->manifest_error));
	store_col_text(st, 19, sb->container_ip, sizeof(sb->container_ip));
	sb->frozen = sqlite3_column_int(st, 20) != 0;
	store_col_text(st, 21, sb->node, sizeof(sb->node));
	return 0;
}

int
store_sandbox_insert(struct store *s, const struct sandbox *sb)
{
	char ports[128];
	ports_format(sb, ports, sizeof(ports));
	return store_exec(s,
	                  "INSERT INTO sandbox (id, app_id, status, "
	                  "image, ports, idle_policy, preset, "
	                  "created_at, updated_at, last_active_at, node) "
	                  "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
	                  "sssssssiiis", sb->id, sb->app_id,
	                  sandbox_state_name(sb->status), sb->image, ports,
	                  sb->idle_policy, sb->preset, sb->created_at,
	                  sb->updated_at, sb->last_active_at, sb->node);
}

static int
sandbox_get_where(struct store *s, const char *where, const char *arg,
                  struct sandbox *out)
{
	char sql[512];
	int rc;

	snprintf(sql, sizeof(sql), "SELECT " SB_COLS SB_FROM "WHERE %s", where);
	LOCK(s);
	rc = store_one(store_prep(s, sql, "s", arg), sandbox_from_row, out);
	UNLOCK(s);
	return rc;
}

int
store_sandbox_get(struct store *s, const char *id, struct sandbox *out)
{
	return sandbox_get_where(s, "s.id = ?", id, out);
}

int
store_sandbox_by_app(struct store *s, const char *app_id, struct sandbox *out)
{
	return sandbox_get_where(s, "s.app_id = ?", app_id, out);
}

int
store_sandbox_update(struct store *s, struct sandbox *sb)
{
	char ports[128];
	sqlite3_stmt *st;
	int rc;

	sb->updated_at = clock_now();
	ports_format(sb, ports, sizeof(ports));
	LOCK(s);
	st = store_prep(s,
	                "UPDATE sandbox SET status = ?, status_reason = ?, "
	                "error_message = ?, container_id = ?, image = ?, "
	                "exit_code = ?, oom_killed = ?, ports = ?, "
	                "idle_policy = ?, updated_at = ?, last_active_at = ?, "
	                "stopped_at = ?, container_ip = ?, frozen = ?, "
	                "node = ? WHERE id = ?",
	                "sssss", sandbox_state_name(sb->status),
	                sb->status_reason, sb->error_message, sb->container_id,
	                sb->image);
	if (st) {
		if (sb->has_exit_code)
			sqlite3_bind_int(st, 6, sb->exit_code);
		sqlite3_bind_int(st, 7, sb->oom_killed);
		sqlite3_bind_text(st, 8, ports, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 9, sb->idle_policy, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 10, sb->updated_at);
		sqlite3_bind_int64(st, 11, sb->last_active_at);
		sqlite3_bind_int64(st, 12, sb->stopped_at);
		sqlite3_bind_text(st, 13, sb->container_ip, -1,
		                  SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 14, sb->frozen);
		sqlite3_bind_text(st, 15, sb->node, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 16, sb->id, -1, SQLITE_TRANSIENT);
	}
	rc = store_run(s, st);
	UNLOCK(s);
	return rc;
}

int
store_sandbox_delete(struct store *s, const char *id)
{
	return store_exec(s, "DELETE FROM sandbox WHERE id = ?", "s", id);
}

STORE_CALLER(call_sandbox, struct sandbox)

static const struct store_rows sandbox_rows = {
    sizeof(struct sandbox), sandbox_from_row, call_sandbox, NULL};

int
store_sandbox_list(struct store *s, int (*fn)(const struct sandbox *, void *),
                   void *arg)
{
	/*
	 * Rows are collected first and the callbacks run without the lock
	 * (store_each): reconcile calls Docker and writes rows from inside
	 * them.
	 */
	return store_each(s, &sandbox_rows, (store_any_fn *)fn, arg,
	                  "SELECT " SB_COLS SB_FROM "ORDER BY s.id", "") < 0
	           ? -1
	           : 0;
}

int
store_sandbox_mark_exited(struct store *s, const char *id, int exit_code,
                          bool oom_killed)
{
	int64_t now = clock_now();
	return store_exec(s,
	                  "UPDATE sandbox SET status = ?, "
	                  "status_reason = ?, exit_code = ?, "
	                  "oom_killed = oom_killed OR ?, container_ip = '', "
	                  "frozen = 0, stopped_at = ?, updated_at = ? "
	                  "WHERE id = ? AND status = ?",
	                  "ssnniiss", sandbox_state_name(SANDBOX_STOPPED),
	                  oom_killed ? "oom_killed" : "exited", exit_code,
	                  (int)oom_killed, now, now, id,
	                  sandbox_state_name(SANDBOX_RUNNING));
}

int
store_sandbox_set_frozen(struct store *s, const char *id, bool frozen)
{
	return store_exec(s,
	                  "UPDATE sandbox SET frozen = ?, updated_at = ? "
	                  "WHERE id = ? AND status = ?",
	                  "niss", (int)frozen, clock_now(), id,
	                  sandbox_state_name(SANDBOX_RUNNING));
}

int
store_sandbox_set_node(struct store *s, const char *id, const char *node)
{
	return store_exec(s,
	                  "UPDATE sandbox SET node = ?, updated_at = ? "
	                  "WHERE id = ?",
	                  "sis", node ? node : "", clock_now(), id);
}

int
store_sandboxes_on_node(struct store *s, const char *node,
                        void (*fn)(const struct sandbox *, void *), void *arg)
{
	struct sandbox *rows = NULL;
	size_t n = 0;
	int rc;

	/* Collected under the lock, called after it (fn may use the store). */
	LOCK(s);
	rc = store_collect(store_prep(s,
	                              "SELECT " SB_COLS SB_FROM
	                              "WHERE s.node = ? ORDER BY s.id",
	                              "s", node ? node : ""),
	                   sizeof(*rows), sandbox_from_row, (void **)&rows, &n);
	UNLOCK(s);
	for (size_t i = 0; rc == 0 && i < n; i++)
		fn(&rows[i], arg);
	free(rows);
	return rc;
}

int
store_sandbox_mark_oom(struct store *s, const char *id)
{
	return store_exec(s,
	                  "UPDATE sandbox SET oom_killed = 1, "
	                  "updated_at = ? WHERE id = ?",
	                  "is", clock_now(), id);
}

int
store_sandbox_set_manifest(struct store *s, const char *id, const char *source,
                           const char *error)
{
	return store_exec(s,
	                  "UPDATE sandbox SET manifest_source = ?, "
	                  "manifest_error = ? WHERE id = ?",
	                  "sss", source, error, id);
}

int
store_sandbox_touch(struct store *s, const char *id, int64_t at)
{
	return store_exec(s,
	                  "UPDATE sandbox SET last_active_at = ?1 "
	                  "WHERE id = ?2 AND last_active_at < ?1",
	                  "is", at, id);
}

int
store_sandbox_set_policy(struct store *s, const char *id, const char *policy)
{
	return store_exec(s,
	                  "UPDATE sandbox SET idle_policy = ?, "
	                  "updated_at = ? WHERE id = ?",
	                  "sis", policy, clock_now(), id);
}

int
store_sandbox_set_proxy_token(struct store *s, const char *id, const char *hash)
{
	return store_exec(s,
	                  "UPDATE sandbox SET proxy_token_hash = ? "
	                  "WHERE id = ?",
	                  "ss", hash, id);
}

/*
 * An equality on the token's hash: its timing says nothing useful about
 * a token, as with API keys.  The partial index skips sandboxes without
 * a token, and its condition is repeated so SQLite uses it.
 */
int
store_sandbox_by_proxy_token(struct store *s, const char *hash,
                             struct sandbox *out)
{
	if (hash == NULL || hash[0] == '\0')
		return STORE_NOT_FOUND;
	return sandbox_get_where(
	    s, "s.proxy_token_hash = ? AND s.proxy_token_hash != ''", hash,
	    out);
}
