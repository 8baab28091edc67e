/*
 * The install key (installkey.h).  Every input is sandbox-written:
 * wsfs_open_file refuses links, FIFOs and devices without blocking, and
 * wsfs_fd_each bounds the bytes and the time.  Each file's content is
 * hashed on its own and its hash (after its size) goes into the key, so
 * a file cut short leaves nothing of it, and no two different sets of
 * files give the same stream.
 */
#include "sandbox/installkey.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vault/vault.h"
#include "ws/wsfs.h"

static const char *const default_inputs[] = {
    "package.json", "package-lock.json", "pnpm-lock.yaml",   "yarn.lock",
    "bun.lock",     "bun.lockb",         "requirements.txt", "pyproject.toml",
    "poetry.lock",  "uv.lock",
};
#define NDEFAULT (sizeof(default_inputs) / sizeof(default_inputs[0]))

bool
runtime_install_default_input(const char *path)
{
	for (size_t i = 0; i < NDEFAULT; i++)
		if (strcmp(path, default_inputs[i]) == 0)
			return true;
	return false;
}

static void
feed(const void *p, size_t n, void *arg)
{
	vault_sha256_update(arg, p, n);
}

/* Hashes one input's path and content (or its marker). */
static void
hash_input(struct vault_sha256 *h, int appfd, const char *path)
{
	struct vault_sha256 *body;
	char head[48], hex[VAULT_HASH_HEX + 1];
	struct err e = {0};
	struct stat st;
	int fd;

	vault_sha256_update(h, path, strlen(path) + 1);
	fd = wsfs_open_file(appfd, path, &e);
	if (fd < 0) {
		if (e.status == 404)
			vault_sha256_update(h, "absent\n", 7);
		else
			vault_sha256_update(h, "unreadable\n", 11);
		return;
	}
	/* The content goes to a hash of its own first: a file cut short
	 * (too large, too slow) must not leave half its bytes in the key. */
	body = vault_sha256_new();
	if (body == NULL || fstat(fd, &st) < 0 ||
	    wsfs_fd_each(fd, INSTALLKEY_MAX_INPUT, WSFS_READ_MS, feed, body,
	                 &e) < 0) {
		if (body)
			vault_sha256_end(body, hex);
		vault_sha256_update(h, "unreadable\n", 11);
	} else {
		vault_sha256_end(body, hex);
		snprintf(head, sizeof(head), "file %lld\n",
		         (long long)st.st_size);
		vault_sha256_update(h, head, strlen(head));
		vault_sha256_update(h, hex, VAULT_HASH_HEX);
	}
	close(fd);
}

int
runtime_install_key(int appfd, const struct manifest *m, char out[65])
{
	struct vault_sha256 *h;

	out[0] = '\0';
	if (!m->has_install || (h = vault_sha256_new()) == NULL)
		return -1;
	vault_sha256_update(h, m->install_command,
	                    strlen(m->install_command) + 1);
	if (m->install_inputs_set)
		for (int i = 0; i < m->ninstall_inputs; i++)
			hash_input(h, appfd, m->install_inputs[i]);
	else
		for (size_t i = 0; i < NDEFAULT; i++)
			if (wsfs_exists(appfd, default_inputs[i]))
				hash_input(h, appfd, default_inputs[i]);
	vault_sha256_end(h, out);
	return 0;
}
