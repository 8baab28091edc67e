/*
 * App config: per-app key/value pairs.  A non-sensitive value lives in
 * the app_config row; a sensitive one is sealed in a secret row (kind
 * app_config, owner the app id, name the key) written in the same
 * transaction, and the app_config row points at it and holds no value
 * (CHECK constraints keep the two shapes apart).  Switching a key from
 * sensitive to plain deletes its secret row in that transaction too, so
 * no sealed copy outlives the key's sensitivity.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "store/internal.h"
#include "store/store.h"

#define CONFIG_COLS                                                            \
	"c.app_id, c.key, c.sensitive, c.expose_env, c.value, "                \
	"c.created_at, c.updated_at, CASE WHEN c.sensitive "                   \
	"THEN length(s.ciphertext) > 16 ELSE length(c.value) > 0 END"
#define CONFIG_FROM                                                            \
	" FROM app_config c LEFT JOIN secret s ON s.id = c.secret_id "

static int
config_from_row(sqlite3_stmt *st, void *out)
{
	struct app_config *c = out;
	const unsigned char *v;

	memset(c, 0, sizeof(*c));
	store_col_text(st, 0, c->app_id, sizeof(c->app_id));
	store_col_text(st, 1, c->key, sizeof(c->key));
	c->sensitive = sqlite3_column_int(st, 2) != 0;
	c->expose_env = sqlite3_column_int(st, 3) != 0;
	v = sqlite3_column_text(st, 4);
	if (!c->sensitive)
		c->value = strdup(v ? (const char *)v : "");
	c->created_at = sqlite3_column_int64(st, 5);
	c->updated_at = sqlite3_column_int64(st, 6);
	c->value_set = sqlite3_column_int(st, 7) != 0;
	return 0;
}

void
store_app_config_release(struct app_config *c)
{
	free(c->value);
	c->value = NULL;
}

/* Whether the key exists, and whether the app has room for a new one. */
static int
config_room(struct store *s, const char *app_id, const char *key, bool *created)
{
	sqlite3_stmt *st = store_prep(s,
	                              "SELECT count(*), coalesce(sum(key = ?),"
	                              " 0) FROM app_config WHERE app_id = ?",
	                              "ss", key, app_id);
	int rc = -1;

	if (st && sqlite3_step(st) == SQLITE_ROW) {
		*created = sqlite3_column_int(st, 1) == 0;
		rc =
		    *created && sqlite3_column_int(st, 0) >= APP_CONFIG_MAX_KEYS
		        ? STORE_TOO_MANY
		        : 0;
	}
	sqlite3_finalize(st);
	return rc;
}

static int
config_write(struct store *s, const char *app_id, const char *key,
             const char *value, const char *secret_id, bool expose_env)
{
	int64_t now = clock_now();
	int rc = store_run(
	    s, store_prep(s,
	                  "INSERT INTO app_config (app_id, key, value, "
	                  "secret_id, sensitive, expose_env, created_at, "
	                  "updated_at) VALUES (?1,?2,?3,?4,?5,?6,?7,?7) "
	                  "ON CONFLICT (app_id, key) DO UPDATE SET "
	                  "value = excluded.value, "
	                  "secret_id = excluded.secret_id, "
	                  "sensitive = excluded.sensitive, "
	                  "expose_env = excluded.expose_env, "
	                  "updated_at = excluded.updated_at",
	                  "ssssnni", app_id, key, value, secret_id,
	                  secret_id != NULL, (int)expose_env, now));

	/* The only constraint an upsert can break: the app is gone. */
	return rc == STORE_CONFLICT ? STORE_NOT_FOUND : rc;
}

/* Deletes the key's sealed value, if it has one. */
static int
drop_sealed(struct store *s, const char *app_id, const char *key)
{
	int rc = store_run(s, store_prep(s,
	                                 "DELETE FROM secret WHERE kind = ? "
	                                 "AND owner = ? AND name = ?",
	                                 "sss", STORE_SECRET_APP_CONFIG, app_id,
	                                 key));

	return rc == STORE_NOT_FOUND ? 0 : rc;
}

int
store_app_config_put(struct store *s, const char *app_id, const char *key,
                     const char *value, bool sensitive, bool expose_env,
                     bool *created)
{
	char sid[ULID_LEN + 1];
	int rc;

	LOCK(s);
	rc = store_begin(s);
	if (rc == 0)
		rc = config_room(s, app_id, key, created);
	if (rc == 0 && sensitive) {
		rc = store_secret_write(s, STORE_SECRET_APP_CONFIG, app_id, key,
		                        value, strlen(value), sid);
		if (rc == 0)
			rc = config_write(s, app_id, key, "", sid, expose_env);
	} else if (rc == 0) {
		rc = config_write(s, app_id, key, value, NULL, expose_env);
		if (rc == 0)
			rc = drop_sealed(s, app_id, key);
	}
	rc = store_end(s, rc);
	UNLOCK(s);
	return rc;
}

int
store_app_config_get(struct store *s, const char *app_id, const char *key,
                     struct app_config *out)
{
	int rc;

	memset(out, 0, sizeof(*out));
	LOCK(s);
	rc = store_one(store_prep(s,
	                          "SELECT " CONFIG_COLS CONFIG_FROM
	                          "WHERE c.app_id = ? AND c.key = ?",
	                          "ss", app_id, key),
	               config_from_row, out);
	UNLOCK(s);
	return rc;
}

STORE_CALLER(call_config, struct app_config)

static void
config_row_release(void *row)
{
	store_app_config_release(row);
}

static const struct store_rows config_rows = {sizeof(struct app_config),
                                              config_from_row, call_config,
                                              config_row_release};

/* The app's rows, ordered by key; env_only: those with expose_env. */
#define CONFIG_ROWS_SQL                                                        \
	"SELECT " CONFIG_COLS CONFIG_FROM "WHERE c.app_id = ? AND "            \
	"(? = 0 OR c.expose_env = 1) ORDER BY c.key"

int
store_app_config_list(struct store *s, const char *app_id,
                      int (*fn)(const struct app_config *, void *), void *arg)
{
	return store_each(s, &config_rows, (store_any_fn *)fn, arg,
	                  CONFIG_ROWS_SQL, "sn", app_id, 0);
}

int
store_app_config_delete(struct store *s, const char *app_id, const char *key)
{
	int rc;

	LOCK(s);
	rc = store_begin(s);
	if (rc == 0)
		rc = store_run(s, store_prep(s,
		                             "DELETE FROM app_config WHERE "
		                             "app_id = ? AND key = ?",
		                             "ss", app_id, key));
	if (rc == 0)
		rc = drop_sealed(s, app_id, key);
	rc = store_end(s, rc);
	UNLOCK(s);
	return rc;
}

/* One exposed row: its value, opened when sealed, handed to fn. */
static int
env_one(struct store *s, const struct app_config *c,
        int (*fn)(const char *, const char *, size_t, void *), void *arg)
{
	struct vault_secret v;
	int rc;

	if (!c->sensitive)
		return fn(c->key, c->value ? c->value : "",
		          c->value ? strlen(c->value) : 0, arg) != 0;
	if (store_secret_get(s, STORE_SECRET_APP_CONFIG, c->app_id, c->key,
	                     &v) != 0) {
		log_error("store: app %s: config %s cannot be opened for the "
		          "environment",
		          c->app_id, c->key);
		return -1;
	}
	rc = fn(c->key, v.data, v.len, arg) != 0;
	vault_secret_free(&v);
	return rc;
}

struct env_each {
	struct store *s;
	int (*fn)(const char *, const char *, size_t, void *);
	void *arg;
};

static int
call_env(store_any_fn *unused, const void *row, void *arg)
{
	struct env_each *e = arg;

	(void)unused;
	return env_one(e->s, row, e->fn, e->arg);
}

static const struct store_rows env_rows = {
    sizeof(struct app_config), config_from_row, call_env, config_row_release};

int
store_app_config_env(struct store *s, const char *app_id,
                     int (*fn)(const char *, const char *, size_t, void *),
                     void *arg)
{
	struct env_each e = {s, fn, arg};

	return store_each(s, &env_rows, NULL, &e, CONFIG_ROWS_SQL, "sn", app_id,
	                  1);
}
