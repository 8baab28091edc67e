/*
 * cli/setup: what the daemon and the maintenance commands open the same
 * way: the data directory and the database, the secrets lock, the master
 * keys (checked against what the store holds), and the wiping of the
 * keys' text once loaded.  Each logs its own error.
 */
#include "cli/setup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/limits.h"
#include "lib/log.h"
#include "ws/workspace.h"

int
cli_open_store(const struct config *cfg, struct store **store)
{
	char path[WORKSPACE_PATH_MAX];

	if (workspace_init_dirs(cfg->data_dir) < 0) {
		log_error("SANDBOXD_DATA_DIR: cannot prepare %s",
		          cfg->data_dir);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/state/sandboxd.db", cfg->data_dir);
	if (store_open(store, path) < 0) {
		log_error("cannot open the database %s", path);
		return -1;
	}
	return 0;
}

/*
 * The secrets lock: the daemon holds it shared, `secrets rotate`
 * exclusive, for as long as the process lives.
 */
int
cli_lock_secrets(const struct config *cfg, bool exclusive)
{
	if (vault_lock(cfg->data_dir, exclusive) >= 0)
		return 0;
	if (errno != EWOULDBLOCK)
		log_error("cannot lock %s/%s: %s", cfg->data_dir,
		          VAULT_LOCK_FILE, strerror(errno));
	else if (exclusive)
		log_error("sandboxd is running on %s: stop it first (`secrets "
		          "rotate` never runs next to the daemon)",
		          cfg->data_dir);
	else
		log_error("`sandboxd secrets rotate` is running on %s; start "
		          "again when it has finished",
		          cfg->data_dir);
	return -1;
}

/*
 * The master keys, checked against the key ids of what the store holds
 * (vault_load).  how gets where the sealing key came from.
 */
int
cli_open_vault(const struct config *cfg, struct store *store, bool read_only,
               struct vault **out, char *how, size_t howlen)
{
	struct vault_source src = {
	    .data_dir = cfg->data_dir,
	    .env_key = cfg->secrets_key,
	    .env_previous = cfg->secrets_key_previous,
	    .read_only = read_only,
	};
	struct vault_usage *use = NULL;
	char err[1024];
	size_t n = 0;
	int rc;

	if (store_secret_usage(store, &use, &n) < 0) {
		log_error("cannot read the stored secrets");
		return -1;
	}
	src.use = use;
	src.nuse = n;
	rc = vault_load(out, &src, how, howlen, err, sizeof(err));
	free(use);
	if (rc < 0) {
		log_error("secrets: %s", err);
		return -1;
	}
	store_set_vault(store, *out);
	return 0;
}

/*
 * Once the keys are loaded their text is not needed: wiped from the
 * configuration and from the environment (which /proc shows).
 */
void
cli_forget_key_text(struct config *cfg)
{
	static const char *const names[] = {"SANDBOXD_SECRETS_KEY",
	                                    "SANDBOXD_SECRETS_KEY_PREVIOUS"};
	char **fields[] = {&cfg->secrets_key, &cfg->secrets_key_previous};

	for (size_t i = 0; i < 2; i++) {
		char *v = getenv(names[i]);
		if (v) {
			vault_wipe(v, strlen(v));
			unsetenv(names[i]);
		}
		if (*fields[i]) {
			vault_wipe(*fields[i], strlen(*fields[i]));
			free(*fields[i]);
			*fields[i] = NULL;
		}
	}
}
