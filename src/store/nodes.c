/*
 * The cluster's rows (migration 18): nodes, join tokens and the moves'
 * journal.  Only swarm mode writes them; with docker they stay empty.
 * A join token is used by one conditional UPDATE (unused, unexpired),
 * so two agents racing with one token cannot both enroll.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "store/internal.h"
#include "store/store.h"

#define NODE_COLS                                                              \
	"name, swarm_id, addr, cert_fp, status, data_dir, engine_api, "        \
	"mem_bytes, mem_available, disk_free, joined_at, last_seen"
#define MOVE_COLS                                                              \
	"id, sandbox_id, src, dst, state, bytes, error, started_at, "          \
	"finished_at"

static int
node_from_row(sqlite3_stmt *st, void *out)
{
	struct node_row *n = out;

	memset(n, 0, sizeof(*n));
	store_col_text(st, 0, n->name, sizeof(n->name));
	store_col_text(st, 1, n->swarm_id, sizeof(n->swarm_id));
	store_col_text(st, 2, n->addr, sizeof(n->addr));
	store_col_text(st, 3, n->cert_fp, sizeof(n->cert_fp));
	store_col_text(st, 4, n->status, sizeof(n->status));
	store_col_text(st, 5, n->data_dir, sizeof(n->data_dir));
	store_col_text(st, 6, n->engine_api, sizeof(n->engine_api));
	n->mem_bytes = sqlite3_column_int64(st, 7);
	n->mem_available = sqlite3_column_int64(st, 8);
	n->disk_free = sqlite3_column_int64(st, 9);
	n->joined_at = sqlite3_column_int64(st, 10);
	n->last_seen = sqlite3_column_int64(st, 11);
	return 0;
}

int
store_node_put(struct store *s, const struct node_row *n)
{
	return store_exec(s,
	                  "INSERT INTO node (" NODE_COLS ") VALUES "
	                  "(?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(name) DO "
	                  "UPDATE SET swarm_id = excluded.swarm_id, "
	                  "addr = excluded.addr, cert_fp = excluded.cert_fp, "
	                  "status = excluded.status, "
	                  "data_dir = excluded.data_dir, "
	                  "engine_api = excluded.engine_api, "
	                  "mem_bytes = excluded.mem_bytes, "
	                  "mem_available = excluded.mem_available, "
	                  "disk_free = excluded.disk_free, "
	                  "joined_at = excluded.joined_at, "
	                  "last_seen = excluded.last_seen",
	                  "sssssssiiiii", n->name, n->swarm_id, n->addr,
	                  n->cert_fp, n->status[0] ? n->status : "ready",
	                  n->data_dir, n->engine_api, n->mem_bytes,
	                  n->mem_available, n->disk_free, n->joined_at,
	                  n->last_seen);
}

int
store_node_get(struct store *s, const char *name, struct node_row *out)
{
	int rc;

	LOCK(s);
	rc = store_one(store_prep(s,
	                          "SELECT " NODE_COLS " FROM node WHERE "
	                          "name = ?",
	                          "s", name),
	               node_from_row, out);
	UNLOCK(s);
	return rc;
}

/* A list's void callback, called on each row once the lock is gone. */
static int
call_node(store_any_fn *fn, const void *row, void *arg)
{
	((void (*)(const struct node_row *, void *))fn)(row, arg);
	return 0;
}

static const struct store_rows node_rows = {sizeof(struct node_row),
                                            node_from_row, call_node, NULL};

int
store_node_list(struct store *s, void (*fn)(const struct node_row *, void *),
                void *arg)
{
	return store_each(s, &node_rows, (store_any_fn *)fn, arg,
	                  "SELECT " NODE_COLS " FROM node ORDER BY name",
	                  "") < 0
	           ? -1
	           : 0;
}

int
store_node_set_status(struct store *s, const char *name, const char *status)
{
	return store_exec(s, "UPDATE node SET status = ? WHERE name = ?", "ss",
	                  status, name);
}

int
store_node_seen(struct store *s, const char *name, int64_t at,
                int64_t mem_available, int64_t disk_free)
{
	return store_exec(s,
	                  "UPDATE node SET last_seen = ?, mem_available = ?, "
	                  "disk_free = ? WHERE name = ?",
	                  "iiis", at, mem_available, disk_free, name);
}

int
store_node_delete(struct store *s, const char *name)
{
	return store_exec(s, "DELETE FROM node WHERE name = ?", "s", name);
}

int
store_join_token_add(struct store *s, const char *hash, int64_t expires_at)
{
	return store_exec(s,
	                  "INSERT INTO join_token (hash, expires_at) "
	                  "VALUES (?, ?)",
	                  "si", hash, expires_at);
}

int
store_join_token_use(struct store *s, const char *hash, int64_t now)
{
	return store_exec(s,
	                  "UPDATE join_token SET used_at = ?1 WHERE "
	                  "hash = ?2 AND used_at = 0 AND expires_at > ?1",
	                  "is", now, hash);
}

static int
move_from_row(sqlite3_stmt *st, void *out)
{
	struct move_row *m = out;

	memset(m, 0, sizeof(*m));
	m->id = sqlite3_column_int64(st, 0);
	store_col_text(st, 1, m->sandbox_id, sizeof(m->sandbox_id));
	store_col_text(st, 2, m->src, sizeof(m->src));
	store_col_text(st, 3, m->dst, sizeof(m->dst));
	store_col_text(st, 4, m->state, sizeof(m->state));
	m->bytes = sqlite3_column_int64(st, 5);
	store_col_text(st, 6, m->error, sizeof(m->error));
	m->started_at = sqlite3_column_int64(st, 7);
	m->finished_at = sqlite3_column_int64(st, 8);
	return 0;
}

int
store_move_add(struct store *s, struct move_row *m)
{
	int rc;

	if (m->started_at == 0)
		m->started_at = clock_now();
	LOCK(s);
	rc = store_run(s, store_prep(s,
	                             "INSERT INTO move (sandbox_id, src, dst, "
	                             "state, bytes, error, started_at) "
	                             "VALUES (?,?,?,?,?,?,?)",
	                             "ssssisi", m->sandbox_id, m->src, m->dst,
	                             m->state[0] ? m->state : "sleeping",
	                             m->bytes, m->error, m->started_at));
	if (rc == 0)
		m->id = sqlite3_last_insert_rowid(s->db);
	UNLOCK(s);
	return rc;
}

/* done and failed are final: they set finished_at. */
int
store_move_set(struct store *s, int64_t id, const char *state, int64_t bytes,
               const char *error)
{
	bool final = strcmp(state, "done") == 0 || strcmp(state, "failed") == 0;

	return store_exec(s,
	                  "UPDATE move SET state = ?, bytes = ?, error = ?, "
	                  "finished_at = ? WHERE id = ?",
	                  "sisii", state, bytes, error ? error : "",
	                  final ? clock_now() : (int64_t)0, id);
}

static int
call_move(store_any_fn *fn, const void *row, void *arg)
{
	((void (*)(const struct move_row *, void *))fn)(row, arg);
	return 0;
}

static const struct store_rows move_rows = {sizeof(struct move_row),
                                            move_from_row, call_move, NULL};

int
store_move_open(struct store *s, void (*fn)(const struct move_row *, void *),
                void *arg)
{
	return store_each(s, &move_rows, (store_any_fn *)fn, arg,
	                  "SELECT " MOVE_COLS " FROM move WHERE state NOT IN "
	                  "('done','failed') ORDER BY id",
	                  "") < 0
	           ? -1
	           : 0;
}
