/*
 * Secrets primitives on libsodium.
 *
 * API tokens carry 256 random bits, so a plain SHA-256 is enough to store
 * them: there is nothing to brute-force.  Comparisons of hashes go
 * through sodium_memcmp so a caller timing the API learns nothing about
 * how many bytes matched.
 *
 * Stored secrets are sealed with XChaCha20-Poly1305 (IETF): its 192-bit
 * nonce is safe to draw at random for every seal, so no counter has to
 * survive restarts or be shared between threads.  The associated data
 * names the row a value belongs to, which the reference's AES-GCM without
 * AAD did not: there a ciphertext copied into another row opened fine.
 * Keys live in sodium_malloc memory (guard pages, excluded from core
 * dumps, wiped on free) that is read-only except while a key is added;
 * opened values get the same treatment (struct vault_secret).
 */
#include "vault/vault.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vault {
	unsigned char *keys; /* VAULT_MAX_KEYS * VAULT_KEY_BYTES, guarded */
	char ids[VAULT_MAX_KEYS][VAULT_KEY_ID_LEN + 1];
	int n; /* keys[0] seals */
};

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

struct vault_sha256 {
	crypto_hash_sha256_state st;
};

struct vault_sha256 *
vault_sha256_new(void)
{
	struct vault_sha256 *h = malloc(sizeof(*h));

	if (h)
		crypto_hash_sha256_init(&h->st);
	return h;
}

void
vault_sha256_update(struct vault_sha256 *h, const void *p, size_t n)
{
	crypto_hash_sha256_update(&h->st, p, n);
}

void
vault_sha256_end(struct vault_sha256 *h, char out[VAULT_HASH_HEX + 1])
{
	unsigned char d[crypto_hash_sha256_BYTES];

	crypto_hash_sha256_final(&h->st, d);
	sodium_bin2hex(out, VAULT_HASH_HEX + 1, d, sizeof(d));
	free(h);
}

bool
vault_equal(const void *a, const void *b, size_t n)
{
	return sodium_memcmp(a, b, n) == 0;
}

void
vault_wipe(void *p, size_t n)
{
	if (p)
		sodium_memzero(p, n);
}

_Static_assert(VAULT_PWHASH_LEN == crypto_pwhash_STRBYTES,
               "VAULT_PWHASH_LEN is libsodium's encoded hash size");

int
vault_pwhash(const char *pw, size_t len, char out[VAULT_PWHASH_LEN])
{
	return crypto_pwhash_str(out, pw, len,
	                         crypto_pwhash_OPSLIMIT_INTERACTIVE,
	                         crypto_pwhash_MEMLIMIT_INTERACTIVE) == 0
	           ? 0
	           : -1;
}

bool
vault_pwverify(const char *hash, const char *pw, size_t len)
{
	return crypto_pwhash_str_verify(hash, pw, len) == 0;
}

uint32_t
vault_random_below(uint32_t n)
{
	return randombytes_uniform(n);
}

void
vault_hmac_b64url(const unsigned char key[VAULT_KEY_BYTES], const void *m,
                  size_t n, char out[VAULT_B64URL_32_LEN + 1])
{
	unsigned char h[crypto_auth_hmacsha256_BYTES];

	crypto_auth_hmacsha256(h, m, n, key);
	sodium_bin2base64(out, VAULT_B64URL_32_LEN + 1, h, sizeof(h),
	                  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

void
vault_random_b64url(char out[VAULT_B64URL_32_LEN + 1])
{
	unsigned char rnd[32];

	randombytes_buf(rnd, sizeof(rnd));
	sodium_bin2base64(out, VAULT_B64URL_32_LEN + 1, rnd, sizeof(rnd),
	                  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	sodium_memzero(rnd, sizeof(rnd));
}

void
vault_s256(const char *s, size_t len, char out[VAULT_B64URL_32_LEN + 1])
{
	unsigned char h[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(h, (const unsigned char *)s, len);
	sodium_bin2base64(out, VAULT_B64URL_32_LEN + 1, h, sizeof(h),
	                  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

void
vault_pkce(char verifier[VAULT_B64URL_32_LEN + 1],
           char challenge[VAULT_B64URL_32_LEN + 1])
{
	vault_random_b64url(verifier);
	vault_s256(verifier, VAULT_B64URL_32_LEN, challenge);
}

/* --- keys ---------------------------------------------------------------- */

struct vault *
vault_new(void)
{
	struct vault *v = calloc(1, sizeof(*v));

	if (v == NULL)
		return NULL;
	v->keys = sodium_malloc(VAULT_MAX_KEYS * VAULT_KEY_BYTES);
	if (v->keys == NULL) {
		free(v);
		return NULL;
	}
	sodium_memzero(v->keys, VAULT_MAX_KEYS * VAULT_KEY_BYTES);
	sodium_mprotect_readonly(v->keys);
	return v;
}

void
vault_free(struct vault *v)
{
	if (v == NULL)
		return;
	sodium_free(v->keys); /* wipes */
	free(v);
}

void
vault_key_id_of(const unsigned char key[VAULT_KEY_BYTES],
                char out[VAULT_KEY_ID_LEN + 1])
{
	static const char label[] = "sandboxd key id";
	unsigned char h[crypto_generichash_BYTES];

	crypto_generichash(h, sizeof(h), (const unsigned char *)label,
	                   sizeof(label) - 1, key, VAULT_KEY_BYTES);
	sodium_bin2hex(out, VAULT_KEY_ID_LEN + 1, h, VAULT_KEY_ID_LEN / 2);
}

int
vault_derive(const struct vault *v, const char *context,
             unsigned char out[VAULT_KEY_BYTES])
{
	if (v == NULL || v->n == 0)
		return -1;
	crypto_generichash(out, VAULT_KEY_BYTES, (const unsigned char *)context,
	                   strlen(context), v->keys, VAULT_KEY_BYTES);
	return 0;
}

static int
key_index(const struct vault *v, const char *key_id)
{
	for (int i = 0; v && key_id && i < v->n; i++)
		if (strcmp(v->ids[i], key_id) == 0)
			return i;
	return -1;
}

int
vault_add_key(struct vault *v, const unsigned char key[VAULT_KEY_BYTES])
{
	char id[VAULT_KEY_ID_LEN + 1];

	vault_key_id_of(key, id);
	if (key_index(v, id) >= 0)
		return 0;
	if (v->n == VAULT_MAX_KEYS)
		return -1;
	sodium_mprotect_readwrite(v->keys);
	memcpy(v->keys + (size_t)v->n * VAULT_KEY_BYTES, key, VAULT_KEY_BYTES);
	sodium_mprotect_readonly(v->keys);
	memcpy(v->ids[v->n], id, sizeof(id));
	v->n++;
	return 0;
}

int
vault_use_key(struct vault *v, const char *key_id)
{
	unsigned char tmp[VAULT_KEY_BYTES];
	char id[VAULT_KEY_ID_LEN + 1];
	int i = key_index(v, key_id);

	if (i < 0)
		return -1;
	if (i == 0)
		return 0;
	sodium_mprotect_readwrite(v->keys);
	memcpy(tmp, v->keys, VAULT_KEY_BYTES);
	memcpy(v->keys, v->keys + (size_t)i * VAULT_KEY_BYTES, VAULT_KEY_BYTES);
	memcpy(v->keys + (size_t)i * VAULT_KEY_BYTES, tmp, VAULT_KEY_BYTES);
	sodium_mprotect_readonly(v->keys);
	sodium_memzero(tmp, sizeof(tmp));
	memcpy(id, v->ids[0], sizeof(id));
	memcpy(v->ids[0], v->ids[i], sizeof(id));
	memcpy(v->ids[i], id, sizeof(id));
	return 0;
}

const char *
vault_key_id(const struct vault *v, int i)
{
	return v && i >= 0 && i < v->n ? v->ids[i] : NULL;
}

bool
vault_has_key(const struct vault *v, const char *key_id)
{
	return key_index(v, key_id) >= 0;
}

void
vault_key_random(unsigned char key[VAULT_KEY_BYTES])
{
	crypto_aead_xchacha20poly1305_ietf_keygen(key);
}

int
vault_key_parse(const char *text, size_t len,
                unsigned char key[VAULT_KEY_BYTES], char *err, size_t errlen)
{
	char b64[VAULT_KEY_TEXT_LEN + 1];
	size_t got = 0;
	int rc;

	while (len && strchr(" \t\r\n", text[0])) {
		text++;
		len--;
	}
	while (len && strchr(" \t\r\n", text[len - 1]))
		len--;
	if (len != VAULT_KEY_TEXT_LEN) {
		snprintf(err, errlen,
		         "not a key: expected the standard base64 of exactly "
		         "%d bytes (%d characters), found %zu characters",
		         VAULT_KEY_BYTES, VAULT_KEY_TEXT_LEN, len);
		return -1;
	}
	memcpy(b64, text, len);
	b64[len] = '\0';
	rc = sodium_base642bin(key, VAULT_KEY_BYTES, b64, len, NULL, &got, NULL,
	                       sodium_base64_VARIANT_ORIGINAL);
	sodium_memzero(b64, sizeof(b64));
	if (rc != 0 || got != VAULT_KEY_BYTES) {
		sodium_memzero(key, VAULT_KEY_BYTES);
		snprintf(err, errlen,
		         "not a key: not valid standard base64 of exactly %d "
		         "bytes",
		         VAULT_KEY_BYTES);
		return -1;
	}
	return 0;
}

void
vault_key_text(const unsigned char key[VAULT_KEY_BYTES],
               char out[VAULT_KEY_TEXT_LEN + 1])
{
	sodium_bin2base64(out, VAULT_KEY_TEXT_LEN + 1, key, VAULT_KEY_BYTES,
	                  sodium_base64_VARIANT_ORIGINAL);
}

/* --- sealing ------------------------------------------------------------- */

int
vault_secret_alloc(struct vault_secret *s, size_t len)
{
	s->len = 0;
	s->data = sodium_malloc(len + 1);
	if (s->data == NULL)
		return -1;
	sodium_memzero(s->data, len + 1);
	s->len = len;
	return 0;
}

void
vault_secret_free(struct vault_secret *s)
{
	if (s == NULL)
		return;
	sodium_free(s->data); /* wipes; NULL is fine */
	s->data = NULL;
	s->len = 0;
}

void
vault_box_release(struct vault_box *b)
{
	free(b->ct);
	b->ct = NULL;
	b->ct_len = 0;
}

int
vault_seal(const struct vault *v, const void *aad, size_t aad_len,
           const void *pt, size_t n, struct vault_box *out)
{
	unsigned long long clen = 0;

	memset(out, 0, sizeof(*out));
	if (v == NULL || v->n == 0 || n > VAULT_MAX_SECRET_BYTES)
		return -1;
	out->ct = malloc(n + VAULT_TAG_BYTES);
	if (out->ct == NULL)
		return -1;
	randombytes_buf(out->nonce, sizeof(out->nonce));
	crypto_aead_xchacha20poly1305_ietf_encrypt(
	    out->ct, &clen, pt, n, aad, aad_len, NULL, out->nonce, v->keys);
	out->ct_len = (size_t)clen;
	memcpy(out->key_id, v->ids[0], sizeof(out->key_id));
	return 0;
}

int
vault_open(const struct vault *v, const void *aad, size_t aad_len,
           const struct vault_box *box, struct vault_secret *out)
{
	int i = key_index(v, box->key_id);
	unsigned long long mlen = 0;

	out->data = NULL;
	out->len = 0;
	if (i < 0 || box->ct == NULL || box->ct_len < VAULT_TAG_BYTES ||
	    box->ct_len - VAULT_TAG_BYTES > VAULT_MAX_SECRET_BYTES)
		return -1;
	if (vault_secret_alloc(out, box->ct_len - VAULT_TAG_BYTES) < 0)
		return -1;
	if (crypto_aead_xchacha20poly1305_ietf_decrypt(
	        (unsigned char *)out->data, &mlen, NULL, box->ct, box->ct_len,
	        aad, aad_len, box->nonce,
	        v->keys + (size_t)i * VAULT_KEY_BYTES) != 0 ||
	    mlen != out->len) {
		vault_secret_free(out);
		return -1;
	}
	return 0;
}

int
vault_base64_decode(const char *in, size_t len, unsigned char *out, size_t max,
                    size_t *got)
{
	const char *end = NULL;

	*got = 0;
	if (sodium_base642bin(out, max, in, len, " \r\n", got, &end,
	                      sodium_base64_VARIANT_ORIGINAL) != 0 &&
	    sodium_base642bin(out, max, in, len, " \r\n", got, &end,
	                      sodium_base64_VARIANT_ORIGINAL_NO_PADDING) != 0)
		return -1;
	return end == in + len ? 0 : -1;
}
