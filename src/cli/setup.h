/*
 * cli/setup: what the daemon and the maintenance commands open the same
 * way: the data directory and the database, the secrets lock, the master
 * keys (checked against what the store holds), and the wiping of the
 * keys' text once loaded.  Each logs its own error.
 */
#ifndef CLI_SETUP_H
#define CLI_SETUP_H

#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"
#include "store/store.h"
#include "vault/vault.h"

/* The data directory prepared and the database opened. */
int cli_open_store(const struct config *cfg, struct store **store);
/* The daemon holds it shared, `secrets rotate` exclusive. */
int cli_lock_secrets(const struct config *cfg, bool exclusive);
/* The master keys loaded into *out and given to the store; how gets
 * where the sealing key came from. */
int cli_open_vault(const struct config *cfg, struct store *store,
                   bool read_only, struct vault **out, char *how,
                   size_t howlen);
/* The keys' text wiped from the configuration and the environment. */
void cli_forget_key_text(struct config *cfg);

#endif
