/*
 * Proxy tokens (see credentials.h); the Claude subscription login is in
 * oauth.c, what the proxy puts on the wire in proxy/wire.c.
 */
#include "cred/credentials.h"

#include <stdio.h>
#include <string.h>

#include "lib/log.h"
#include "vault/vault.h"

#define PROXY_TOKEN_KIND "sandbox_proxy"

int
cred_new_proxy_token(struct store *s, const char *sandbox_id)
{
	char token[VAULT_TOKEN_LEN + 1], hash[VAULT_HASH_HEX + 1];
	int rc;

	vault_token_new(token);
	vault_hash_hex(token, strlen(token), hash);
	rc = store_secret_put(s, PROXY_TOKEN_KIND, "", sandbox_id, token,
	                      strlen(token));
	if (rc == 0)
		rc = store_sandbox_set_proxy_token(s, sandbox_id, hash);
	vault_wipe(token, sizeof(token));
	if (rc != 0)
		log_error("sandbox %s: cannot store its proxy token",
		          sandbox_id);
	return rc == 0 ? 0 : -1;
}

int
cred_proxy_token(struct store *st, const char *sandbox_id, char *out,
                 size_t len)
{
	struct vault_secret s = {0};
	int rc = store_secret_get(st, PROXY_TOKEN_KIND, "", sandbox_id, &s);

	if (rc != 0 || s.len + 1 > len) {
		vault_secret_free(&s);
		return -1;
	}
	memcpy(out, s.data, s.len + 1);
	vault_secret_free(&s);
	return 0;
}

void
cred_drop_proxy_token(struct store *s, const char *sandbox_id)
{
	store_secret_delete(s, PROXY_TOKEN_KIND, "", sandbox_id);
}

int
cred_sandbox_for_token(struct store *s, const char *token, struct sandbox *sb)
{
	char hash[VAULT_HASH_HEX + 1];

	if (token == NULL || strlen(token) != VAULT_TOKEN_LEN)
		return -1;
	vault_hash_hex(token, strlen(token), hash);
	if (store_sandbox_by_proxy_token(s, hash, sb) != 0)
		return -1;
	return sb->status == SANDBOX_RUNNING ? 0 : -1;
}
