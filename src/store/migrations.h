/*
 * Numbered schema migrations, compiled into the binary.  Append only:
 * never edit a migration that has shipped; add the next number.  Each runs
 * in its own transaction and is recorded in schema_migration.
 */
#ifndef STORE_MIGRATIONS_H
#define STORE_MIGRATIONS_H

struct migration {
	int version;
	const char *name;
	const char *sql;
};

static const struct migration store_migrations[] = {
    {
        .version = 1,
        .name = "apps_sandboxes_keys",
        .sql = "CREATE TABLE meta ("
               "  key TEXT PRIMARY KEY,"
               "  value TEXT NOT NULL);"
               "CREATE TABLE app ("
               "  id TEXT PRIMARY KEY,"
               "  owner TEXT NOT NULL,"
               "  name TEXT NOT NULL,"
               "  description TEXT NOT NULL DEFAULT '',"
               "  tags TEXT NOT NULL DEFAULT '[]',"
               "  runtime_preset TEXT NOT NULL DEFAULT '',"
               "  created_at INTEGER NOT NULL,"
               "  updated_at INTEGER NOT NULL);"
               "CREATE INDEX app_owner ON app(owner, created_at);"
               "CREATE TABLE sandbox ("
               "  id TEXT PRIMARY KEY,"
               "  app_id TEXT NOT NULL UNIQUE"
               "    REFERENCES app(id) ON DELETE RESTRICT,"
               "  status TEXT NOT NULL CHECK (status IN"
               "    ('creating','running','stopped','error')),"
               "  status_reason TEXT NOT NULL DEFAULT '',"
               "  error_message TEXT NOT NULL DEFAULT '',"
               "  container_id TEXT NOT NULL DEFAULT '',"
               "  image TEXT NOT NULL,"
               "  exit_code INTEGER,"
               "  oom_killed INTEGER NOT NULL DEFAULT 0,"
               "  ports TEXT NOT NULL,"
               "  idle_policy TEXT NOT NULL DEFAULT 'sleep',"
               "  created_at INTEGER NOT NULL,"
               "  updated_at INTEGER NOT NULL,"
               "  last_active_at INTEGER NOT NULL DEFAULT 0,"
               "  stopped_at INTEGER NOT NULL DEFAULT 0);"
               "CREATE INDEX sandbox_status ON sandbox(status);"
               "CREATE TABLE api_key ("
               "  id TEXT PRIMARY KEY,"
               "  name TEXT NOT NULL UNIQUE,"
               "  key_hash TEXT NOT NULL UNIQUE,"
               "  prefix TEXT NOT NULL,"
               "  created_at INTEGER NOT NULL,"
               "  last_used_at INTEGER);",
    },
    {
        .version = 2,
        .name = "sandbox_runtime",
        .sql = "ALTER TABLE sandbox ADD COLUMN preset TEXT NOT NULL"
               "  DEFAULT '';"
               "ALTER TABLE sandbox ADD COLUMN manifest_source TEXT"
               "  NOT NULL DEFAULT '';"
               "ALTER TABLE sandbox ADD COLUMN manifest_error TEXT"
               "  NOT NULL DEFAULT '';",
    },
    {
        .version = 3,
        .name = "sandbox_address",
        .sql = "ALTER TABLE sandbox ADD COLUMN container_ip TEXT"
               "  NOT NULL DEFAULT '';",
    },
    {
        .version = 4,
        .name = "tasks",
        /* At most one running task per sandbox, enforced here. */
        .sql = "CREATE TABLE task ("
               "  id TEXT PRIMARY KEY,"
               "  sandbox_id TEXT NOT NULL,"
               "  agent TEXT NOT NULL,"
               "  model TEXT NOT NULL DEFAULT '',"
               "  timeout_s INTEGER NOT NULL,"
               "  status TEXT NOT NULL CHECK (status IN"
               "    ('running','succeeded','failed','cancelled')),"
               "  failure_reason TEXT NOT NULL DEFAULT '',"
               "  prompt TEXT NOT NULL,"
               "  result TEXT,"
               "  checkpoint_id TEXT NOT NULL DEFAULT '',"
               "  created_at INTEGER NOT NULL,"
               "  finished_at INTEGER NOT NULL DEFAULT 0);"
               "CREATE INDEX task_sandbox ON task(sandbox_id, id);"
               "CREATE UNIQUE INDEX task_one_running ON task(sandbox_id)"
               "  WHERE status = 'running';",
    },
    {
        .version = 5,
        .name = "secrets_settings_app_config",
        /*
         * secret: values sealed by the vault (XChaCha20-Poly1305); key_id
         * names the master key that sealed the row, nonce and ciphertext
         * (with its tag) are the box.  The kinds are the STORE_SECRET_*
         * names in store.h: not a CHECK list, so a new kind needs no
         * table rebuild.  A sensitive app_config row points at its
         * secret and holds no value itself.
         */
        .sql = "CREATE TABLE secret ("
               "  id TEXT PRIMARY KEY,"
               "  kind TEXT NOT NULL CHECK (length(kind) BETWEEN 1 AND 15),"
               "  owner TEXT NOT NULL DEFAULT '',"
               "  name TEXT NOT NULL,"
               "  key_id TEXT NOT NULL,"
               "  nonce BLOB NOT NULL,"
               "  ciphertext BLOB NOT NULL,"
               "  created_at INTEGER NOT NULL,"
               "  updated_at INTEGER NOT NULL,"
               "  UNIQUE (kind, owner, name));"
               "CREATE INDEX secret_key ON secret(key_id);"
               "CREATE TABLE setting ("
               "  key TEXT PRIMARY KEY,"
               "  value TEXT NOT NULL,"
               "  updated_at INTEGER NOT NULL);"
               "CREATE TABLE app_config ("
               "  app_id TEXT NOT NULL REFERENCES app(id),"
               "  key TEXT NOT NULL,"
               "  value TEXT NOT NULL DEFAULT '',"
               "  secret_id TEXT REFERENCES secret(id),"
               "  sensitive INTEGER NOT NULL DEFAULT 0,"
               "  expose_env INTEGER NOT NULL DEFAULT 0,"
               "  created_at INTEGER NOT NULL,"
               "  updated_at INTEGER NOT NULL,"
               "  UNIQUE (app_id, key),"
               "  CHECK ((sensitive = 1) = (secret_id IS NOT NULL)),"
               "  CHECK (sensitive = 0 OR value = ''));"
               "ALTER TABLE sandbox ADD COLUMN proxy_token_hash TEXT"
               "  NOT NULL DEFAULT '';"
               "CREATE UNIQUE INDEX sandbox_proxy_token"
               "  ON sandbox(proxy_token_hash) WHERE proxy_token_hash != '';",
    },
    {
        .version = 6,
        .name = "git_credentials_app_git",
        /*
         * A git credential's token is a secret row (kind git_token,
         * owner the tenant, name the credential id); this table holds
         * what may be shown.  An app's git fields say where pushes go
         * (and, later, where it was imported from); no token here.
         */
        .sql = "CREATE TABLE git_credential ("
               "  id TEXT PRIMARY KEY,"
               "  owner TEXT NOT NULL,"
               "  name TEXT NOT NULL,"
               "  host TEXT NOT NULL,"
               "  username TEXT NOT NULL DEFAULT '',"
               "  created_at INTEGER NOT NULL,"
               "  UNIQUE (owner, name));"
               "ALTER TABLE app ADD COLUMN git_repo_url TEXT NOT NULL"
               "  DEFAULT '';"
               "ALTER TABLE app ADD COLUMN git_branch TEXT NOT NULL"
               "  DEFAULT '';"
               "ALTER TABLE app ADD COLUMN git_credential_id TEXT NOT NULL"
               "  DEFAULT '';",
    },
    {
        .version = 7,
        .name = "app_last_import",
        /* When the app's repository was last cloned into a sandbox. */
        .sql = "ALTER TABLE app ADD COLUMN last_import_at INTEGER NOT NULL"
               "  DEFAULT 0;",
    },
    {
        .version = 8,
        .name = "console_sessions",
        /*
         * The console's one password (argon2id, encoded) and its
         * sessions: only the SHA-256 of a session's cookie token is
         * kept, with the CSRF token bound to it (not a credential on its
         * own: it needs the cookie too).
         */
        .sql = "CREATE TABLE console_password ("
               "  id INTEGER PRIMARY KEY CHECK (id = 1),"
               "  hash TEXT NOT NULL,"
               "  updated_at INTEGER NOT NULL);"
               "CREATE TABLE console_session ("
               "  token_hash TEXT PRIMARY KEY,"
               "  csrf TEXT NOT NULL,"
               "  created_at INTEGER NOT NULL,"
               "  renewed_at INTEGER NOT NULL,"
               "  expires_at INTEGER NOT NULL);",
    },
    {
        .version = 9,
        .name = "sandbox_frozen",
        /* A running sandbox whose container is paused (the freezer). */
        .sql = "ALTER TABLE sandbox ADD COLUMN frozen INTEGER NOT NULL"
               "  DEFAULT 0;",
    },
    {
        .version = 10,
        .name = "app_preview_visibility",
        /*
         * Private previews: the app's visibility ('' follows the
         * instance default, else 'public' or 'private') and the epoch
         * its preview cookies carry; bumping it revokes them all.
         */
        .sql = "ALTER TABLE app ADD COLUMN preview_visibility TEXT NOT NULL"
               "  DEFAULT '';"
               "ALTER TABLE app ADD COLUMN preview_epoch INTEGER NOT NULL"
               "  DEFAULT 0;",
    },
    {
        .version = 11,
        .name = "spend_budgets",
        /*
         * What the credential proxy counted, per task, per app and per
         * tenant (scope, id): tokens by kind, the price in millionths
         * of a US dollar, answers counted.  Budgets per app and per
         * tenant, and the instance's defaults for each (scope
         * 'instance', id 'app' or 'tenant'); a NULL limit is none.
         */
        .sql = "CREATE TABLE spend ("
               "  scope TEXT NOT NULL CHECK (scope IN"
               "    ('task','app','tenant')),"
               "  id TEXT NOT NULL,"
               "  input INTEGER NOT NULL DEFAULT 0,"
               "  output INTEGER NOT NULL DEFAULT 0,"
               "  cache_write INTEGER NOT NULL DEFAULT 0,"
               "  cache_read INTEGER NOT NULL DEFAULT 0,"
               "  cost_micro INTEGER NOT NULL DEFAULT 0,"
               "  requests INTEGER NOT NULL DEFAULT 0,"
               "  updated_at INTEGER NOT NULL,"
               "  PRIMARY KEY (scope, id));"
               "CREATE TABLE budget ("
               "  scope TEXT NOT NULL CHECK (scope IN"
               "    ('app','tenant','instance')),"
               "  id TEXT NOT NULL,"
               "  max_tokens INTEGER,"
               "  max_micro INTEGER,"
               "  updated_at INTEGER NOT NULL,"
               "  PRIMARY KEY (scope, id));",
    },
    {
        .version = 12,
        .name = "trash",
        /*
         * Deleted apps and sandboxes kept for a while (trash/trash.c).
         * A trashed app's row stays, marked by trashed_at (every listing
         * and lookup of live apps skips it); the sandbox row goes (the
         * container is gone) and what a new one needs is copied here.  state is
         * the journal of the move: "deleting" and "purging" are finished at
         * start, "restoring" is rolled back.
         */
        .sql = "ALTER TABLE app ADD COLUMN trashed_at INTEGER NOT NULL"
               "  DEFAULT 0;"
               "CREATE TABLE trash ("
               "  id TEXT PRIMARY KEY,"
               "  owner TEXT NOT NULL,"
               "  app_id TEXT NOT NULL REFERENCES app(id),"
               "  kind TEXT NOT NULL DEFAULT 'app' CHECK (kind IN"
               "    ('app','sandbox')),"
               "  state TEXT NOT NULL CHECK (state IN"
               "    ('deleting','trashed','restoring','purging')),"
               "  sandbox_id TEXT NOT NULL DEFAULT '',"
               "  sb_image TEXT NOT NULL DEFAULT '',"
               "  sb_ports TEXT NOT NULL DEFAULT '',"
               "  sb_idle_policy TEXT NOT NULL DEFAULT 'sleep',"
               "  sb_preset TEXT NOT NULL DEFAULT '',"
               "  sb_created_at INTEGER NOT NULL DEFAULT 0,"
               "  bytes INTEGER NOT NULL DEFAULT -1,"
               "  restore_name TEXT NOT NULL DEFAULT '',"
               "  deleted_at INTEGER NOT NULL,"
               "  purge_at INTEGER NOT NULL);"
               "CREATE UNIQUE INDEX trash_one_app ON trash(app_id)"
               "  WHERE kind = 'app';"
               "CREATE INDEX trash_owner ON trash(owner, deleted_at);"
               "CREATE INDEX trash_purge ON trash(purge_at);",
    },
    {
        .version = 13,
        .name = "spend_app_calls",
        /*
         * An app's own model calls (made while none of its tasks runs,
         * when the app opted in): their counts and their budget, scope
         * 'app_calls' with the app's id.  SQLite cannot widen a CHECK:
         * both tables are copied into new ones.
         */
        .sql = "CREATE TABLE spend_new ("
               "  scope TEXT NOT NULL CHECK (scope IN"
               "    ('task','app','app_calls','tenant')),"
               "  id TEXT NOT NULL,"
               "  input INTEGER NOT NULL DEFAULT 0,"
               "  output INTEGER NOT NULL DEFAULT 0,"
               "  cache_write INTEGER NOT NULL DEFAULT 0,"
               "  cache_read INTEGER NOT NULL DEFAULT 0,"
               "  cost_micro INTEGER NOT NULL DEFAULT 0,"
               "  requests INTEGER NOT NULL DEFAULT 0,"
               "  updated_at INTEGER NOT NULL,"
               "  PRIMARY KEY (scope, id));"
               "INSERT INTO spend_new SELECT * FROM spend;"
               "DROP TABLE spend;"
               "ALTER TABLE spend_new RENAME TO spend;"
               "CREATE TABLE budget_new ("
               "  scope TEXT NOT NULL CHECK (scope IN"
               "    ('app','app_calls','tenant','instance')),"
               "  id TEXT NOT NULL,"
               "  max_tokens INTEGER,"
               "  max_micro INTEGER,"
               "  updated_at INTEGER NOT NULL,"
               "  PRIMARY KEY (scope, id));"
               "INSERT INTO budget_new SELECT * FROM budget;"
               "DROP TABLE budget;"
               "ALTER TABLE budget_new RENAME TO budget;",
    },
    {
        .version = 14,
        .name = "task_reverted_at",
        /* When a task's changes were reverted (0: never): the task list
         * and the task say so, and it cannot be reverted twice. */
        .sql = "ALTER TABLE task ADD COLUMN reverted_at INTEGER NOT NULL"
               "  DEFAULT 0;",
    },
    {
        .version = 15,
        .name = "app_event",
        /*
         * The activity timeline (src/timeline/): what happened to an
         * app and who did it.  The ULID id is the cursor (newest first
         * by id); owner is the app's, copied so tenancy needs no join.
         * Kept while the app row is (trashed too), deleted with it.
         */
        .sql = "CREATE TABLE app_event ("
               "  id TEXT PRIMARY KEY,"
               "  app_id TEXT NOT NULL,"
               "  owner TEXT NOT NULL,"
               "  type TEXT NOT NULL,"
               "  severity TEXT NOT NULL DEFAULT 'info',"
               "  message TEXT NOT NULL DEFAULT '',"
               "  sandbox_id TEXT NOT NULL DEFAULT '',"
               "  task_id TEXT NOT NULL DEFAULT '',"
               "  snapshot_id TEXT NOT NULL DEFAULT '',"
               "  actor TEXT NOT NULL DEFAULT 'system',"
               "  payload TEXT NOT NULL DEFAULT '',"
               "  created_at INTEGER NOT NULL);"
               "CREATE INDEX app_event_app ON app_event(app_id, id);"
               "CREATE INDEX app_event_time ON app_event(created_at);",
    },
    {
        .version = 16,
        .name = "snapshot",
        /*
         * Snapshots of an app's files (snapshot/snapshot.c), kept in
         * <data>/snapshots/<id>.  No foreign key to app: the rows
         * outlive the app's row for the moment between its delete and
         * the hook that removes them (and a trashed app keeps them).
         * step journals a restore from the snapshot: the id of the
         * sandbox whose files are being replaced ("" none), so a restart
         * removes a half-made copy.
         */
        .sql = "CREATE TABLE snapshot ("
               "  id TEXT PRIMARY KEY,"
               "  owner TEXT NOT NULL,"
               "  app_id TEXT NOT NULL,"
               "  name TEXT NOT NULL,"
               "  source_app_id TEXT NOT NULL,"
               "  source_sandbox_id TEXT NOT NULL DEFAULT '',"
               "  status TEXT NOT NULL CHECK (status IN"
               "    ('taking','ready','failed')),"
               "  reason TEXT NOT NULL CHECK (reason IN"
               "    ('manual','before_restore','fork')),"
               "  size_bytes INTEGER NOT NULL DEFAULT 0,"
               "  own_bytes INTEGER NOT NULL DEFAULT 0,"
               "  files INTEGER NOT NULL DEFAULT 0,"
               "  method TEXT NOT NULL DEFAULT 'copy',"
               "  pause_ms INTEGER NOT NULL DEFAULT 0,"
               "  task_id TEXT NOT NULL DEFAULT '',"
               "  head TEXT NOT NULL DEFAULT '',"
               "  base_image TEXT NOT NULL DEFAULT '',"
               "  path TEXT NOT NULL,"
               "  created_by TEXT NOT NULL,"
               "  created_at INTEGER NOT NULL,"
               "  step TEXT NOT NULL DEFAULT '');"
               "CREATE INDEX snapshot_app ON snapshot(app_id, created_at);"
               "CREATE INDEX snapshot_owner ON snapshot(owner, created_at);",
    },
    {
        .version = 17,
        .name = "publish",
        /*
         * Publishing (src/publish/): an app's releases, its publication
         * (the host label and the active release) and its custom
         * domains.  No foreign key to app, as for snapshots:
         * publish_app_gone removes the rows.  One release "building" per
         * app is the partial unique index; a label and a domain's host
         * are unique across every tenant.
         */
        .sql = "CREATE TABLE release ("
               "  id TEXT PRIMARY KEY,"
               "  owner TEXT NOT NULL,"
               "  app_id TEXT NOT NULL,"
               "  number INTEGER NOT NULL,"
               "  status TEXT NOT NULL CHECK (status IN"
               "    ('building','ready','failed')),"
               "  kind TEXT NOT NULL DEFAULT '',"
               "  source TEXT NOT NULL,"
               "  source_ref TEXT NOT NULL DEFAULT '',"
               "  git_commit TEXT NOT NULL DEFAULT '',"
               "  recipe TEXT NOT NULL DEFAULT '',"
               "  image TEXT NOT NULL DEFAULT '',"
               "  command TEXT NOT NULL DEFAULT '',"
               "  port INTEGER NOT NULL DEFAULT 0,"
               "  health TEXT NOT NULL DEFAULT '',"
               "  spa INTEGER NOT NULL DEFAULT 0,"
               "  size_bytes INTEGER NOT NULL DEFAULT 0,"
               "  files INTEGER NOT NULL DEFAULT 0,"
               "  build_ms INTEGER NOT NULL DEFAULT 0,"
               "  error TEXT NOT NULL DEFAULT '',"
               "  path TEXT NOT NULL,"
               "  created_by TEXT NOT NULL,"
               "  created_at INTEGER NOT NULL,"
               "  finished_at INTEGER NOT NULL DEFAULT 0,"
               "  UNIQUE (app_id, number));"
               "CREATE UNIQUE INDEX release_building ON release(app_id)"
               "  WHERE status = 'building';"
               "CREATE TABLE publication ("
               "  app_id TEXT PRIMARY KEY,"
               "  owner TEXT NOT NULL,"
               "  label TEXT NOT NULL UNIQUE,"
               "  release_id TEXT NOT NULL DEFAULT '',"
               "  visibility TEXT NOT NULL DEFAULT 'public' CHECK"
               "    (visibility IN ('public','private')),"
               "  published_at INTEGER NOT NULL DEFAULT 0,"
               "  updated_at INTEGER NOT NULL DEFAULT 0);"
               "CREATE TABLE domain ("
               "  host TEXT PRIMARY KEY,"
               "  owner TEXT NOT NULL,"
               "  app_id TEXT NOT NULL,"
               "  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN"
               "    ('pending','verified')),"
               "  method TEXT NOT NULL DEFAULT '',"
               "  reason TEXT NOT NULL DEFAULT '',"
               "  token TEXT NOT NULL,"
               "  created_at INTEGER NOT NULL,"
               "  checked_at INTEGER NOT NULL DEFAULT 0,"
               "  verified_at INTEGER NOT NULL DEFAULT 0);"
               "CREATE INDEX domain_app ON domain(app_id);",
    },
    {
        .version = 18,
        .name = "nodes",
        /*
         * More than one server (SANDBOXD_ORCHESTRATOR=swarm): the node
         * holding each sandbox ("" this host, which is every sandbox
         * with docker), the cluster's nodes, the join tokens (by the
         * hash of their secret, used once) and the journal of
         * workspace moves (drain), resumed at start.
         */
        .sql = "ALTER TABLE sandbox ADD COLUMN node TEXT NOT NULL"
               "  DEFAULT '';"
               "CREATE INDEX sandbox_node ON sandbox(node);"
               "CREATE TABLE node ("
               "  name TEXT PRIMARY KEY,"
               "  swarm_id TEXT NOT NULL DEFAULT '',"
               "  addr TEXT NOT NULL DEFAULT '',"
               "  cert_fp TEXT NOT NULL DEFAULT '',"
               "  status TEXT NOT NULL DEFAULT 'ready' CHECK (status IN"
               "    ('joining','ready','draining','drained','down')),"
               "  data_dir TEXT NOT NULL DEFAULT '',"
               "  engine_api TEXT NOT NULL DEFAULT '',"
               "  mem_bytes INTEGER NOT NULL DEFAULT 0,"
               "  mem_available INTEGER NOT NULL DEFAULT 0,"
               "  disk_free INTEGER NOT NULL DEFAULT 0,"
               "  joined_at INTEGER NOT NULL DEFAULT 0,"
               "  last_seen INTEGER NOT NULL DEFAULT 0);"
               "CREATE TABLE join_token ("
               "  hash TEXT PRIMARY KEY,"
               "  expires_at INTEGER NOT NULL,"
               "  used_at INTEGER NOT NULL DEFAULT 0);"
               "CREATE TABLE move ("
               "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
               "  sandbox_id TEXT NOT NULL,"
               "  src TEXT NOT NULL,"
               "  dst TEXT NOT NULL,"
               "  state TEXT NOT NULL CHECK (state IN ('sleeping',"
               "    'copying','copied','repinned','done','failed')),"
               "  bytes INTEGER NOT NULL DEFAULT 0,"
               "  error TEXT NOT NULL DEFAULT '',"
               "  started_at INTEGER NOT NULL,"
               "  finished_at INTEGER NOT NULL DEFAULT 0);"
               "CREATE INDEX move_open ON move(state, id);",
    },
};

#endif
