/*
 * vault: the only door to libsodium.  It holds what API auth needs
 * (random tokens, their hashes, constant-time comparison) and the master
 * keys that seal every secret the store keeps: agent credentials, git
 * tokens, sensitive app config.
 *
 * A struct vault is a keyring of at most VAULT_MAX_KEYS master keys.  The
 * first one seals; the others only open (a rotation in progress, or
 * SANDBOXD_SECRETS_KEY_PREVIOUS).  Each key is named by its key id, the
 * first 8 bytes of a BLAKE2b hash keyed with it, in hex: stored next to
 * every sealed value, it says which key opens the value without trying
 * them all, and can be printed without revealing the key.
 *
 * Call vault_init() once before any thread uses the rest.  A keyring is
 * built at start-up by one thread; after that it is read-only and every
 * function taking a const struct vault * may be called from any thread.
 */
#ifndef VAULT_VAULT_H
#define VAULT_VAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VAULT_TOKEN_LEN 46 /* "sk_" + 43 base64url characters */
#define VAULT_HASH_HEX  64

#define VAULT_KEY_BYTES        32
#define VAULT_KEY_TEXT_LEN     44 /* standard base64 of 32 bytes, padded */
#define VAULT_KEY_ID_LEN       16 /* hex of 8 bytes */
#define VAULT_NONCE_BYTES      24 /* XChaCha20-Poly1305 */
#define VAULT_TAG_BYTES        16
#define VAULT_MAX_KEYS         2
#define VAULT_MAX_SECRET_BYTES (256u << 10) /* largest value sealed */

/* Files under the data directory. */
#define VAULT_KEY_FILE  "secret.key"
#define VAULT_NEXT_FILE "secret.key.next" /* a rotation's new key */
#define VAULT_LOCK_FILE "state/secrets.lock"

int vault_init(void);
/* A new API token "sk_…" (32 random bytes) and its NUL. */
void vault_token_new(char out[VAULT_TOKEN_LEN + 1]);
/* SHA-256 of s as lower-case hex and its NUL. */
void vault_hash_hex(const char *s, size_t len, char out[VAULT_HASH_HEX + 1]);
/*
 * SHA-256 over data given in pieces (a file read chunk by chunk):
 * vault_sha256_new() (NULL when out of memory), any number of updates,
 * then vault_sha256_end(), which writes the lower-case hex and frees.
 */
struct vault_sha256;
struct vault_sha256 *vault_sha256_new(void);
void vault_sha256_update(struct vault_sha256 *h, const void *p, size_t n);
void vault_sha256_end(struct vault_sha256 *h, char out[VAULT_HASH_HEX + 1]);
/* The SHA-256 (hex) and size of the file at path; 0 or -1 (errno). */
int vault_sha256_file(const char *path, char out[VAULT_HASH_HEX + 1],
                      int64_t *bytes);
/* Compares n bytes in time independent of their contents. */
bool vault_equal(const void *a, const void *b, size_t n);
void vault_wipe(void *p, size_t n);

/*
 * OAuth with PKCE (RFC 7636).  A verifier and a state are 32 random
 * bytes in unpadded base64url; the S256 challenge is the unpadded
 * base64url of the verifier's SHA-256.  Each output is 43 characters and
 * a NUL.
 */
#define VAULT_B64URL_32_LEN 43
void vault_random_b64url(char out[VAULT_B64URL_32_LEN + 1]);
void vault_s256(const char *s, size_t len, char out[VAULT_B64URL_32_LEN + 1]);
/* A new verifier and its challenge. */
void vault_pkce(char verifier[VAULT_B64URL_32_LEN + 1],
                char challenge[VAULT_B64URL_32_LEN + 1]);

/*
 * Console passwords: argon2id (crypto_pwhash_str) at the INTERACTIVE
 * limits, about 64 MiB and a few tens of milliseconds a hash, on
 * purpose.  Slow: never call it under a lock or on the edge's loop.
 * vault_pwhash writes the encoded hash (algorithm, parameters, salt) and
 * its NUL: 0, or -1 (out of memory).  vault_pwverify is constant-time
 * in the password.
 */
#define VAULT_PWHASH_LEN 128 /* crypto_pwhash_STRBYTES, with the NUL */
int vault_pwhash(const char *pw, size_t len, char out[VAULT_PWHASH_LEN]);
bool vault_pwverify(const char *hash, const char *pw, size_t len);
/* A uniformly random number below n (n > 0). */
uint32_t vault_random_below(uint32_t n);
/* HMAC-SHA-256 of m under key, as unpadded base64url (43 characters). */
void vault_hmac_b64url(const unsigned char key[VAULT_KEY_BYTES], const void *m,
                       size_t n, char out[VAULT_B64URL_32_LEN + 1]);

/* --- keys ---------------------------------------------------------------- */

struct vault;

/* An empty keyring; NULL when out of memory. */
struct vault *vault_new(void);
/* Wipes the keys and frees; NULL is fine. */
void vault_free(struct vault *v);
/*
 * Adds a copy of key (the caller wipes its own).  The first key added
 * seals; a key the ring holds already is not added twice.  0, or -1 when
 * the ring is full or out of memory.
 */
int vault_add_key(struct vault *v, const unsigned char key[VAULT_KEY_BYTES]);
/* Makes the key with this id the sealing one; -1 when the ring lacks it. */
int vault_use_key(struct vault *v, const char *key_id);
/* The i-th key's id (0 seals); NULL past the last. */
const char *vault_key_id(const struct vault *v, int i);
bool vault_has_key(const struct vault *v, const char *key_id);

/* 32 random bytes. */
void vault_key_random(unsigned char key[VAULT_KEY_BYTES]);
/*
 * A key for one purpose (context, e.g. "preview cookies"), derived from
 * the sealing key by keyed BLAKE2b: the same after a restart, another
 * after a rotation.  0, or -1 when the ring is empty.
 */
int vault_derive(const struct vault *v, const char *context,
                 unsigned char out[VAULT_KEY_BYTES]);
/*
 * Parses a key's text: standard base64, padded, of exactly 32 bytes;
 * white space around it is ignored.  0, or -1 with the reason in err
 * (never the text itself).
 */
int vault_key_parse(const char *text, size_t len,
                    unsigned char key[VAULT_KEY_BYTES], char *err,
                    size_t errlen);
void vault_key_text(const unsigned char key[VAULT_KEY_BYTES],
                    char out[VAULT_KEY_TEXT_LEN + 1]);
void vault_key_id_of(const unsigned char key[VAULT_KEY_BYTES],
                     char out[VAULT_KEY_ID_LEN + 1]);

/*
 * Standard base64 (padding optional, "\r\n" and spaces skipped) into at
 * most max bytes of out: 0 with *got, or -1 when the text is not base64
 * or holds more than max bytes.
 */
int vault_base64_decode(const char *in, size_t len, unsigned char *out,
                        size_t max, size_t *got);

/* --- sealing ------------------------------------------------------------- */

/* A sealed value as it is stored: which key, the nonce, the ciphertext. */
struct vault_box {
	char key_id[VAULT_KEY_ID_LEN + 1];
	unsigned char nonce[VAULT_NONCE_BYTES];
	unsigned char *ct; /* ciphertext and tag, malloc'd */
	size_t ct_len;
};

/*
 * An opened value in guarded memory (sodium_malloc), NUL-terminated for
 * convenience (values may hold no NUL of their own).  Release it with
 * vault_secret_free(), which wipes it.
 */
struct vault_secret {
	char *data;
	size_t len;
};

/*
 * Seals n bytes of pt with the sealing key and a random nonce.  aad (not
 * secret, not stored) binds the box to where it is kept: opening it
 * with any other aad fails, so a box moved to another row is useless.
 * 0, or -1 (no key, n over VAULT_MAX_SECRET_BYTES, out of memory).
 */
int vault_seal(const struct vault *v, const void *aad, size_t aad_len,
               const void *pt, size_t n, struct vault_box *out);
/*
 * Opens a box with the key its key id names.  -1 when the ring lacks that
 * key, or the box was altered or sealed for another aad; out is then
 * empty.
 */
int vault_open(const struct vault *v, const void *aad, size_t aad_len,
               const struct vault_box *box, struct vault_secret *out);
void vault_box_release(struct vault_box *b);
/* A zeroed secret of len bytes (plus the NUL); -1 when out of memory. */
int vault_secret_alloc(struct vault_secret *s, size_t len);
void vault_secret_free(struct vault_secret *s);

/* --- the key files and rotation (keyfile.c) --------------------------------
 */

/* How many stored secrets each key id sealed (from the store). */
struct vault_usage {
	char key_id[VAULT_KEY_ID_LEN + 1];
	int64_t n;
};

struct vault_source {
	const char *data_dir;
	const char *env_key;      /* SANDBOXD_SECRETS_KEY, NULL when unset */
	const char *env_previous; /* SANDBOXD_SECRETS_KEY_PREVIOUS, or NULL */
	const struct vault_usage *use;
	size_t nuse;
	bool read_only; /* never create, rename or remove a file */
};

/*
 * Loads the master keys.  From the environment when env_key is set (and
 * env_previous as an opening-only key), else from <data>/secret.key,
 * which is created (0600, random) only when neither it nor a rotation's
 * secret.key.next exists and no secret is stored.  A key file that is not
 * exactly a key is an error, never replaced.  When secret.key.next exists
 * both keys are loaded; if no stored secret is under the old key any
 * more, the rotation is finished (the rename).  Every key id in use must
 * be loaded, else it is an error ("the wrong key?").  The error text
 * names the file or variable.  *how says where the sealing key came from.
 */
int vault_load(struct vault **out, const struct vault_source *src, char *how,
               size_t howlen, char *err, size_t errlen);

/*
 * A rotation, step 1: a new random key, durable in secret.key.next
 * (0600, written to a temporary file, fsynced, linked into place, the
 * directory fsynced), becomes v's sealing key.  When secret.key.next
 * exists already (an interrupted rotation, loaded by vault_load), it is
 * reused instead.  Step 2 re-seals every stored secret in one
 * transaction (store_secret_reseal); step 3 is vault_rotate_finish.
 */
int vault_rotate_begin(struct vault *v, const char *data_dir, char *err,
                       size_t errlen);
/* Step 3: secret.key.next replaces secret.key; the directory is fsynced. */
int vault_rotate_finish(const char *data_dir, char *err, size_t errlen);

/*
 * An advisory lock on <data>/state/secrets.lock: the daemon takes it
 * shared, `secrets rotate` exclusive, so neither runs while the other
 * does.  Returns the descriptor that holds it (close it to let go, or
 * keep it until exit).  Never blocks: -1 with errno EWOULDBLOCK when the
 * other side holds it.
 */
int vault_lock(const char *data_dir, bool exclusive);

#endif
