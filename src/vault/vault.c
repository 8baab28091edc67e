/*
 * Secrets primitives on libsodium.  API tokens carry 256 random bits, so a
 * plain SHA-256 is enough to store them: there is nothing to brute-force.
 * Comparisons of hashes go through sodium_memcmp so a caller timing the
 * API learns nothing about how many bytes matched.
 */
#include "vault/vault.h"

#include <sodium.h>

int
vault_init(void)
{
	return sodium_init() < 0 ? -1 : 0;
}

void
vault_token_new(char out[VAULT_TOKEN_LEN + 1])
{
	unsigned char rnd[32];

	randombytes_buf(rnd, sizeof(rnd));
	out[0] = 's';
	out[1] = 'k';
	out[2] = '_';
	sodium_bin2base64(out + 3, VAULT_TOKEN_LEN + 1 - 3, rnd, sizeof(rnd),
	                  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	sodium_memzero(rnd, sizeof(rnd));
}

void
vault_hash_hex(const char *s, size_t len, char out[VAULT_HASH_HEX + 1])
{
	unsigned char h[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(h, (const unsigned char *)s, len);
	sodium_bin2hex(out, VAULT_HASH_HEX + 1, h, sizeof(h));
}

bool
vault_equal(const void *a, const void *b, size_t n)
{
	return sodium_memcmp(a, b, n) == 0;
}

void
vault_wipe(void *p, size_t n)
{
	sodium_memzero(p, n);
}
