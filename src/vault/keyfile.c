/*
 * The master key's sources and its rotation.
 *
 * The key comes from SANDBOXD_SECRETS_KEY when set, else from
 * <data>/secret.key: the key's base64 and a newline, mode 0600.  The file
 * is made only when there is nothing it could be needed for: no key file
 * and no stored secret.  A file that exists but is not exactly a key
 * (truncated, edited, another format) stops the daemon: writing a fresh
 * key over it would make every stored secret unreadable for good, so the
 * operator has to restore it.
 *
 * Rotation is crash-safe by ordering, not by luck:
 *   1. the new key is written to secret.key.next.tmp, fsynced, linked to
 *      secret.key.next, and the directory fsynced;
 *   2. every stored secret is re-sealed with it in ONE SQLite
 *      transaction (store_secret_reseal);
 *   3. secret.key.next is renamed over secret.key, the directory fsynced.
 * Each stored value names its key (key id), so whoever starts next loads
 * both files, opens every value with the key it names, and finishes the
 * rename when no value is under the old key any more.  Killed before
 * step 2 commits, the values are all under the old key and the next
 * rotation reuses secret.key.next; killed after, they are all under the
 * new one and the rename is finished.  *.tmp files are leftovers of step
 * 1 or of the first start, which nothing was ever sealed with: removed.
 *
 * Rejected: deriving the key from a passphrase (an unattended daemon
 * needs the key at boot anyway), and re-encrypting row by row in many
 * transactions (a crash would leave rows under both keys, which works
 * but is harder to reason about than all-or-nothing).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "lib/log.h"
#include "vault/vault.h"

#define KEY_FILE_MAX 256 /* a key file is 45 bytes; a bigger one is not */

/* What the files held, for deciding about a rotation. */
struct loaded {
	bool key, next;
	char key_id[VAULT_KEY_ID_LEN + 1];
	char next_id[VAULT_KEY_ID_LEN + 1];
};

static void
path_of(char *out, size_t len, const char *dir, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

static ssize_t
read_all(int fd, char *buf, size_t len)
{
	size_t off = 0;
	ssize_t n;

	while (off < len && (n = read(fd, buf + off, len - off)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		off += (size_t)n;
	}
	return (ssize_t)off;
}

/* Reads a key file: 0, 1 when it does not exist, -1 with the reason. */
static int
key_file_read(const char *path, unsigned char key[VAULT_KEY_BYTES], char *err,
              size_t errlen)
{
	char text[KEY_FILE_MAX], why[160];
	struct stat st;
	ssize_t n = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0 && errno == ENOENT)
		return 1;
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (S_ISREG(st.st_mode) && st.st_size <= KEY_FILE_MAX)
		n = read_all(fd, text, sizeof(text));
	close(fd);
	if (n < 0) {
		snprintf(err, errlen,
		         "%s: not a key file (not a regular file of at most "
		         "%d bytes, or unreadable); restore it from a backup",
		         path, KEY_FILE_MAX);
		return -1;
	}
	if (st.st_mode & 077)
		log_warn("%s is accessible to other users (mode %04o); "
		         "chmod 600 it",
		         path, (unsigned)(st.st_mode & 07777));
	rc = vault_key_parse(text, (size_t)n, key, why, sizeof(why));
	vault_wipe(text, sizeof(text));
	if (rc < 0)
		snprintf(err, errlen,
		         "%s: %s; restore it from a backup (a key file is "
		         "never replaced: the secrets sealed with it would be "
		         "lost)",
		         path, why);
	return rc;
}

/*
 * Writes key to <dir>/<name> without ever replacing a file of that name:
 * the text goes to <name>.tmp (0600), is fsynced and hard-linked into
 * place, which fails if the name exists; then the directory is fsynced.
 */
static int
key_file_create(const char *dir, const char *name,
                const unsigned char key[VAULT_KEY_BYTES], char *err,
                size_t errlen)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], text[VAULT_KEY_TEXT_LEN + 2];
	int fd, rc = -1;

	path_of(path, sizeof(path), dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	          0600);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	vault_key_text(key, text);
	text[VAULT_KEY_TEXT_LEN] = '\n';
	if (fchmod(fd, 0600) < 0 ||
	    fileio_write_all(fd, text, VAULT_KEY_TEXT_LEN + 1) < 0 ||
	    fsync(fd) < 0) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		close(fd);
		goto out;
	}
	close(fd);
	if (link(tmp, path) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (fileio_sync_dir(dir) < 0) {
		snprintf(err, errlen, "%s: fsync: %s", dir, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	unlink(tmp);
	vault_wipe(text, sizeof(text));
	return rc;
}

static int64_t
usage_of(const struct vault_source *src, const char *key_id)
{
	for (size_t i = 0; i < src->nuse; i++)
		if (strcmp(src->use[i].key_id, key_id) == 0)
			return src->use[i].n;
	return 0;
}

static int64_t
usage_total(const struct vault_source *src)
{
	int64_t n = 0;

	for (size_t i = 0; i < src->nuse; i++)
		n += src->use[i].n;
	return n;
}

/* Adds a key read from text or a file, remembering its id. */
static int
add(struct vault *v, unsigned char key[VAULT_KEY_BYTES], char *id, char *err,
    size_t errlen)
{
	int rc = vault_add_key(v, key);

	if (id)
		vault_key_id_of(key, id);
	vault_wipe(key, VAULT_KEY_BYTES);
	if (rc < 0)
		snprintf(err, errlen, "out of memory for the keys");
	return rc;
}

static int
load_env(struct vault *v, const struct vault_source *src, char *how,
         size_t howlen, char *err, size_t errlen)
{
	unsigned char key[VAULT_KEY_BYTES];
	char why[160];

	if (vault_key_parse(src->env_key, strlen(src->env_key), key, why,
	                    sizeof(why)) < 0) {
		snprintf(err, errlen, "SANDBOXD_SECRETS_KEY: %s", why);
		return -1;
	}
	if (add(v, key, NULL, err, errlen) < 0)
		return -1;
	snprintf(how, howlen, "SANDBOXD_SECRETS_KEY");
	if (src->env_previous == NULL || src->env_previous[0] == '\0')
		return 0;
	if (vault_key_parse(src->env_previous, strlen(src->env_previous), key,
	                    why, sizeof(why)) < 0) {
		snprintf(err, errlen, "SANDBOXD_SECRETS_KEY_PREVIOUS: %s", why);
		return -1;
	}
	return add(v, key, NULL, err, errlen);
}

/* A fresh secret.key, when nothing is stored that needs another. */
static int
create_first(struct vault *v, const struct vault_source *src, struct loaded *l,
             char *err, size_t errlen)
{
	unsigned char key[VAULT_KEY_BYTES];
	char path[PATH_MAX];
	int64_t n = usage_total(src);

	path_of(path, sizeof(path), src->data_dir, VAULT_KEY_FILE);
	if (n > 0) {
		snprintf(
		    err, errlen,
		    "%s is missing but %lld secrets are stored; restore it "
		    "from a backup (or set SANDBOXD_SECRETS_KEY to the key "
		    "they were sealed with)",
		    path, (long long)n);
		return -1;
	}
	if (src->read_only)
		return 0;
	vault_key_random(key);
	if (key_file_create(src->data_dir, VAULT_KEY_FILE, key, err, errlen) <
	    0) {
		vault_wipe(key, sizeof(key));
		return -1;
	}
	log_info("created the master key %s (back it up with the data "
	         "directory: without it the stored secrets are lost)",
	         path);
	l->key = true;
	return add(v, key, l->key_id, err, errlen);
}

static int
load_files(struct vault *v, const struct vault_source *src, struct loaded *l,
           char *err, size_t errlen)
{
	unsigned char key[VAULT_KEY_BYTES];
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	int rc;

	if (!src->read_only) {
		for (int i = 0; i < 2; i++) {
			path_of(path, sizeof(path), src->data_dir,
			        i ? VAULT_NEXT_FILE : VAULT_KEY_FILE);
			snprintf(tmp, sizeof(tmp), "%s.tmp", path);
			unlink(tmp);
		}
	}
	path_of(path, sizeof(path), src->data_dir, VAULT_KEY_FILE);
	rc = key_file_read(path, key, err, errlen);
	if (rc < 0 || (rc == 0 && add(v, key, l->key_id, err, errlen) < 0))
		return -1;
	l->key = rc == 0;
	path_of(path, sizeof(path), src->data_dir, VAULT_NEXT_FILE);
	rc = key_file_read(path, key, err, errlen);
	if (rc < 0 || (rc == 0 && add(v, key, l->next_id, err, errlen) < 0))
		return -1;
	l->next = rc == 0;
	if (!l->key && !l->next)
		return create_first(v, src, l, err, errlen);
	return 0;
}

/* Every stored secret must be under a key we hold. */
static int
check_usage(const struct vault *v, const struct vault_source *src,
            const char *how, char *err, size_t errlen)
{
	char held[2 * VAULT_KEY_ID_LEN + 8];

	snprintf(held, sizeof(held), "%s%s%s",
	         vault_key_id(v, 0) ? vault_key_id(v, 0) : "none",
	         vault_key_id(v, 1) ? " and " : "",
	         vault_key_id(v, 1) ? vault_key_id(v, 1) : "");
	for (size_t i = 0; i < src->nuse; i++) {
		if (src->use[i].n == 0 || vault_has_key(v, src->use[i].key_id))
			continue;
		snprintf(err, errlen,
		         "%lld stored secrets are sealed with key %s, but the "
		         "key from %s is %s: start with the key they were "
		         "sealed with",
		         (long long)src->use[i].n, src->use[i].key_id, how,
		         held);
		return -1;
	}
	return 0;
}

/* secret.key.next exists: finish the rotation if nothing needs the old. */
static int
settle_rotation(struct vault *v, const struct vault_source *src,
                const struct loaded *l, char *err, size_t errlen)
{
	int64_t old = l->key ? usage_of(src, l->key_id) : 0;

	if (!l->next)
		return 0;
	if (old > 0) {
		log_warn("a key rotation was interrupted: %lld secrets are "
		         "still under the old key (both keys are loaded); "
		         "`sandboxd secrets rotate` finishes it",
		         (long long)old);
		return 0;
	}
	vault_use_key(v, l->next_id);
	if (src->read_only)
		return 0;
	if (vault_rotate_finish(src->data_dir, err, errlen) < 0)
		return -1;
	log_info("finished an interrupted key rotation: %s is now %s",
	         VAULT_NEXT_FILE, VAULT_KEY_FILE);
	return 0;
}

int
vault_load(struct vault **out, const struct vault_source *src, char *how,
           size_t howlen, char *err, size_t errlen)
{
	struct loaded l = {0};
	struct vault *v = vault_new();
	int rc;

	*out = NULL;
	if (v == NULL) {
		snprintf(err, errlen, "out of memory for the keys");
		return -1;
	}
	if (src->env_key) {
		rc = load_env(v, src, how, howlen, err, errlen);
	} else {
		path_of(how, howlen, src->data_dir, VAULT_KEY_FILE);
		rc = load_files(v, src, &l, err, errlen);
		if (rc == 0 && !l.key && l.next)
			path_of(how, howlen, src->data_dir, VAULT_NEXT_FILE);
	}
	if (rc == 0)
		rc = check_usage(v, src, how, err, errlen);
	if (rc == 0)
		rc = settle_rotation(v, src, &l, err, errlen);
	if (rc < 0) {
		vault_free(v);
		return -1;
	}
	*out = v;
	return 0;
}

int
vault_rotate_begin(struct vault *v, const char *data_dir, char *err,
                   size_t errlen)
{
	unsigned char key[VAULT_KEY_BYTES];
	char path[PATH_MAX], id[VAULT_KEY_ID_LEN + 1];
	int rc;

	path_of(path, sizeof(path), data_dir, VAULT_NEXT_FILE);
	rc = key_file_read(path, key, err, errlen);
	if (rc < 0)
		return -1;
	if (rc == 1) {
		vault_key_random(key);
		if (key_file_create(data_dir, VAULT_NEXT_FILE, key, err,
		                    errlen) < 0) {
			vault_wipe(key, sizeof(key));
			return -1;
		}
	}
	if (add(v, key, id, err, errlen) < 0 || vault_use_key(v, id) < 0) {
		snprintf(err, errlen,
		         "cannot hold the new key next to the old ones");
		return -1;
	}
	return 0;
}

int
vault_rotate_finish(const char *data_dir, char *err, size_t errlen)
{
	char from[PATH_MAX], to[PATH_MAX];

	path_of(from, sizeof(from), data_dir, VAULT_NEXT_FILE);
	path_of(to, sizeof(to), data_dir, VAULT_KEY_FILE);
	if (rename(from, to) < 0) {
		snprintf(err, errlen, "rename %s to %s: %s", from, to,
		         strerror(errno));
		return -1;
	}
	if (fileio_sync_dir(data_dir) < 0) {
		snprintf(err, errlen, "%s: fsync: %s", data_dir,
		         strerror(errno));
		return -1;
	}
	return 0;
}

int
vault_lock(const char *data_dir, bool exclusive)
{
	char path[PATH_MAX];
	int fd, e;

	path_of(path, sizeof(path), data_dir, VAULT_LOCK_FILE);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	if (flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}
