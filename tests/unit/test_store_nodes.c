/*
 * Unit tests of the cluster's rows (migration 18) on a real database:
 * nodes upserted, listed, marked and seen; a join token used once and
 * never after it expired; the moves' journal listing what is not
 * finished; a sandbox's node round trip and the rows on a node; and a
 * database of schema 17 with a sandbox in it taken to 18.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "store/backup.h"
#include "store/migrations.h"
#include "store/store.h"
#include "store_fixture.h"
#include "unit.h"

static void
count_node(const struct node_row *n, void *arg)
{
	char *names = arg;

	strcat(names, n->name);
	strcat(names, ":");
	strcat(names, n->status);
	strcat(names, " ");
}

static void
nodes_upsert_list_status_seen(void)
{
	struct store *s = store_fixture_open();
	struct node_row n = {0}, got;
	char names[256] = "";

	CHECK(s != NULL);
	snprintf(n.name, sizeof(n.name), "worker-b");
	snprintf(n.addr, sizeof(n.addr), "10.0.0.2:7443");
	snprintf(n.data_dir, sizeof(n.data_dir), "/srv/sbx");
	n.mem_bytes = 8LL << 30;
	n.joined_at = 100;
	CHECK(store_node_put(s, &n) == 0);
	CHECK(store_node_get(s, "worker-b", &got) == 0);
	CHECK_STR(got.status, "ready"); /* "" is a new node's: ready */
	CHECK_STR(got.data_dir, "/srv/sbx");
	CHECK(got.mem_bytes == 8LL << 30);
	/* The same name again updates the row. */
	snprintf(n.addr, sizeof(n.addr), "10.0.0.9:7443");
	snprintf(n.cert_fp, sizeof(n.cert_fp), "ab12");
	CHECK(store_node_put(s, &n) == 0);
	CHECK(store_node_get(s, "worker-b", &got) == 0);
	CHECK_STR(got.addr, "10.0.0.9:7443");
	CHECK_STR(got.cert_fp, "ab12");
	snprintf(n.name, sizeof(n.name), "worker-a");
	CHECK(store_node_put(s, &n) == 0);
	CHECK(store_node_set_status(s, "worker-b", "draining") == 0);
	CHECK(store_node_set_status(s, "worker-b", "asleep") != 0);
	CHECK(store_node_set_status(s, "nobody", "down") == STORE_NOT_FOUND);
	CHECK(store_node_list(s, count_node, names) == 0);
	CHECK_STR(names, "worker-a:ready worker-b:draining ");
	CHECK(store_node_seen(s, "worker-a", 500, 1 << 20, 2 << 20) == 0);
	CHECK(store_node_get(s, "worker-a", &got) == 0);
	CHECK(got.last_seen == 500 && got.mem_available == 1 << 20 &&
	      got.disk_free == 2 << 20);
	CHECK(store_node_delete(s, "worker-a") == 0);
	CHECK(store_node_get(s, "worker-a", &got) == STORE_NOT_FOUND);
	store_fixture_close(s);
}

static void
join_token_single_use_and_expiry(void)
{
	struct store *s = store_fixture_open();
	int64_t now = clock_now();

	CHECK(s != NULL);
	CHECK(store_join_token_add(s, "h1", now + 600) == 0);
	CHECK(store_join_token_add(s, "h2", now - 1) == 0);
	CHECK(store_join_token_add(s, "h1", now + 600) == STORE_CONFLICT);
	CHECK(store_join_token_use(s, "h1", now) == 0);
	CHECK(store_join_token_use(s, "h1", now) == STORE_NOT_FOUND);
	CHECK(store_join_token_use(s, "h2", now) == STORE_NOT_FOUND);
	CHECK(store_join_token_use(s, "unknown", now) == STORE_NOT_FOUND);
	store_fixture_close(s);
}

static void
collect_move(const struct move_row *m, void *arg)
{
	char *out = arg;
	char one[96];

	snprintf(one, sizeof(one), "%s:%s>%s:%s ", m->sandbox_id, m->src,
	         m->dst, m->state);
	strcat(out, one);
}

static void
moves_journal(void)
{
	struct store *s = store_fixture_open();
	struct move_row a = {0}, b = {0}, c = {0};
	char open[512] = "";

	CHECK(s != NULL);
	snprintf(a.sandbox_id, sizeof(a.sandbox_id), "SBA");
	snprintf(a.dst, sizeof(a.dst), "worker-a");
	CHECK(store_move_add(s, &a) == 0 && a.id > 0);
	snprintf(b.sandbox_id, sizeof(b.sandbox_id), "SBB");
	snprintf(b.src, sizeof(b.src), "worker-a");
	snprintf(b.state, sizeof(b.state), "copying");
	CHECK(store_move_add(s, &b) == 0 && b.id > a.id);
	snprintf(c.sandbox_id, sizeof(c.sandbox_id), "SBC");
	CHECK(store_move_add(s, &c) == 0);
	CHECK(store_move_set(s, a.id, "copied", 4096, NULL) == 0);
	CHECK(store_move_set(s, c.id, "failed", 0, "node down") == 0);
	CHECK(store_move_set(s, b.id, "lost", 0, NULL) != 0);
	CHECK(store_move_open(s, collect_move, open) == 0);
	CHECK_STR(open, "SBA:>worker-a:copied SBB:worker-a>:copying ");
	CHECK(store_move_set(s, a.id, "done", 4096, NULL) == 0);
	open[0] = '\0';
	CHECK(store_move_open(s, collect_move, open) == 0);
	CHECK_STR(open, "SBB:worker-a>:copying ");
	store_fixture_close(s);
}

static void
make_app_sandbox(struct store *s, struct sandbox *sb)
{
	struct app a = {0};

	ulid_new(a.id);
	snprintf(a.owner, sizeof(a.owner), "alice");
	snprintf(a.name, sizeof(a.name), "app-%.6s", a.id + 20);
	snprintf(a.tags_json, sizeof(a.tags_json), "[]");
	a.created_at = a.updated_at = clock_now();
	CHECK(store_app_insert(s, &a) == 0);
	memset(sb, 0, sizeof(*sb));
	ulid_new(sb->id);
	snprintf(sb->app_id, sizeof(sb->app_id), "%s", a.id);
	sb->status = SANDBOX_RUNNING;
	snprintf(sb->image, sizeof(sb->image), "img:1");
	snprintf(sb->idle_policy, sizeof(sb->idle_policy), "sleep");
	sb->ports[0] = 3000;
	sb->nports = 1;
	sb->created_at = sb->updated_at = clock_now();
}

static void
count_sb(const struct sandbox *sb, void *arg)
{
	(void)sb;
	(*(int *)arg)++;
}

static void
sandbox_node_round_trip(void)
{
	struct store *s = store_fixture_open();
	struct sandbox a, b, got;
	int n = 0;

	CHECK(s != NULL);
	make_app_sandbox(s, &a);
	make_app_sandbox(s, &b);
	snprintf(b.node, sizeof(b.node), "worker-a");
	CHECK(store_sandbox_insert(s, &a) == 0);
	CHECK(store_sandbox_insert(s, &b) == 0);
	CHECK(store_sandbox_get(s, a.id, &got) == 0);
	CHECK_STR(got.node, "");
	CHECK(store_sandbox_get(s, b.id, &got) == 0);
	CHECK_STR(got.node, "worker-a");
	CHECK(store_sandbox_set_node(s, a.id, "worker-a") == 0);
	CHECK(store_sandbox_set_node(s, "NOSUCH", "worker-a") ==
	      STORE_NOT_FOUND);
	CHECK(store_sandboxes_on_node(s, "worker-a", count_sb, &n) == 0);
	CHECK(n == 2);
	/* An update writes the node it holds. */
	CHECK(store_sandbox_get(s, b.id, &got) == 0);
	got.node[0] = '\0';
	CHECK(store_sandbox_update(s, &got) == 0);
	n = 0;
	CHECK(store_sandboxes_on_node(s, "", count_sb, &n) == 0);
	CHECK(n == 1);
	store_fixture_close(s);
}

/* A database as a daemon of schema 17 left it, with a sandbox. */
static void
make_v17(const char *path, const char *sandbox_id)
{
	sqlite3 *db = NULL;
	char *sql;

	CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db,
	                   "CREATE TABLE schema_migration (version INTEGER "
	                   "PRIMARY KEY, name TEXT NOT NULL, applied_at "
	                   "INTEGER NOT NULL)",
	                   NULL, NULL, NULL) == SQLITE_OK);
	for (size_t i = 0;
	     i < sizeof(store_migrations) / sizeof(store_migrations[0]) &&
	     store_migrations[i].version <= 17;
	     i++) {
		CHECK(sqlite3_exec(db, store_migrations[i].sql, NULL, NULL,
		                   NULL) == SQLITE_OK);
		sql = sqlite3_mprintf("INSERT INTO schema_migration VALUES "
		                      "(%d, %Q, 1)",
		                      store_migrations[i].version,
		                      store_migrations[i].name);
		CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
		sqlite3_free(sql);
	}
	sql = sqlite3_mprintf(
	    "INSERT INTO app (id, owner, name, created_at, updated_at) "
	    "VALUES ('APP17', 'alice', 'old', 1, 1);"
	    "INSERT INTO sandbox (id, app_id, status, image, ports, "
	    "idle_policy, created_at, updated_at) VALUES (%Q, 'APP17', "
	    "'stopped', 'img:1', '3000', 'sleep', 1, 1)",
	    sandbox_id);
	CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_free(sql);
	sqlite3_close(db);
}

static void
migration_from_17(void)
{
	struct store *s = store_fixture_open(), *again = NULL;
	char id[ULID_LEN + 1];
	struct sandbox got;
	struct node_row n = {0};

	CHECK(s != NULL);
	store_close(s);
	unlink(store_fixture_path);
	ulid_new(id);
	make_v17(store_fixture_path, id);
	CHECK(store_open(&again, store_fixture_path) == 0);
	CHECK(store_sandbox_get(again, id, &got) == 0);
	CHECK_STR(got.node, "");
	CHECK(got.status == SANDBOX_STOPPED);
	snprintf(n.name, sizeof(n.name), "worker-a");
	CHECK(store_node_put(again, &n) == 0);
	store_fixture_close(again);
}

/* A backup's database holds the cluster's rows and the sandboxes' nodes. */
static void
backup_carries_the_rows(void)
{
	struct store *s = store_fixture_open(), *copy = NULL;
	struct store_db_info info;
	struct node_row n = {0}, got;
	struct sandbox sb, sgot;
	char dst[192], err[256] = "";

	CHECK(s != NULL);
	snprintf(n.name, sizeof(n.name), "worker-a");
	snprintf(n.data_dir, sizeof(n.data_dir), "/srv/sbx");
	CHECK(store_node_put(s, &n) == 0);
	make_app_sandbox(s, &sb);
	snprintf(sb.node, sizeof(sb.node), "worker-a");
	CHECK(store_sandbox_insert(s, &sb) == 0);
	snprintf(dst, sizeof(dst), "%s/copy.db", store_fixture_dir);
	CHECK(store_backup(store_fixture_path, dst, &info, err, sizeof(err)) ==
	      0);
	CHECK(info.schema_version == store_schema_latest());
	CHECK(store_open(&copy, dst) == 0);
	CHECK(copy && store_node_get(copy, "worker-a", &got) == 0);
	CHECK_STR(got.data_dir, "/srv/sbx");
	CHECK(copy && store_sandbox_get(copy, sb.id, &sgot) == 0);
	CHECK_STR(sgot.node, "worker-a");
	store_close(copy);
	unlink(dst);
	store_fixture_close(s);
}

static const struct unit_test tests[] = {
    {"nodes: upsert, list, status, seen", nodes_upsert_list_status_seen},
    {"join tokens: single use, expiry", join_token_single_use_and_expiry},
    {"moves journal: open ones, oldest first", moves_journal},
    {"sandboxes.node round trip and rows on a node", sandbox_node_round_trip},
    {"migration from schema 17", migration_from_17},
    {"a backup carries the nodes and sandbox.node", backup_carries_the_rows},
};

int
main(void)
{
	if (vault_init() < 0)
		return 1;
	return UNIT_RUN("store_nodes", tests);
}
