/* The SHA-256 of a file, for backup manifests (vault.h). */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <string.h>
#include <unistd.h>

#include "vault/vault.h"

int
vault_sha256_file(const char *path, char out[VAULT_HASH_HEX + 1],
                  int64_t *bytes)
{
	crypto_hash_sha256_state st;
	unsigned char h[crypto_hash_sha256_BYTES], chunk[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;
	int64_t total = 0;

	if (fd < 0)
		return -1;
	crypto_hash_sha256_init(&st);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0 ||
	       (n < 0 && errno == EINTR)) {
		if (n < 0)
			continue;
		crypto_hash_sha256_update(&st, chunk, (size_t)n);
		total += n;
	}
	close(fd);
	if (n < 0)
		return -1;
	crypto_hash_sha256_final(&st, h);
	sodium_bin2hex(out, VAULT_HASH_HEX + 1, h, sizeof(h));
	sodium_memzero(chunk, sizeof(chunk));
	if (bytes)
		*bytes = total;
	return 0;
}
