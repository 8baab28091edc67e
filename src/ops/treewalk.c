/*
 * The walks' shared parts (treewalk.h).  A directory's names are read
 * from a dup of its descriptor (fdopendir takes the dup, the caller keeps
 * its own) and sorted with strcmp, bytewise: the order of a list must not
 * depend on the locale.
 */
#include "ops/treewalk.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "vault/vault.h"

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
treewalk_names_free(struct treewalk_names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* The entries of dirfd but . and .., sorted; -1 with errno. */
int
treewalk_names_read(int dirfd, struct treewalk_names *s)
{
	int fd = dup(dirfd);
	size_t cap = 0;
	struct dirent *de;
	DIR *d;

	s->v = NULL;
	s->n = 0;
	if (fd < 0 || lseek(fd, 0, SEEK_SET) < 0 ||
	    (d = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (s->n == cap) {
			char **v = NULL;
			cap = cap ? cap * 2 : 64;
			if (cap <= BACKUP_DIR_ENTRIES)
				v = realloc(s->v, cap * sizeof(*v));
			if (v == NULL)
				break;
			s->v = v;
		}
		if ((s->v[s->n] = strdup(de->d_name)) == NULL)
			break;
		s->n++;
	}
	closedir(d);
	if (de != NULL) {
		treewalk_names_free(s);
		errno = ENOMEM;
		return -1;
	}
	qsort(s->v, s->n, sizeof(*s->v), by_name);
	return 0;
}

/* Appends name; its old length, or -1 (unchanged) when too long. */
ssize_t
treewalk_path_push(struct treewalk_path *p, const char *name)
{
	size_t old = p->len, n = strlen(name) + (old ? 1 : 0);

	if (old + n > BACKUP_PATH_MAX)
		return -1;
	snprintf(p->s + old, sizeof(p->s) - old, "%s%s", old ? "/" : "", name);
	p->len = old + n;
	return (ssize_t)old;
}

void
treewalk_path_pop(struct treewalk_path *p, ssize_t old)
{
	p->len = (size_t)old;
	p->s[old] = '\0';
}

/* A path fit for a message: bytes a terminal would act on as '?'. */
const char *
treewalk_shown(const char *path, char *out, size_t len)
{
	size_t i = 0;

	for (; path[i] && i + 1 < len; i++)
		out[i] = (unsigned char)path[i] < 0x20 || path[i] == 0x7f
		             ? '?'
		             : path[i];
	out[i] = '\0';
	return out;
}

char
treewalk_type(mode_t m)
{
	return S_ISDIR(m) ? 'd' : S_ISREG(m) ? 'f' : S_ISLNK(m) ? 'l' : '?';
}

const char *
treewalk_type_name(mode_t m)
{
	return S_ISDIR(m)    ? "directory"
	       : S_ISREG(m)  ? "file"
	       : S_ISLNK(m)  ? "symbolic link"
	       : S_ISFIFO(m) ? "FIFO"
	       : S_ISSOCK(m) ? "socket"
	                     : "device";
}

enum treewalk_copied
treewalk_copy(int in, int out, char *chunk, int64_t limit, int64_t *total,
              char *hex)
{
	struct vault_sha256 *h = vault_sha256_new();
	enum treewalk_copied rc = TREEWALK_COPIED;
	ssize_t k;

	*total = 0;
	hex[0] = '\0';
	if (h == NULL)
		return TREEWALK_READ;
	while ((k = read(in, chunk, TREEWALK_CHUNK)) > 0 ||
	       (k < 0 && errno == EINTR)) {
		if (k < 0)
			continue;
		*total += k;
		if (limit >= 0 && *total > limit) {
			rc = TREEWALK_OVER;
			break;
		}
		if (fileio_write_all(out, chunk, (size_t)k) < 0) {
			rc = TREEWALK_WRITE;
			break;
		}
		vault_sha256_update(h, chunk, (size_t)k);
	}
	if (k < 0)
		rc = TREEWALK_READ;
	vault_sha256_end(h, hex);
	return rc;
}
