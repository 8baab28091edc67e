/*
 * Settings: non-secret key/value text that the API edits at run time
 * (PATCH /v1/settings), e.g. each agent's default model, the instance's
 * or a tenant's (its key prefixed "tenant/<name>/").  A missing row
 * means "not set": the caller's fallback applies, so adding a setting
 * never needs a migration.
 */
#include <stdio.h>
#include <string.h>

#include "lib/clock.h"
#include "store/internal.h"
#include "store/store.h"

int
store_setting_get(struct store *s, const char *key, char *val, size_t len)
{
	return store_text_get(s, "SELECT value FROM setting WHERE key = ?", key,
	                      val, len);
}

static int
setting_write(struct store *s, const char *key, const char *val)
{
	int rc;

	if (val == NULL || val[0] == '\0')
		rc = store_run(
		    s, store_prep(s, "DELETE FROM setting WHERE key = ?", "s",
		                  key));
	else if (strlen(val) > STORE_SETTING_MAX_BYTES)
		rc = -1;
	else
		rc = store_run(s, store_prep(s,
		                             "INSERT OR REPLACE INTO setting "
		                             "VALUES (?, ?, ?)",
		                             "ssi", key, val, clock_now()));
	return rc == STORE_NOT_FOUND ? 0 : rc;
}

int
store_setting_set(struct store *s, const char *const *keys,
                  const char *const *vals, size_t n)
{
	int rc;

	LOCK(s);
	rc = store_begin(s);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = setting_write(s, keys[i], vals[i]);
	rc = store_end(s, rc);
	UNLOCK(s);
	return rc;
}

int
store_agent_model_key(const char *owner, const char *agent, char *key,
                      size_t len)
{
	int n = owner[0]
	            ? snprintf(key, len, "tenant/%s/agents.default_models.%s",
	                       owner, agent)
	            : snprintf(key, len, "agents.default_models.%s", agent);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int
store_agent_default_model(struct store *s, const char *owner, const char *agent,
                          char *out, size_t len)
{
	char key[STORE_SETTING_KEY_LEN];

	if (store_agent_model_key(owner, agent, key, sizeof(key)) < 0)
		return STORE_NOT_FOUND;
	return store_setting_get(s, key, out, len);
}
