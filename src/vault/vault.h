/*
 * vault: the only door to libsodium.  For now it holds what API auth
 * needs: random tokens, their hashes and constant-time comparison.  Call
 * vault_init() once before any thread uses the rest; then every function
 * is thread-safe.
 */
#ifndef VAULT_VAULT_H
#define VAULT_VAULT_H

#include <stdbool.h>
#include <stddef.h>

#define VAULT_TOKEN_LEN 46 /* "sk_" + 43 base64url characters */
#define VAULT_HASH_HEX  64

int vault_init(void);
/* A new API token "sk_…" (32 random bytes) and its NUL. */
void vault_token_new(char out[VAULT_TOKEN_LEN + 1]);
/* SHA-256 of s as lower-case hex and its NUL. */
void vault_hash_hex(const char *s, size_t len, char out[VAULT_HASH_HEX + 1]);
/* Compares n bytes in time independent of their contents. */
bool vault_equal(const void *a, const void *b, size_t n);
void vault_wipe(void *p, size_t n);

#endif
