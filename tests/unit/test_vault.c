/*
 * Unit tests of the vault: sealing and what must not open, key ids, key
 * text, the key files (made 0600, never replaced, checked against what
 * the store holds), the environment keys, and a rotation killed after
 * each of its steps, with a real store in a temporary directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"
#include "unit.h"
#include "vault/vault.h"

#define KEY_0_31 "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

static char dir[64];

static void
mkdir_tmp(void)
{
	char state[96];

	snprintf(dir, sizeof(dir), "/tmp/sandboxd-vault-XXXXXX");
	if (mkdtemp(dir) == NULL)
		abort();
	snprintf(state, sizeof(state), "%s/state", dir);
	mkdir(state, 0700);
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void
rm_tmp(void)
{
	if (nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS) < 0)
		fprintf(stderr, "  cannot remove %s\n", dir);
}

static struct vault *
random_vault(void)
{
	unsigned char k[VAULT_KEY_BYTES];
	struct vault *v = vault_new();

	vault_key_random(k);
	vault_add_key(v, k);
	vault_wipe(k, sizeof(k));
	return v;
}

static bool
opens_to(const struct vault *v, const char *aad, const struct vault_box *b,
         const char *want)
{
	struct vault_secret s;
	bool ok;

	if (vault_open(v, aad, strlen(aad), b, &s) < 0)
		return false;
	ok = s.len == strlen(want) && memcmp(s.data, want, s.len) == 0 &&
	     s.data[s.len] == '\0';
	vault_secret_free(&s);
	return ok;
}

static void
seal_open_round_trip(void)
{
	struct vault *v = random_vault();
	struct vault_box b, b2;

	CHECK(vault_seal(v, "agent|x", 7, "sk-secret", 9, &b) == 0);
	CHECK(b.ct_len == 9 + VAULT_TAG_BYTES);
	CHECK(memmem(b.ct, b.ct_len, "sk-secret", 9) == NULL);
	CHECK_STR(b.key_id, vault_key_id(v, 0));
	CHECK(opens_to(v, "agent|x", &b, "sk-secret"));
	/* A fresh nonce each time: the same value seals differently. */
	CHECK(vault_seal(v, "agent|x", 7, "sk-secret", 9, &b2) == 0);
	CHECK(memcmp(b.nonce, b2.nonce, VAULT_NONCE_BYTES) != 0);
	CHECK(memcmp(b.ct, b2.ct, b.ct_len) != 0);
	/* Empty values are values too. */
	vault_box_release(&b2);
	CHECK(vault_seal(v, "e", 1, "", 0, &b2) == 0);
	CHECK(opens_to(v, "e", &b2, ""));
	vault_box_release(&b);
	vault_box_release(&b2);
	vault_free(v);
}

static void
wrong_aad_does_not_open(void)
{
	struct vault *v = random_vault();
	struct vault_secret s;
	struct vault_box b;

	CHECK(vault_seal(v, "app_config|A|KEY", 16, "v", 1, &b) == 0);
	CHECK(vault_open(v, "app_config|B|KEY", 16, &b, &s) < 0);
	CHECK(s.data == NULL);
	CHECK(vault_open(v, "", 0, &b, &s) < 0);
	CHECK(opens_to(v, "app_config|A|KEY", &b, "v"));
	vault_box_release(&b);
	vault_free(v);
}

static void
tampering_does_not_open(void)
{
	struct vault *v = random_vault();
	struct vault_box b;

	CHECK(vault_seal(v, "a", 1, "value", 5, &b) == 0);
	b.ct[0] ^= 1; /* ciphertext */
	CHECK(!opens_to(v, "a", &b, "value"));
	b.ct[0] ^= 1;
	b.ct[b.ct_len - 1] ^= 0x80; /* tag */
	CHECK(!opens_to(v, "a", &b, "value"));
	b.ct[b.ct_len - 1] ^= 0x80;
	b.nonce[3] ^= 4;
	CHECK(!opens_to(v, "a", &b, "value"));
	b.nonce[3] ^= 4;
	b.ct_len--; /* truncated */
	CHECK(!opens_to(v, "a", &b, "value"));
	b.ct_len++;
	CHECK(opens_to(v, "a", &b, "value"));
	vault_box_release(&b);
	vault_free(v);
}

static void
wrong_key_does_not_open(void)
{
	struct vault *v = random_vault(), *other = random_vault();
	struct vault_box b;

	CHECK(vault_seal(v, "a", 1, "value", 5, &b) == 0);
	CHECK(!opens_to(other, "a", &b, "value")); /* unknown key id */
	/* Claiming the other key's id does not help. */
	snprintf(b.key_id, sizeof(b.key_id), "%s", vault_key_id(other, 0));
	CHECK(!opens_to(other, "a", &b, "value"));
	vault_box_release(&b);
	/* No key at all: nothing seals. */
	vault_free(other);
	other = vault_new();
	CHECK(vault_seal(other, "a", 1, "v", 1, &b) < 0);
	vault_free(other);
	vault_free(v);
}

static void
key_ids(void)
{
	unsigned char k[VAULT_KEY_BYTES];
	char id[VAULT_KEY_ID_LEN + 1], err[200];
	struct vault *v = vault_new();

	for (int i = 0; i < VAULT_KEY_BYTES; i++)
		k[i] = (unsigned char)i;
	/* BLAKE2b-256 keyed with the key over "sandboxd key id", 8 bytes. */
	vault_key_id_of(k, id);
	CHECK_STR(id, "4c6d577ce19691f3");
	CHECK(vault_add_key(v, k) == 0);
	CHECK_STR(vault_key_id(v, 0), "4c6d577ce19691f3");
	CHECK(vault_add_key(v, k) == 0); /* the same key once only */
	CHECK(vault_key_id(v, 1) == NULL);
	CHECK(vault_key_parse(KEY_0_31, strlen(KEY_0_31), k, err,
	                      sizeof(err)) == 0);
	vault_key_id_of(k, id);
	CHECK_STR(id, "4c6d577ce19691f3");
	vault_free(v);
}

static void
key_text_parsing(void)
{
	unsigned char k[VAULT_KEY_BYTES];
	char err[200], text[VAULT_KEY_TEXT_LEN + 1];
	const char *bad[] = {
	    "",
	    "abc",
	    /* 33 and 31 bytes */
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
	    /* not base64, URL-safe alphabet, bits after the end */
	    "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh*=",
	    "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd-_8=",
	    "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh9=",
	    "AAECAwQFBgcICQoLDA0ODxAR EhMUFRYXGBkaGxwdHh8=",
	};

	CHECK(vault_key_parse(KEY_0_31, strlen(KEY_0_31), k, err,
	                      sizeof(err)) == 0);
	CHECK(k[0] == 0 && k[31] == 31);
	CHECK(vault_key_parse("  " KEY_0_31 "\n", strlen(KEY_0_31) + 3, k, err,
	                      sizeof(err)) == 0);
	vault_key_text(k, text);
	CHECK_STR(text, KEY_0_31);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK(vault_key_parse(bad[i], strlen(bad[i]), k, err,
		                      sizeof(err)) < 0);
		CHECK(strstr(err, "32 bytes") != NULL);
		/* The message never repeats the text. */
		CHECK(bad[i][0] == '\0' || strstr(err, bad[i]) == NULL);
	}
}

/* vault_load over the temporary directory, with the given usage. */
static int
load(struct vault **v, const struct vault_usage *use, size_t n, bool ro,
     char *err, size_t errlen)
{
	struct vault_source src = {
	    .data_dir = dir, .use = use, .nuse = n, .read_only = ro};
	char how[256];

	return vault_load(v, &src, how, sizeof(how), err, errlen);
}

static void
read_file(const char *name, char *out, size_t len)
{
	char path[128];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, out, len - 1);
		close(fd);
	}
	out[n > 0 ? n : 0] = '\0';
}

static void
write_file(const char *name, const char *text, mode_t mode)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd < 0 || write(fd, text, strlen(text)) < 0)
		abort();
	close(fd);
}

static bool
exists(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void
key_file_is_made_0600_once(void)
{
	struct vault *v = NULL, *again = NULL;
	char path[128], text[128], err[512];
	struct stat st;

	mkdir_tmp();
	CHECK(load(&v, NULL, 0, false, err, sizeof(err)) == 0);
	snprintf(path, sizeof(path), "%s/secret.key", dir);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	read_file("secret.key", text, sizeof(text));
	CHECK(strlen(text) == VAULT_KEY_TEXT_LEN + 1 && text[44] == '\n');
	CHECK(!exists("secret.key.tmp"));
	CHECK(load(&again, NULL, 0, false, err, sizeof(err)) == 0);
	CHECK(v && again);
	if (v && again)
		CHECK_STR(vault_key_id(again, 0), vault_key_id(v, 0));
	vault_free(v);
	vault_free(again);
	rm_tmp();
}

static void
bad_key_file_is_an_error_and_kept(void)
{
	const char *bad[] = {"garbage\n", KEY_0_31 "x\n", "", "\n\n"};
	struct vault *v = NULL;
	char text[128], err[512];

	mkdir_tmp();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file("secret.key", bad[i], 0600);
		err[0] = '\0';
		CHECK(load(&v, NULL, 0, false, err, sizeof(err)) < 0);
		CHECK(v == NULL);
		CHECK(strstr(err, "secret.key") != NULL);
		CHECK(strstr(err, "restore it") != NULL);
		read_file("secret.key", text, sizeof(text));
		CHECK_STR(text, bad[i]);
	}
	/* A mode wider than 0600 is only a warning. */
	write_file("secret.key", KEY_0_31 "\n", 0644);
	CHECK(load(&v, NULL, 0, false, err, sizeof(err)) == 0);
	CHECK(v && strcmp(vault_key_id(v, 0), "4c6d577ce19691f3") == 0);
	vault_free(v);
	rm_tmp();
}

static void
missing_key_with_secrets_is_an_error(void)
{
	struct vault_usage use[] = {{"4c6d577ce19691f3", 3}};
	struct vault *v = NULL;
	char err[512];

	mkdir_tmp();
	CHECK(load(&v, use, 1, false, err, sizeof(err)) < 0);
	CHECK(strstr(err, "secret.key is missing but 3 secrets are stored") !=
	      NULL);
	CHECK(!exists("secret.key")); /* no new key was made */
	/* The right key, found; another one is "the wrong key". */
	write_file("secret.key", KEY_0_31 "\n", 0600);
	CHECK(load(&v, use, 1, false, err, sizeof(err)) == 0);
	vault_free(v);
	v = NULL;
	use[0].key_id[0] = '5';
	CHECK(load(&v, use, 1, false, err, sizeof(err)) < 0);
	CHECK(strstr(err, "3 stored secrets are sealed with key "
	                  "5c6d577ce19691f3") != NULL);
	rm_tmp();
}

static void
environment_keys(void)
{
	struct vault_usage use[] = {{"4c6d577ce19691f3", 1}};
	struct vault_source src = {.env_key = KEY_0_31};
	struct vault *v = NULL;
	char how[64], err[512], other[VAULT_KEY_TEXT_LEN + 1];
	unsigned char k[VAULT_KEY_BYTES];

	mkdir_tmp();
	src.data_dir = dir;
	src.use = use;
	src.nuse = 1;
	CHECK(vault_load(&v, &src, how, sizeof(how), err, sizeof(err)) == 0);
	CHECK_STR(how, "SANDBOXD_SECRETS_KEY");
	CHECK(v && strcmp(vault_key_id(v, 0), "4c6d577ce19691f3") == 0);
	CHECK(!exists("secret.key")); /* no file in this mode */
	vault_free(v);
	src.env_key = "bm90IGEga2V5";
	CHECK(vault_load(&v, &src, how, sizeof(how), err, sizeof(err)) < 0);
	CHECK(strncmp(err, "SANDBOXD_SECRETS_KEY: ", 22) == 0);
	/* A new key with the old one as the previous: both open. */
	vault_key_random(k);
	vault_key_text(k, other);
	src.env_key = other;
	src.env_previous = KEY_0_31;
	CHECK(vault_load(&v, &src, how, sizeof(how), err, sizeof(err)) == 0);
	CHECK(v && vault_has_key(v, "4c6d577ce19691f3") &&
	      strcmp(vault_key_id(v, 0), "4c6d577ce19691f3") != 0);
	vault_free(v);
	src.env_previous = "x";
	CHECK(vault_load(&v, &src, how, sizeof(how), err, sizeof(err)) < 0);
	CHECK(strncmp(err, "SANDBOXD_SECRETS_KEY_PREVIOUS: ", 31) == 0);
	/* Secrets under neither key: refused. */
	src.env_previous = NULL;
	CHECK(vault_load(&v, &src, how, sizeof(how), err, sizeof(err)) < 0);
	CHECK(strstr(err, "sealed with key 4c6d577ce19691f3") != NULL);
	rm_tmp();
}

/* --- rotation, killed after each step ------------------------------------ */

static struct store *rs;
static struct vault *rv;

/* "Starts the daemon": the keys as vault_load finds them for the store. */
static int
restart(void)
{
	struct vault_usage *use = NULL;
	char err[512];
	size_t n = 0;
	int rc;

	store_set_vault(rs, NULL);
	vault_free(rv);
	rv = NULL;
	if (store_secret_usage(rs, &use, &n) < 0)
		return -1;
	rc = load(&rv, use, n, false, err, sizeof(err));
	free(use);
	if (rc < 0)
		fprintf(stderr, "  load: %s\n", err);
	store_set_vault(rs, rv);
	return rc;
}

static bool
all_open(void)
{
	int64_t ok, bad;

	return store_secret_check(rs, &ok, &bad) == 0 && ok == 3 && bad == 0;
}

static bool
key_of(const char *kind, const char *owner, const char *name, const char *want)
{
	struct vault_secret s;
	bool ok;

	if (store_secret_get(rs, kind, owner, name, &s) != 0)
		return false;
	ok = strcmp(s.data, want) == 0;
	vault_secret_free(&s);
	return ok;
}

static int64_t
under(const char *key_id)
{
	struct vault_usage *use = NULL;
	int64_t n = 0;
	size_t nu = 0;

	store_secret_usage(rs, &use, &nu);
	for (size_t i = 0; i < nu; i++)
		if (strcmp(use[i].key_id, key_id) == 0)
			n = use[i].n;
	free(use);
	return n;
}

static void
rotation_setup(char old[VAULT_KEY_ID_LEN + 1])
{
	char path[128];

	mkdir_tmp();
	snprintf(path, sizeof(path), "%s/state/sandboxd.db", dir);
	rs = NULL;
	rv = NULL;
	CHECK(store_open(&rs, path) == 0);
	CHECK(restart() == 0);
	CHECK(store_secret_put(rs, STORE_SECRET_AGENT_API_KEY, "", "opencode",
	                       "key-one", 7) == 0);
	CHECK(store_secret_put(rs, STORE_SECRET_AGENT_API_KEY, "",
	                       "claude-code", "key-two", 7) == 0);
	CHECK(store_secret_put(rs, STORE_SECRET_GIT_TOKEN, "alice", "gh",
	                       "ghp_three", 9) == 0);
	snprintf(old, VAULT_KEY_ID_LEN + 1, "%s", vault_key_id(rv, 0));
}

static void
rotation_teardown(void)
{
	store_close(rs);
	vault_free(rv);
	rm_tmp();
}

static void
rotation_survives_a_crash_at_each_step(void)
{
	char old[VAULT_KEY_ID_LEN + 1], next[VAULT_KEY_ID_LEN + 1];
	int64_t n = -1;

	rotation_setup(old);
	/* Killed after step 1: secret.key.next exists, nothing re-sealed. */
	CHECK(vault_rotate_begin(rv, dir, NULL, 0) == 0);
	snprintf(next, sizeof(next), "%s", vault_key_id(rv, 0));
	CHECK(strcmp(next, old) != 0 && exists("secret.key.next"));
	CHECK(restart() == 0);
	CHECK_STR(vault_key_id(rv, 0), old); /* still seals with the old */
	CHECK(vault_has_key(rv, next) && exists("secret.key.next"));
	CHECK(all_open() && under(old) == 3);
	/* The next rotation reuses that key: killed after step 2. */
	CHECK(vault_rotate_begin(rv, dir, NULL, 0) == 0);
	CHECK_STR(vault_key_id(rv, 0), next);
	CHECK(store_secret_reseal(rs, &n) == 0 && n == 3);
	CHECK(under(next) == 3 && under(old) == 0);
	/* Start-up finishes the rename: every secret is under the new key. */
	CHECK(restart() == 0);
	CHECK(!exists("secret.key.next") && exists("secret.key"));
	CHECK_STR(vault_key_id(rv, 0), next);
	CHECK(all_open());
	CHECK(key_of(STORE_SECRET_GIT_TOKEN, "alice", "gh", "ghp_three"));
	/* And with only secret.key (the old key gone) it still opens. */
	CHECK(restart() == 0);
	CHECK(vault_key_id(rv, 1) == NULL && all_open());
	rotation_teardown();
}

static void
rotation_complete_and_after_step_three(void)
{
	char old[VAULT_KEY_ID_LEN + 1], before[128], after[128];
	int64_t n = -1;

	rotation_setup(old);
	read_file("secret.key", before, sizeof(before));
	CHECK(vault_rotate_begin(rv, dir, NULL, 0) == 0);
	CHECK(store_secret_reseal(rs, &n) == 0 && n == 3);
	CHECK(vault_rotate_finish(dir, NULL, 0) == 0);
	read_file("secret.key", after, sizeof(after));
	CHECK(strcmp(before, after) != 0 && !exists("secret.key.next"));
	CHECK(restart() == 0);
	CHECK(strcmp(vault_key_id(rv, 0), old) != 0 && all_open());
	CHECK(key_of(STORE_SECRET_AGENT_API_KEY, "", "opencode", "key-one"));
	/* Nothing left to move: a re-seal moves nothing. */
	CHECK(store_secret_reseal(rs, &n) == 0 && n == 0);
	rotation_teardown();
}

static void
a_failed_reseal_changes_nothing(void)
{
	char old[VAULT_KEY_ID_LEN + 1];
	struct vault *stray = random_vault();
	int64_t n = -1;

	rotation_setup(old);
	/* A row under a key the ring lacks: it cannot be re-sealed. */
	store_set_vault(rs, stray);
	CHECK(store_secret_put(rs, STORE_SECRET_APP_CONFIG,
	                       "01ARZ3NDEKTSV4RR"
	                       "FFQ69G5FAV",
	                       "K", "v", 1) == 0);
	store_set_vault(rs, rv);
	CHECK(vault_rotate_begin(rv, dir, NULL, 0) == 0);
	CHECK(store_secret_reseal(rs, &n) < 0 && n == 0);
	CHECK(under(old) == 3); /* the transaction rolled back */
	vault_free(stray);
	rotation_teardown();
}

static void
rotate_and_daemon_exclude_each_other(void)
{
	int a, b, c;

	mkdir_tmp();
	a = vault_lock(dir, false);
	b = vault_lock(dir, false); /* two readers (daemon, check) */
	CHECK(a >= 0 && b >= 0);
	c = vault_lock(dir, true);
	CHECK(c < 0 && errno == EWOULDBLOCK);
	close(a);
	close(b);
	c = vault_lock(dir, true);
	CHECK(c >= 0);
	a = vault_lock(dir, false);
	CHECK(a < 0 && errno == EWOULDBLOCK);
	close(c);
	rm_tmp();
}

static const struct unit_test tests[] = {
    {"seal and open round trip", seal_open_round_trip},
    {"another aad does not open", wrong_aad_does_not_open},
    {"a tampered box does not open", tampering_does_not_open},
    {"another key does not open", wrong_key_does_not_open},
    {"key ids", key_ids},
    {"key text parsing", key_text_parsing},
    {"secret.key is made 0600, once", key_file_is_made_0600_once},
    {"a bad secret.key is an error and is kept",
     bad_key_file_is_an_error_and_kept},
    {"a missing secret.key with secrets stored is an error",
     missing_key_with_secrets_is_an_error},
    {"SANDBOXD_SECRETS_KEY and _PREVIOUS", environment_keys},
    {"rotation survives a crash after each step",
     rotation_survives_a_crash_at_each_step},
    {"rotation completes", rotation_complete_and_after_step_three},
    {"a failed re-seal changes nothing", a_failed_reseal_changes_nothing},
    {"rotate and the daemon exclude each other",
     rotate_and_daemon_exclude_each_other},
};

int
main(void)
{
	if (vault_init() < 0)
		return 1;
	return UNIT_RUN("vault", tests);
}
