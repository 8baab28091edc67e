/*
 * A real store for a unit test: a new database file in a new directory
 * under /tmp, optionally with a keyring of one random key so secret rows
 * are sealed.  One store at a time per test binary; store_fixture_close()
 * closes it, frees the keyring and removes the files.
 */
#ifndef STORE_FIXTURE_H
#define STORE_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "store/store.h"
#include "vault/vault.h"

static char store_fixture_dir[64], store_fixture_path[128];
static struct vault *store_fixture_vault; /* NULL unless sealed */

/* NULL when the directory or the database cannot be made. */
static inline struct store *
store_fixture_open(void)
{
	struct store *s = NULL;

	snprintf(store_fixture_dir, sizeof(store_fixture_dir),
	         "/tmp/sandboxd-unit-XXXXXX");
	if (mkdtemp(store_fixture_dir) == NULL)
		return NULL;
	snprintf(store_fixture_path, sizeof(store_fixture_path), "%s/test.db",
	         store_fixture_dir);
	if (store_open(&s, store_fixture_path) < 0) {
		rmdir(store_fixture_dir);
		return NULL;
	}
	return s;
}

static inline struct store *
store_fixture_open_sealed(void)
{
	unsigned char k[VAULT_KEY_BYTES];
	struct store *s = store_fixture_open();

	if (s == NULL)
		return NULL;
	store_fixture_vault = vault_new();
	vault_key_random(k);
	vault_add_key(store_fixture_vault, k);
	vault_wipe(k, sizeof(k));
	store_set_vault(s, store_fixture_vault);
	return s;
}

static inline void
store_fixture_close(struct store *s)
{
	char f[160];

	store_close(s);
	vault_free(store_fixture_vault);
	store_fixture_vault = NULL;
	unlink(store_fixture_path);
	snprintf(f, sizeof(f), "%s-wal", store_fixture_path);
	unlink(f);
	snprintf(f, sizeof(f), "%s-shm", store_fixture_path);
	unlink(f);
	rmdir(store_fixture_dir);
}

#endif
