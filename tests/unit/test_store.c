/*
 * Unit tests of the SQLite store on a real database file: migrations,
 * tenancy of apps, one sandbox per app, and the conditional status
 * updates that Docker events rely on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "store/store.h"
#include "unit.h"

static char dir[64], path[128];

static struct store *
fresh(void)
{
	struct store *s = NULL;

	snprintf(dir, sizeof(dir), "/tmp/sandboxd-store-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return NULL;
	snprintf(path, sizeof(path), "%s/test.db", dir);
	store_open(&s, path);
	return s;
}

static void
cleanup(struct store *s)
{
	char f[160];

	store_close(s);
	unlink(path);
	snprintf(f, sizeof(f), "%s-wal", path);
	unlink(f);
	snprintf(f, sizeof(f), "%s-shm", path);
	unlink(f);
	rmdir(dir);
}

static void
make_app(struct app *a, const char *owner, const char *name)
{
	memset(a, 0, sizeof(*a));
	ulid_new(a->id);
	snprintf(a->owner, sizeof(a->owner), "%s", owner);
	snprintf(a->name, sizeof(a->name), "%s", name);
	snprintf(a->tags_json, sizeof(a->tags_json), "[]");
	a->created_at = a->updated_at = clock_now();
}

static void
make_sandbox(struct sandbox *sb, const char *app_id)
{
	memset(sb, 0, sizeof(*sb));
	ulid_new(sb->id);
	snprintf(sb->app_id, sizeof(sb->app_id), "%s", app_id);
	snprintf(sb->status, sizeof(sb->status), "creating");
	snprintf(sb->image, sizeof(sb->image), "img:1");
	snprintf(sb->idle_policy, sizeof(sb->idle_policy), "sleep");
	sb->ports[0] = 3000;
	sb->ports[1] = 5173;
	sb->nports = 2;
	sb->created_at = sb->updated_at = clock_now();
}

static void
migrations_are_idempotent(void)
{
	struct store *s = fresh(), *again = NULL;
	char val[32];

	CHECK(s != NULL);
	CHECK(store_meta_set(s, "k", "v") == 0);
	store_close(s);
	CHECK(store_open(&again, path) == 0);
	CHECK(store_meta_get(again, "k", val, sizeof(val)) == 0);
	CHECK_STR(val, "v");
	CHECK(store_meta_get(again, "missing", val, sizeof(val)) ==
	      STORE_NOT_FOUND);
	cleanup(again);
}

static int
count_app(const struct app *a, void *arg)
{
	(void)a;
	(*(int *)arg)++;
	return 0;
}

static void
apps_are_scoped_by_owner(void)
{
	struct store *s = fresh();
	struct app a, b, got;
	int n = 0;

	make_app(&a, "alice", "one");
	make_app(&b, "bob", "two");
	CHECK(store_app_insert(s, &a) == 0);
	CHECK(store_app_insert(s, &b) == 0);
	CHECK(store_app_get(s, "alice", a.id, &got) == 0);
	CHECK_STR(got.name, "one");
	CHECK(store_app_get(s, "bob", a.id, &got) == STORE_NOT_FOUND);
	CHECK(store_app_list(s, "alice", count_app, &n) == 0);
	CHECK(n == 1);
	snprintf(a.name, sizeof(a.name), "renamed");
	CHECK(store_app_update(s, &a) == 0);
	CHECK(store_app_get(s, NULL, a.id, &got) == 0);
	CHECK_STR(got.name, "renamed");
	CHECK(store_app_delete(s, b.id) == 0);
	CHECK(store_app_delete(s, b.id) == STORE_NOT_FOUND);
	cleanup(s);
}

static void
one_sandbox_per_app(void)
{
	struct store *s = fresh();
	struct sandbox sb, sb2, got;
	struct app a, gota;

	make_app(&a, "alice", "one");
	CHECK(store_app_insert(s, &a) == 0);
	make_sandbox(&sb, a.id);
	make_sandbox(&sb2, a.id);
	CHECK(store_sandbox_insert(s, &sb) == 0);
	CHECK(store_sandbox_insert(s, &sb2) == STORE_CONFLICT);
	CHECK(store_sandbox_get(s, sb.id, &got) == 0);
	CHECK(got.nports == 2 && got.ports[1] == 5173);
	CHECK_STR(got.owner, "alice");
	CHECK(store_app_get(s, NULL, a.id, &gota) == 0);
	CHECK_STR(gota.current_sandbox_id, sb.id);
	CHECK(store_sandbox_delete(s, sb.id) == 0);
	CHECK(store_sandbox_by_app(s, a.id, &got) == STORE_NOT_FOUND);
	cleanup(s);
}

static void
exit_marks_only_running_rows(void)
{
	struct store *s = fresh();
	struct sandbox sb, got;
	struct app a;

	make_app(&a, "alice", "one");
	store_app_insert(s, &a);
	make_sandbox(&sb, a.id);
	store_sandbox_insert(s, &sb);
	/* creating: a die event must not turn it into stopped */
	CHECK(store_sandbox_mark_exited(s, sb.id, 1, false) == STORE_NOT_FOUND);
	snprintf(sb.status, sizeof(sb.status), "running");
	CHECK(store_sandbox_update(s, &sb) == 0);
	CHECK(store_sandbox_mark_exited(s, sb.id, 137, true) == 0);
	CHECK(store_sandbox_get(s, sb.id, &got) == 0);
	CHECK_STR(got.status, "stopped");
	CHECK_STR(got.status_reason, "oom_killed");
	CHECK(got.has_exit_code && got.exit_code == 137);
	CHECK(got.oom_killed);
	cleanup(s);
}

static void
api_keys_by_hash(void)
{
	struct store *s = fresh();
	char name[64];
	int64_t n = -1;

	CHECK(store_apikey_count(s, &n) == 0 && n == 0);
	CHECK(store_apikey_replace(s, "default", "abc123", "sk_x...") == 0);
	CHECK(store_apikey_count(s, &n) == 0 && n == 1);
	CHECK(store_apikey_lookup(s, "abc123", name, sizeof(name)) == 0);
	CHECK_STR(name, "default");
	CHECK(store_apikey_lookup(s, "abc124", name, sizeof(name)) ==
	      STORE_NOT_FOUND);
	cleanup(s);
}

static int
collect_ids(const struct task *t, void *arg)
{
	strcat(arg, t->id);
	strcat(arg, t->result ? "+" : "-");
	return 0;
}

static void
task_rows(void)
{
	struct store *s = fresh();
	struct task a, b, got;
	char ids[256] = "", want[256];

	memset(&a, 0, sizeof(a));
	snprintf(a.id, sizeof(a.id), "01ARZ3NDEKTSV4RRFFQ69G5FA1");
	snprintf(a.sandbox_id, sizeof(a.sandbox_id),
	         "01ARZ3NDEKTSV4RRFFQ69G5FS1");
	snprintf(a.agent, sizeof(a.agent), "opencode");
	snprintf(a.status, sizeof(a.status), "running");
	a.prompt = "hello";
	a.timeout_s = 600;
	a.created_at = 1;
	b = a;
	snprintf(b.id, sizeof(b.id), "01ARZ3NDEKTSV4RRFFQ69G5FA2");
	CHECK(store_task_insert(s, &a) == 0);
	/* One running task per sandbox. */
	CHECK(store_task_insert(s, &b) == STORE_CONFLICT);
	CHECK(store_task_finish(s, a.id, "succeeded", "", "abc", "{\"x\":1}",
	                        5) == 0);
	/* Only a running task finishes, once. */
	CHECK(store_task_finish(s, a.id, "failed", "internal", "", "{}", 6) ==
	      STORE_NOT_FOUND);
	CHECK(store_task_insert(s, &b) == 0);
	CHECK(store_task_get(s, a.sandbox_id, a.id, &got) == 0);
	CHECK_STR(got.status, "succeeded");
	CHECK_STR(got.checkpoint_id, "abc");
	CHECK_STR(got.result, "{\"x\":1}");
	CHECK_STR(got.prompt, "hello");
	CHECK(got.finished_at == 5 && got.timeout_s == 600);
	store_task_release(&got);
	CHECK(store_task_get(s, "01ARZ3NDEKTSV4RRFFQ69G5FS2", a.id, &got) ==
	      STORE_NOT_FOUND);
	CHECK(store_task_list(s, a.sandbox_id, 10, collect_ids, ids) == 0);
	snprintf(want, sizeof(want), "%s-%s+", b.id, a.id); /* newest first */
	CHECK_STR(ids, want);
	ids[0] = '\0';
	CHECK(store_task_list_running(s, collect_ids, ids) == 0);
	snprintf(want, sizeof(want), "%s-", b.id);
	CHECK_STR(ids, want);
	CHECK(store_task_delete_sandbox(s, a.sandbox_id) == 0);
	CHECK(store_task_get(s, NULL, b.id, &got) == STORE_NOT_FOUND);
	cleanup(s);
}

static const struct unit_test tests[] = {
    {"task rows", task_rows},
    {"migrations are idempotent", migrations_are_idempotent},
    {"apps are scoped by owner", apps_are_scoped_by_owner},
    {"one sandbox per app", one_sandbox_per_app},
    {"exit marks only running rows", exit_marks_only_running_rows},
    {"api keys are found by hash", api_keys_by_hash},
};

int
main(void)
{
	return UNIT_RUN("store", tests);
}
