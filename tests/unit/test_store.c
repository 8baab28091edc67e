/*
 * Unit tests of the SQLite store on a real database file: migrations,
 * tenancy of apps, one sandbox per app, the conditional status updates
 * that Docker events rely on, sealed secret rows, settings, app config,
 * the proxy-token lookup, and the names of sandbox and task states (a
 * name the daemon does not know, even one written into the database
 * behind its back, is refused).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/clock.h"
#include "store/store.h"
#include "store_fixture.h"
#include "unit.h"

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
	sb->status = SANDBOX_CREATING;
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
	struct store *s = store_fixture_open(), *again = NULL;
	char val[32];

	CHECK(s != NULL);
	CHECK(store_meta_set(s, "k", "v") == 0);
	store_close(s);
	CHECK(store_open(&again, store_fixture_path) == 0);
	CHECK(store_meta_get(again, "k", val, sizeof(val)) == 0);
	CHECK_STR(val, "v");
	CHECK(store_meta_get(again, "missing", val, sizeof(val)) ==
	      STORE_NOT_FOUND);
	store_fixture_close(again);
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
	struct store *s = store_fixture_open();
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
	store_fixture_close(s);
}

static void
one_sandbox_per_app(void)
{
	struct store *s = store_fixture_open();
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
	store_fixture_close(s);
}

static void
exit_marks_only_running_rows(void)
{
	struct store *s = store_fixture_open();
	struct sandbox sb, got;
	struct app a;

	make_app(&a, "alice", "one");
	store_app_insert(s, &a);
	make_sandbox(&sb, a.id);
	store_sandbox_insert(s, &sb);
	/* creating: a die event must not turn it into stopped */
	CHECK(store_sandbox_mark_exited(s, sb.id, 1, false) == STORE_NOT_FOUND);
	sb.status = SANDBOX_RUNNING;
	CHECK(store_sandbox_update(s, &sb) == 0);
	CHECK(store_sandbox_mark_exited(s, sb.id, 137, true) == 0);
	CHECK(store_sandbox_get(s, sb.id, &got) == 0);
	CHECK_STR(sandbox_state_name(got.status), "stopped");
	CHECK_STR(got.status_reason, "oom_killed");
	CHECK(got.has_exit_code && got.exit_code == 137);
	CHECK(got.oom_killed);
	store_fixture_close(s);
}

/* The frozen flag: kept by updates, set only on running rows, cleared
 * when the container exits. */
static void
frozen_follows_running_rows(void)
{
	struct store *s = store_fixture_open();
	struct sandbox sb, got;
	struct app a;

	make_app(&a, "alice", "one");
	store_app_insert(s, &a);
	make_sandbox(&sb, a.id);
	store_sandbox_insert(s, &sb);
	CHECK(store_sandbox_set_frozen(s, sb.id, true) == STORE_NOT_FOUND);
	sb.status = SANDBOX_RUNNING;
	CHECK(store_sandbox_update(s, &sb) == 0);
	CHECK(store_sandbox_get(s, sb.id, &got) == 0 && !got.frozen);
	CHECK(store_sandbox_set_frozen(s, sb.id, true) == 0);
	CHECK(store_sandbox_get(s, sb.id, &got) == 0 && got.frozen);
	got.last_active_at += 5; /* another write keeps it */
	CHECK(store_sandbox_update(s, &got) == 0);
	CHECK(store_sandbox_get(s, sb.id, &got) == 0 && got.frozen);
	CHECK(store_sandbox_mark_exited(s, sb.id, 137, false) == 0);
	CHECK(store_sandbox_get(s, sb.id, &got) == 0 && !got.frozen);
	CHECK(store_sandbox_set_frozen(s, sb.id, true) == STORE_NOT_FOUND);
	store_fixture_close(s);
}

static void
api_keys_by_hash(void)
{
	struct store *s = store_fixture_open();
	char name[64];
	int64_t n = -1;

	CHECK(store_apikey_count(s, &n) == 0 && n == 0);
	CHECK(store_apikey_replace(s, "default", "abc123", "sk_x...") == 0);
	CHECK(store_apikey_count(s, &n) == 0 && n == 1);
	CHECK(store_apikey_lookup(s, "abc123", name, sizeof(name)) == 0);
	CHECK_STR(name, "default");
	CHECK(store_apikey_lookup(s, "abc124", name, sizeof(name)) ==
	      STORE_NOT_FOUND);
	store_fixture_close(s);
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
	struct store *s = store_fixture_open();
	struct task a, b, got;
	char ids[256] = "", want[256];

	memset(&a, 0, sizeof(a));
	snprintf(a.id, sizeof(a.id), "01ARZ3NDEKTSV4RRFFQ69G5FA1");
	snprintf(a.sandbox_id, sizeof(a.sandbox_id),
	         "01ARZ3NDEKTSV4RRFFQ69G5FS1");
	snprintf(a.agent, sizeof(a.agent), "opencode");
	a.status = TASK_RUNNING;
	a.prompt = "hello";
	a.timeout_s = 600;
	a.created_at = 1;
	b = a;
	snprintf(b.id, sizeof(b.id), "01ARZ3NDEKTSV4RRFFQ69G5FA2");
	CHECK(store_task_insert(s, &a) == 0);
	/* One running task per sandbox. */
	CHECK(store_task_insert(s, &b) == STORE_CONFLICT);
	CHECK(store_task_finish(s, a.id, TASK_SUCCEEDED, "", "abc", "{\"x\":1}",
	                        5) == 0);
	/* Only a running task finishes, once. */
	CHECK(store_task_finish(s, a.id, TASK_FAILED, "internal", "", "{}",
	                        6) == STORE_NOT_FOUND);
	CHECK(store_task_insert(s, &b) == 0);
	CHECK(store_task_get(s, a.sandbox_id, a.id, &got) == 0);
	CHECK_STR(task_state_name(got.status), "succeeded");
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
	store_fixture_close(s);
}

static bool
secret_is(struct store *s, const char *kind, const char *owner,
          const char *name, const char *want)
{
	struct vault_secret v;
	bool ok;

	if (store_secret_get(s, kind, owner, name, &v) != 0)
		return false;
	ok = v.len == strlen(want) && strcmp(v.data, want) == 0;
	vault_secret_free(&v);
	return ok;
}

static void
secret_rows(void)
{
	struct store *s = store_fixture_open_sealed();
	struct vault_usage *use = NULL;
	struct vault_secret v;
	size_t n = 0;
	int64_t ok, bad;

	CHECK(store_secret_put(s, STORE_SECRET_GIT_TOKEN, "alice", "gh",
	                       "ghp_1", 5) == 0);
	CHECK(store_secret_put(s, STORE_SECRET_GIT_TOKEN, "bob", "gh", "ghp_2",
	                       5) == 0);
	CHECK(secret_is(s, STORE_SECRET_GIT_TOKEN, "alice", "gh", "ghp_1"));
	CHECK(secret_is(s, STORE_SECRET_GIT_TOKEN, "bob", "gh", "ghp_2"));
	/* Replacing keeps one row. */
	CHECK(store_secret_put(s, STORE_SECRET_GIT_TOKEN, "alice", "gh",
	                       "ghp_new", 7) == 0);
	CHECK(secret_is(s, STORE_SECRET_GIT_TOKEN, "alice", "gh", "ghp_new"));
	CHECK(store_secret_usage(s, &use, &n) == 0 && n == 1 && use[0].n == 2);
	CHECK(n == 1 &&
	      strcmp(use[0].key_id, vault_key_id(store_fixture_vault, 0)) == 0);
	free(use);
	CHECK(store_secret_check(s, &ok, &bad) == 0 && ok == 2 && bad == 0);
	CHECK(store_secret_get(s, STORE_SECRET_GIT_TOKEN, "carol", "gh", &v) ==
	      STORE_NOT_FOUND);
	CHECK(store_secret_exists(s, STORE_SECRET_GIT_TOKEN, "bob", "gh") == 0);
	CHECK(store_secret_delete(s, STORE_SECRET_GIT_TOKEN, "bob", "gh") == 0);
	CHECK(store_secret_delete(s, STORE_SECRET_GIT_TOKEN, "bob", "gh") ==
	      STORE_NOT_FOUND);
	CHECK(store_secret_exists(s, STORE_SECRET_GIT_TOKEN, "bob", "gh") ==
	      STORE_NOT_FOUND);
	/* Any short kind is a namespace of its own (no CHECK list). */
	CHECK(store_secret_put(s, STORE_SECRET_SANDBOX_PROXY, "",
	                       "01ARZ3NDEKTSV4RRFFQ69G5FAV", "sk_tok", 6) == 0);
	CHECK(secret_is(s, STORE_SECRET_SANDBOX_PROXY, "",
	                "01ARZ3NDEKTSV4RRFFQ69G5FAV", "sk_tok"));
	CHECK(store_secret_put(s, "a_kind_too_long_", "", "n", "v", 1) < 0);
	/* No vault: nothing is sealed, and nothing opens. */
	store_set_vault(s, NULL);
	CHECK(store_secret_put(s, STORE_SECRET_GIT_TOKEN, "x", "y", "z", 1) <
	      0);
	CHECK(store_secret_get(s, STORE_SECRET_GIT_TOKEN, "alice", "gh", &v) <
	      0);
	CHECK(v.data == NULL);
	store_fixture_close(s);
}

static void
agent_credentials(void)
{
	struct store *s = store_fixture_open_sealed();
	struct vault_secret key;
	char method[16], model[64];

	CHECK(store_agent_method(s, "", "claude-code", method) ==
	      STORE_NOT_FOUND);
	CHECK(store_secret_put(s, STORE_SECRET_AGENT_OAUTH, "", "claude-code",
	                       "{}", 2) == 0);
	CHECK(store_agent_method(s, "", "claude-code", method) == 0);
	CHECK_STR(method, "oauth");
	CHECK(store_agent_key(s, "", "claude-code", &key) == STORE_NOT_FOUND);
	/* An API key wins over OAuth. */
	CHECK(store_secret_put(s, STORE_SECRET_AGENT_API_KEY, "", "claude-code",
	                       "sk-ant-x", 8) == 0);
	CHECK(store_agent_method(s, "", "claude-code", method) == 0);
	CHECK_STR(method, "api_key");
	CHECK(store_agent_key(s, "", "claude-code", &key) == 0);
	CHECK(key.len == 8 && strcmp(key.data, "sk-ant-x") == 0);
	vault_secret_free(&key);
	CHECK(key.data == NULL);
	CHECK(store_agent_method(s, "", "opencode", method) == STORE_NOT_FOUND);
	CHECK(store_agent_default_model(s, "", "opencode", model,
	                                sizeof(model)) == STORE_NOT_FOUND);
	store_fixture_close(s);
}

/*
 * Tenancy: each tenant's credential is its own, the instance's ("") is
 * the fallback, and no call in one scope touches another's rows.
 */
static void
agent_tenancy(void)
{
	struct store *s = store_fixture_open_sealed();
	struct vault_secret key;
	struct store_owner *owners;
	char method[16], owner[STORE_SECRET_OWNER_MAX + 1], key_name[256];
	const char *k[] = {"agents.default_models.opencode",
	                   "tenant/alice/agents.default_models.opencode"};
	const char *v[] = {"zen/instance", "zen/alice"};
	char model[64];
	size_t n;

	CHECK(store_agent_source(s, "alice", "claude-code", owner) ==
	      STORE_NOT_FOUND);
	CHECK_STR(owner, "");
	/* The instance's key: everyone's fallback. */
	CHECK(store_agent_connect(s, "", "claude-code",
	                          STORE_SECRET_AGENT_API_KEY, "sk-inst",
	                          7) == 0);
	CHECK(store_agent_source(s, "alice", "claude-code", owner) == 0);
	CHECK_STR(owner, "");
	CHECK(store_agent_source(s, "bob", "claude-code", owner) == 0);
	CHECK_STR(owner, "");
	/* Alice's own wins for alice, and only for her. */
	CHECK(store_agent_connect(s, "alice", "claude-code",
	                          STORE_SECRET_AGENT_API_KEY, "sk-alice",
	                          8) == 0);
	CHECK(store_agent_source(s, "alice", "claude-code", owner) == 0);
	CHECK_STR(owner, "alice");
	CHECK(store_agent_source(s, "bob", "claude-code", owner) == 0);
	CHECK_STR(owner, "");
	CHECK(store_agent_key(s, "alice", "claude-code", &key) == 0);
	CHECK(key.data && strcmp(key.data, "sk-alice") == 0);
	vault_secret_free(&key);
	CHECK(store_agent_method(s, "bob", "claude-code", method) ==
	      STORE_NOT_FOUND);
	/* Bob's login replaces Bob's key only: Alice's and the instance's
	 * stay. */
	CHECK(store_agent_connect(s, "bob", "claude-code",
	                          STORE_SECRET_AGENT_OAUTH, "{}", 2) == 0);
	CHECK(store_agent_connect(s, "bob", "claude-code",
	                          STORE_SECRET_AGENT_API_KEY, "sk-bob",
	                          6) == 0);
	CHECK(store_agent_connect(s, "bob", "claude-code",
	                          STORE_SECRET_AGENT_OAUTH, "{}", 2) == 0);
	CHECK(store_agent_method(s, "bob", "claude-code", method) == 0);
	CHECK_STR(method, "oauth");
	CHECK(store_agent_method(s, "alice", "claude-code", method) == 0);
	CHECK_STR(method, "api_key");
	CHECK(store_agent_method(s, "", "claude-code", method) == 0);
	CHECK_STR(method, "api_key");
	CHECK(store_agent_connect(s, "", "claude-code",
	                          STORE_SECRET_AGENT_OAUTH, "{}", 2) == 0);
	CHECK(store_agent_oauth_owners(s, "claude-code", &owners, &n) == 0);
	CHECK(n == 2);
	if (n == 2) {
		CHECK_STR(owners[0].name, "");
		CHECK_STR(owners[1].name, "bob");
	}
	free(owners);
	/* Removing Alice's falls back to the instance's. */
	CHECK(store_secret_delete(s, STORE_SECRET_AGENT_API_KEY, "alice",
	                          "claude-code") == 0);
	CHECK(store_agent_source(s, "alice", "claude-code", owner) == 0);
	CHECK_STR(owner, "");
	/* Default models: keys per scope, no fallback in the store. */
	CHECK(store_agent_model_key("", "opencode", key_name,
	                            sizeof(key_name)) == 0);
	CHECK_STR(key_name, k[0]);
	CHECK(store_agent_model_key("alice", "opencode", key_name,
	                            sizeof(key_name)) == 0);
	CHECK_STR(key_name, k[1]);
	CHECK(store_agent_model_key("alice", "opencode", key_name, 8) < 0);
	CHECK(store_setting_set(s, k, v, 2) == 0);
	CHECK(store_agent_default_model(s, "alice", "opencode", model,
	                                sizeof(model)) == 0);
	CHECK_STR(model, "zen/alice");
	CHECK(store_agent_default_model(s, "", "opencode", model,
	                                sizeof(model)) == 0);
	CHECK_STR(model, "zen/instance");
	CHECK(store_agent_default_model(s, "bob", "opencode", model,
	                                sizeof(model)) == STORE_NOT_FOUND);
	store_fixture_close(s);
}

static void
settings_merge_and_clear(void)
{
	struct store *s = store_fixture_open();
	const char *k1[] = {"agents.default_models.opencode",
	                    "agents.default_models.claude-code"};
	const char *v1[] = {"zen/model-a", "claude-x"};
	const char *v2[] = {"", NULL};
	char val[64];

	CHECK(store_setting_set(s, k1, v1, 2) == 0);
	CHECK(store_agent_default_model(s, "", "opencode", val, sizeof(val)) ==
	      0);
	CHECK_STR(val, "zen/model-a");
	CHECK(store_setting_get(s, k1[1], val, sizeof(val)) == 0);
	CHECK_STR(val, "claude-x");
	/* "" and NULL clear; clearing what is not set is fine. */
	CHECK(store_setting_set(s, k1, v2, 2) == 0);
	CHECK(store_setting_set(s, k1, v2, 2) == 0);
	CHECK(store_setting_get(s, k1[0], val, sizeof(val)) == STORE_NOT_FOUND);
	CHECK(store_setting_get(s, k1[1], val, sizeof(val)) == STORE_NOT_FOUND);
	store_fixture_close(s);
}

struct env_seen {
	char text[256];
};

static int
env_collect(const char *name, const char *value, size_t len, void *arg)
{
	struct env_seen *e = arg;
	size_t n = strlen(e->text);

	snprintf(e->text + n, sizeof(e->text) - n, "%s=%.*s;", name, (int)len,
	         value);
	return 0;
}

static int
config_keys(const struct app_config *c, void *arg)
{
	size_t n = strlen(arg);

	snprintf((char *)arg + n, 256 - n, "%s%s%s,", c->key,
	         c->sensitive ? "*" : "=", c->value ? c->value : "");
	return 0;
}

static void
app_config_rows(void)
{
	struct store *s = store_fixture_open_sealed();
	struct env_seen env = {""};
	struct app_config c;
	struct app a;
	char keys[256] = "";
	bool created = false;

	make_app(&a, "alice", "one");
	CHECK(store_app_insert(s, &a) == 0);
	CHECK(store_app_config_put(s, a.id, "PORT", "8080", false, true,
	                           &created) == 0 &&
	      created);
	CHECK(store_app_config_put(s, a.id, "DB_PASSWORD", "hunter2", true,
	                           true, &created) == 0 &&
	      created);
	CHECK(store_app_config_put(s, a.id, "NOTE", "", false, false,
	                           &created) == 0);
	/* Sensitive values are not read back; value_set says one is there. */
	CHECK(store_app_config_get(s, a.id, "DB_PASSWORD", &c) == 0);
	CHECK(c.sensitive && c.expose_env && c.value == NULL && c.value_set);
	store_app_config_release(&c);
	CHECK(store_app_config_get(s, a.id, "NOTE", &c) == 0);
	CHECK(!c.value_set && c.value && c.value[0] == '\0');
	store_app_config_release(&c);
	CHECK(secret_is(s, STORE_SECRET_APP_CONFIG, a.id, "DB_PASSWORD",
	                "hunter2"));
	CHECK(store_app_config_list(s, a.id, config_keys, keys) == 0);
	CHECK_STR(keys, "DB_PASSWORD*,NOTE=,PORT=8080,");
	CHECK(store_app_config_env(s, a.id, env_collect, &env) == 0);
	CHECK_STR(env.text, "DB_PASSWORD=hunter2;PORT=8080;");
	/* Sensitive -> plain drops the sealed copy; replacing keeps one row. */
	CHECK(store_app_config_put(s, a.id, "DB_PASSWORD", "plain", false,
	                           false, &created) == 0 &&
	      !created);
	CHECK(store_secret_exists(s, STORE_SECRET_APP_CONFIG, a.id,
	                          "DB_PASSWORD") == STORE_NOT_FOUND);
	CHECK(store_app_config_get(s, a.id, "DB_PASSWORD", &c) == 0);
	CHECK(!c.sensitive && c.value && strcmp(c.value, "plain") == 0);
	store_app_config_release(&c);
	CHECK(store_app_config_delete(s, a.id, "NOTE") == 0);
	CHECK(store_app_config_delete(s, a.id, "NOTE") == STORE_NOT_FOUND);
	/* Another app's rows are not this one's. */
	CHECK(store_app_config_get(s, "01ARZ3NDEKTSV4RRFFQ69G5FAV", "PORT",
	                           &c) == STORE_NOT_FOUND);
	CHECK(store_app_config_put(s, "01ARZ3NDEKTSV4RRFFQ69G5FAV", "PORT", "1",
	                           false, false, &created) == STORE_NOT_FOUND);
	store_fixture_close(s);
}

static void
app_config_cap_and_app_delete(void)
{
	struct store *s = store_fixture_open_sealed();
	struct app a;
	char key[16];
	bool created;
	int rc = 0;

	make_app(&a, "alice", "one");
	CHECK(store_app_insert(s, &a) == 0);
	for (int i = 0; rc == 0 && i < APP_CONFIG_MAX_KEYS; i++) {
		snprintf(key, sizeof(key), "K%d", i);
		rc = store_app_config_put(s, a.id, key, "v", i % 2 == 0, false,
		                          &created);
	}
	CHECK(rc == 0);
	CHECK(store_app_config_put(s, a.id, "ONE_MORE", "v", false, false,
	                           &created) == STORE_TOO_MANY);
	/* Replacing an existing key is not a new one. */
	CHECK(store_app_config_put(s, a.id, "K1", "w", false, false,
	                           &created) == 0);
	CHECK(store_secret_exists(s, STORE_SECRET_APP_CONFIG, a.id, "K0") == 0);
	/* The app goes, and its config and sealed values with it. */
	CHECK(store_app_delete(s, a.id) == 0);
	CHECK(store_secret_exists(s, STORE_SECRET_APP_CONFIG, a.id, "K0") ==
	      STORE_NOT_FOUND);
	CHECK(store_app_insert(s, &a) == 0); /* same id: nothing left over */
	CHECK(store_app_config_list(s, a.id, config_keys, key) == 0);
	store_fixture_close(s);
}

static int
cred_names(const struct git_credential *c, void *arg)
{
	struct buf *b = arg;

	return buf_appendf(b, "%s@%s,", c->name, c->host) < 0;
}

static void
git_credentials_and_import(void)
{
	struct store *s = store_fixture_open_sealed();
	struct git_credential c = {0}, got;
	struct vault_secret tok;
	struct buf names;
	struct app a, back;

	ulid_new(c.id);
	snprintf(c.owner, sizeof(c.owner), "alice");
	snprintf(c.name, sizeof(c.name), "gh");
	snprintf(c.host, sizeof(c.host), "github.com");
	c.created_at = clock_now();
	CHECK(store_gitcred_insert(s, &c, "ghp_secret", 10) == 0);
	/* a second of the same name for the tenant is a conflict */
	ulid_new(got.id);
	memcpy(got.owner, c.owner, sizeof(c.owner));
	memcpy(got.name, c.name, sizeof(c.name));
	memcpy(got.host, c.host, sizeof(c.host));
	got.username[0] = '\0';
	got.created_at = c.created_at;
	CHECK(store_gitcred_insert(s, &got, "x", 1) == STORE_CONFLICT);
	CHECK(store_gitcred_get(s, "alice", c.id, &got) == 0);
	CHECK_STR(got.host, "github.com");
	CHECK(store_gitcred_get(s, "bob", c.id, &got) == STORE_NOT_FOUND);
	CHECK(store_gitcred_token(s, "bob", c.id, &tok) == STORE_NOT_FOUND);
	CHECK(store_gitcred_token(s, "alice", c.id, &tok) == 0);
	CHECK(tok.len == 10 && memcmp(tok.data, "ghp_secret", 10) == 0);
	vault_secret_free(&tok);
	buf_init(&names, 0);
	CHECK(store_gitcred_list(s, "alice", cred_names, &names) == 0);
	CHECK_STR(names.data ? names.data : "", "gh@github.com,");
	buf_release(&names);

	/* an import records its time, and the branch only when none was
	 * named */
	make_app(&a, "alice", "imported");
	snprintf(a.git_repo_url, sizeof(a.git_repo_url), "https://x.test/r");
	CHECK(store_app_insert(s, &a) == 0);
	CHECK(store_app_imported(s, a.id, "dev", 1234) == 0);
	CHECK(store_app_get(s, "alice", a.id, &back) == 0);
	CHECK_STR(back.git_branch, "dev");
	CHECK(back.last_import_at == 1234);
	CHECK(store_app_imported(s, a.id, "other", 5678) == 0);
	CHECK(store_app_get(s, "alice", a.id, &back) == 0);
	CHECK_STR(back.git_branch, "dev");
	CHECK(back.last_import_at == 5678);

	/* delete: the row and its sealed token go together */
	CHECK(store_gitcred_delete(s, "bob", c.id) == STORE_NOT_FOUND);
	CHECK(store_gitcred_delete(s, "alice", c.id) == 0);
	CHECK(store_secret_exists(s, STORE_SECRET_GIT_TOKEN, "alice", c.id) ==
	      STORE_NOT_FOUND);
	CHECK(store_gitcred_token(s, "alice", c.id, &tok) == STORE_NOT_FOUND);
	store_fixture_close(s);
}

static void
proxy_token_lookup(void)
{
	struct store *s = store_fixture_open();
	struct sandbox sb, sb2, got;
	struct app a, b;

	make_app(&a, "alice", "one");
	make_app(&b, "alice", "two");
	store_app_insert(s, &a);
	store_app_insert(s, &b);
	make_sandbox(&sb, a.id);
	make_sandbox(&sb2, b.id);
	store_sandbox_insert(s, &sb);
	store_sandbox_insert(s, &sb2);
	/* No token yet: "" matches nothing, not every sandbox. */
	CHECK(store_sandbox_by_proxy_token(s, "", &got) == STORE_NOT_FOUND);
	CHECK(store_sandbox_set_proxy_token(s, sb.id, "aa11") == 0);
	CHECK(store_sandbox_by_proxy_token(s, "aa11", &got) == 0);
	CHECK_STR(got.id, sb.id);
	CHECK_STR(got.owner, "alice");
	CHECK(store_sandbox_by_proxy_token(s, "aa12", &got) == STORE_NOT_FOUND);
	CHECK(store_sandbox_set_proxy_token(s, sb2.id, "aa11") ==
	      STORE_CONFLICT);
	CHECK(store_sandbox_set_proxy_token(s, sb.id, "") == 0);
	CHECK(store_sandbox_by_proxy_token(s, "aa11", &got) == STORE_NOT_FOUND);
	CHECK(store_sandbox_set_proxy_token(s, "01ARZ3NDEKTSV4RRFFQ69G5FAV",
	                                    "bb") == STORE_NOT_FOUND);
	store_fixture_close(s);
}

/* The one spelling of each state: the database's and the API's. */
static const struct {
	enum sandbox_state st;
	const char *name;
} sandbox_names[] = {
    {SANDBOX_CREATING, "creating"},
    {SANDBOX_RUNNING, "running"},
    {SANDBOX_STOPPED, "stopped"},
    {SANDBOX_ERROR, "error"},
};

static const struct {
	enum task_state st;
	const char *name;
} task_names[] = {
    {TASK_RUNNING, "running"},       {TASK_SUCCEEDED, "succeeded"},
    {TASK_FAILED, "failed"},         {TASK_CANCELLED, "cancelled"},
    {TASK_CANCELLING, "cancelling"},
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static void
state_names_round_trip(void)
{
	for (size_t i = 0; i < NELEM(sandbox_names); i++) {
		CHECK_STR(sandbox_state_name(sandbox_names[i].st),
		          sandbox_names[i].name);
		CHECK(sandbox_state_parse(sandbox_names[i].name) ==
		      (int)sandbox_names[i].st);
	}
	for (size_t i = 0; i < NELEM(task_names); i++) {
		CHECK_STR(task_state_name(task_names[i].st),
		          task_names[i].name);
		CHECK(task_state_parse(task_names[i].name) ==
		      (int)task_names[i].st);
	}
	/* The lists above are every value: one past the last has no name. */
	CHECK(sandbox_state_name((enum sandbox_state)NELEM(sandbox_names)) ==
	      NULL);
	CHECK(task_state_name((enum task_state)NELEM(task_names)) == NULL);
}

static void
unknown_state_names_refused(void)
{
	static const char *const bad[] = {
	    "", "hibernating", "Running", "running ", " stopped", "stop",
	};

	for (size_t i = 0; i < NELEM(bad); i++) {
		CHECK(sandbox_state_parse(bad[i]) == -1);
		CHECK(task_state_parse(bad[i]) == -1);
	}
	CHECK(sandbox_state_parse(NULL) == -1);
	CHECK(task_state_parse(NULL) == -1);
	/* Each enum has its own names. */
	CHECK(sandbox_state_parse("succeeded") == -1);
	CHECK(task_state_parse("creating") == -1);
}

static void
make_task(struct task *t, const char *sandbox_id)
{
	memset(t, 0, sizeof(*t));
	ulid_new(t->id);
	snprintf(t->sandbox_id, sizeof(t->sandbox_id), "%s", sandbox_id);
	snprintf(t->agent, sizeof(t->agent), "opencode");
	t->status = TASK_RUNNING;
	t->prompt = "hello";
	t->timeout_s = 600;
	t->created_at = 1;
}

/* Every state goes into the database and comes back as itself. */
static void
every_state_is_stored(void)
{
	struct store *s = store_fixture_open();
	struct sandbox sb, got;
	struct task t, row;
	struct app a;

	make_app(&a, "alice", "one");
	CHECK(store_app_insert(s, &a) == 0);
	make_sandbox(&sb, a.id);
	CHECK(store_sandbox_insert(s, &sb) == 0);
	for (size_t i = 0; i < NELEM(sandbox_names); i++) {
		sb.status = sandbox_names[i].st;
		CHECK(store_sandbox_update(s, &sb) == 0);
		CHECK(store_sandbox_get(s, sb.id, &got) == 0);
		CHECK(got.status == sandbox_names[i].st);
	}
	for (size_t i = 0; i < NELEM(task_names); i++) {
		enum task_state st = task_names[i].st;
		bool final = st == TASK_SUCCEEDED || st == TASK_FAILED ||
		             st == TASK_CANCELLED;
		make_task(&t, sb.id);
		CHECK(store_task_insert(s, &t) == 0);
		/* Only a final state ends a task; the row stays running. */
		CHECK(store_task_finish(s, t.id, st, "", "", "{}", 5) ==
		      (final ? 0 : -1));
		CHECK(store_task_get(s, sb.id, t.id, &row) == 0);
		CHECK(row.status == (final ? st : TASK_RUNNING));
		store_task_release(&row);
		if (!final)
			CHECK(store_task_finish(s, t.id, TASK_FAILED, "", "",
			                        "{}", 5) == 0);
	}
	store_fixture_close(s);
}

/* Writes a row's status behind the store's back, past its CHECK. */
static void
forge_status(const char *table, const char *id, const char *status)
{
	sqlite3 *db = NULL;
	char *sql = sqlite3_mprintf("PRAGMA ignore_check_constraints = ON;"
	                            "UPDATE %s SET status = %Q WHERE id = %Q",
	                            table, status, id);

	CHECK(sqlite3_open(store_fixture_path, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
	CHECK(sqlite3_changes(db) == 1);
	sqlite3_free(sql);
	sqlite3_close(db);
}

static int
count_sandbox(const struct sandbox *sb, void *arg)
{
	(void)sb;
	++*(int *)arg;
	return 0;
}

static int
count_task(const struct task *t, void *arg)
{
	(void)t;
	++*(int *)arg;
	return 0;
}

static void
unknown_state_in_database(void)
{
	struct store *s = store_fixture_open();
	struct sandbox sb, got;
	struct task t, row;
	struct app a;
	int n = 0;

	make_app(&a, "alice", "one");
	CHECK(store_app_insert(s, &a) == 0);
	make_sandbox(&sb, a.id);
	CHECK(store_sandbox_insert(s, &sb) == 0);
	make_task(&t, sb.id);
	CHECK(store_task_insert(s, &t) == 0);

	forge_status("sandbox", sb.id, "hibernating");
	CHECK(store_sandbox_get(s, sb.id, &got) == -1);
	CHECK(store_sandbox_by_app(s, a.id, &got) == -1);
	CHECK(store_sandbox_list(s, count_sandbox, &n) == -1 && n == 0);

	forge_status("task", t.id, "paused");
	CHECK(store_task_get(s, sb.id, t.id, &row) == -1);
	CHECK(store_task_list(s, sb.id, 10, count_task, &n) == -1 && n == 0);
	/* Not running either: recovery does not see it. */
	CHECK(store_task_list_running(s, count_task, &n) == 0 && n == 0);
	/* cancelling is an answer, never a row. */
	forge_status("task", t.id, "cancelling");
	CHECK(store_task_get(s, sb.id, t.id, &row) == -1);

	/* Put right, the rows read again. */
	forge_status("sandbox", sb.id, "stopped");
	forge_status("task", t.id, "failed");
	CHECK(store_sandbox_get(s, sb.id, &got) == 0);
	CHECK_STR(sandbox_state_name(got.status), "stopped");
	CHECK(store_task_get(s, sb.id, t.id, &row) == 0);
	CHECK_STR(task_state_name(row.status), "failed");
	store_task_release(&row);
	store_fixture_close(s);
}

static int
count_trash(const struct trash_entry *t, void *arg)
{
	(void)t;
	(*(int *)arg)++;
	return 0;
}

/*
 * The trash's steps: begin hides the app and copies the sandbox's
 * settings, deleted drops the row, a claim lets one mover through,
 * restored makes the row again under the same id (the tasks are still
 * its), purged removes the app and its config.
 */
static void
trash_moves(void)
{
	struct store *s = store_fixture_open();
	struct app a, b, got;
	struct sandbox sb, back;
	struct trash_entry t;
	struct task task = {0};
	int n = 0;

	CHECK(s != NULL);
	make_app(&a, "t1", "todo");
	CHECK(store_app_insert(s, &a) == 0);
	make_sandbox(&sb, a.id);
	CHECK(store_sandbox_insert(s, &sb) == 0);
	ulid_new(task.id);
	snprintf(task.sandbox_id, sizeof(task.sandbox_id), "%s", sb.id);
	snprintf(task.agent, sizeof(task.agent), "opencode");
	task.prompt = "p";
	task.timeout_s = 60;
	CHECK(store_task_insert(s, &task) == 0);
	bool created;
	CHECK(store_app_config_put(s, a.id, "K", "v", false, false, &created) ==
	      0);

	CHECK(store_trash_begin(s, "01JTRASH000000000000000001", a.id, 10,
	                        20) == 0);
	/* A second delete of the same app finds nothing to delete. */
	CHECK(store_trash_begin(s, "01JTRASH000000000000000002", a.id, 10,
	                        20) == STORE_NOT_FOUND);
	CHECK(store_app_get(s, NULL, a.id, &got) == STORE_NOT_FOUND);
	CHECK(store_app_list(s, "t1", count_app, &n) == 0 && n == 0);
	CHECK(store_trash_get(s, "t1", "01JTRASH000000000000000001", &t) == 0);
	CHECK(t.state == TRASH_DELETING && t.bytes == -1);
	CHECK_STR(t.sandbox_id, sb.id);
	CHECK_STR(t.name, "todo");
	CHECK(store_trash_get(s, "t2", t.id, &t) == STORE_NOT_FOUND);
	/* Not claimable while deleting. */
	CHECK(store_trash_claim(s, "01JTRASH000000000000000001",
	                        TRASH_RESTORING, "") == STORE_NOT_FOUND);
	CHECK(store_trash_deleted(s, "01JTRASH000000000000000001", sb.id) == 0);
	CHECK(store_sandbox_get(s, sb.id, &back) == STORE_NOT_FOUND);
	n = 0;
	CHECK(store_trash_list(s, "t1", count_trash, &n) == 0 && n == 1);
	n = 0;
	CHECK(store_trash_due(s, 19, count_trash, &n) == 0 && n == 1);
	CHECK(store_trash_set_bytes(s, "01JTRASH000000000000000001", 5) == 0);
	n = 0;
	CHECK(store_trash_due(s, 19, count_trash, &n) == 0 && n == 0);
	n = 0;
	CHECK(store_trash_due(s, 20, count_trash, &n) == 0 && n == 1);

	/* A newer app with the name: taken; the trashed one is not counted. */
	CHECK(store_app_name_taken(s, "t1", "todo", a.id) == 0);
	make_app(&b, "t1", "todo");
	CHECK(store_app_insert(s, &b) == 0);
	CHECK(store_app_name_taken(s, "t1", "todo", a.id) == 1);
	CHECK(store_app_name_taken(s, "t2", "todo", a.id) == 0);

	/* One mover: the second claim fails. */
	CHECK(store_trash_claim(s, "01JTRASH000000000000000001",
	                        TRASH_RESTORING, "todo 2") == 0);
	CHECK(store_trash_claim(s, "01JTRASH000000000000000001", TRASH_PURGING,
	                        "") == STORE_NOT_FOUND);
	CHECK(store_trash_restored(s, "01JTRASH000000000000000001", 30) == 0);
	CHECK(store_app_get(s, "t1", a.id, &got) == 0);
	CHECK_STR(got.name, "todo 2");
	CHECK_STR(got.current_sandbox_id, sb.id);
	CHECK(store_sandbox_get(s, sb.id, &back) == 0);
	CHECK(back.status == SANDBOX_STOPPED && back.nports == 2 &&
	      back.ports[1] == 5173);
	CHECK_STR(back.image, "img:1");
	n = 0;
	CHECK(store_task_list(s, sb.id, 10, count_task, &n) >= 0 && n == 1);

	/* Again, then purged: app, config and entry gone. */
	CHECK(store_trash_begin(s, "01JTRASH000000000000000003", a.id, 40,
	                        50) == 0);
	CHECK(store_trash_deleted(s, "01JTRASH000000000000000003", sb.id) == 0);
	CHECK(store_trash_claim(s, "01JTRASH000000000000000003", TRASH_PURGING,
	                        "") == 0);
	CHECK(store_trash_purged(s, "01JTRASH000000000000000003", a.id,
	                         false) == 0);
	CHECK(store_trash_get(s, NULL, "01JTRASH000000000000000003", &t) ==
	      STORE_NOT_FOUND);
	CHECK(store_app_get(s, NULL, a.id, &got) == STORE_NOT_FOUND);
	CHECK(store_app_get(s, NULL, b.id, &got) == 0);

	/* A sandbox alone: its app stays listed; a second sandbox blocks
	 * the restore (one per app). */
	make_sandbox(&sb, b.id);
	CHECK(store_sandbox_insert(s, &sb) == 0);
	CHECK(store_trash_begin_sandbox(s, "01JTRASH000000000000000004", sb.id,
	                                60, 70) == 0);
	CHECK(store_trash_deleted(s, "01JTRASH000000000000000004", sb.id) == 0);
	CHECK(store_app_get(s, "t1", b.id, &got) == 0);
	CHECK(got.current_sandbox_id[0] == '\0');
	CHECK(store_trash_get(s, NULL, "01JTRASH000000000000000004", &t) == 0);
	CHECK(t.sandbox_only);
	make_sandbox(&back, b.id);
	CHECK(store_sandbox_insert(s, &back) == 0);
	CHECK(store_trash_restored(s, "01JTRASH000000000000000004", 80) ==
	      STORE_CONFLICT);
	CHECK(store_sandbox_delete(s, back.id) == 0);
	CHECK(store_trash_restored(s, "01JTRASH000000000000000004", 80) == 0);
	CHECK(store_app_get(s, "t1", b.id, &got) == 0);
	CHECK_STR(got.current_sandbox_id, sb.id);
	store_fixture_close(s);
}

static int
count_snap(const struct snapshot *sn, void *arg)
{
	(void)sn;
	(*(int *)arg)++;
	return 0;
}

static void
snapshot_rows(void)
{
	struct store *s = store_fixture_open();
	struct snapshot sn = {0}, got;
	int64_t n, b;
	int listed = 0;

	snprintf(sn.owner, sizeof(sn.owner), "t1");
	snprintf(sn.app_id, sizeof(sn.app_id), "01J0000000000000000000APP1");
	snprintf(sn.source_app_id, sizeof(sn.source_app_id), "%s", sn.app_id);
	snprintf(sn.reason, sizeof(sn.reason), "manual");
	snprintf(sn.path, sizeof(sn.path), "/x");
	snprintf(sn.created_by, sizeof(sn.created_by), "t1");
	for (int i = 0; i < 3; i++) {
		snprintf(sn.id, sizeof(sn.id), "01J000000000000000000SNAP%d",
		         i);
		snprintf(sn.name, sizeof(sn.name), "s%d", i);
		sn.created_at = 100 + i;
		CHECK(store_snapshot_insert(s, &sn, 2) ==
		      (i < 2 ? 0 : STORE_TOO_MANY));
	}
	CHECK(store_snapshot_get(s, "t1", "01J000000000000000000SNAP0", &got) ==
	      0);
	CHECK_STR(got.status, "taking");
	CHECK(store_snapshot_get(s, "t2", "01J000000000000000000SNAP0", &got) ==
	      STORE_NOT_FOUND);
	snprintf(sn.id, sizeof(sn.id), "01J000000000000000000SNAP0");
	snprintf(sn.status, sizeof(sn.status), "ready");
	snprintf(sn.method, sizeof(sn.method), "copy");
	sn.own_bytes = 7;
	sn.files = 2;
	CHECK(store_snapshot_finish(s, &sn) == 0);
	CHECK(store_snapshot_set_step(s, sn.id, "01J0000000000000000000SB01") ==
	      0);
	CHECK(store_snapshot_get(s, NULL, sn.id, &got) == 0);
	CHECK_STR(got.status, "ready");
	CHECK_STR(got.step, "01J0000000000000000000SB01");
	CHECK(got.own_bytes == 7 && got.files == 2);
	CHECK(store_snapshot_usage(s, sn.app_id, &n, &b) == 0 && n == 2 &&
	      b == 7);
	CHECK(store_snapshot_list(s, "t1", NULL, count_snap, &listed) == 0 &&
	      listed == 2);
	listed = 0;
	CHECK(store_snapshot_list(s, "t2", NULL, count_snap, &listed) == 0 &&
	      listed == 0);
	CHECK(store_snapshot_delete(s, sn.id) == 0);
	CHECK(store_snapshot_delete(s, sn.id) == STORE_NOT_FOUND);
	store_fixture_close(s);
}

static const struct unit_test tests[] = {
    {"trash moves", trash_moves},
    {"secret rows", secret_rows},
    {"agent credentials per tenant, the instance's as fallback", agent_tenancy},
    {"agent credentials", agent_credentials},
    {"settings merge and clear", settings_merge_and_clear},
    {"app config rows", app_config_rows},
    {"app config cap, and rows go with the app", app_config_cap_and_app_delete},
    {"proxy token lookup", proxy_token_lookup},
    {"git credentials and import", git_credentials_and_import},
    {"task rows", task_rows},
    {"migrations are idempotent", migrations_are_idempotent},
    {"apps are scoped by owner", apps_are_scoped_by_owner},
    {"one sandbox per app", one_sandbox_per_app},
    {"exit marks only running rows", exit_marks_only_running_rows},
    {"frozen follows running rows", frozen_follows_running_rows},
    {"api keys are found by hash", api_keys_by_hash},
    {"state names round trip", state_names_round_trip},
    {"unknown state names are refused", unknown_state_names_refused},
    {"every state is stored", every_state_is_stored},
    {"an unknown state in the database is an error", unknown_state_in_database},
    {"snapshot rows: the per-app cap, finish, step, tenancy, usage",
     snapshot_rows},
};

int
main(void)
{
	if (vault_init() < 0)
		return 1;
	return UNIT_RUN("store", tests);
}
