/*
 * The credentials' files: read bounded (a PEM is small), a secret one
 * refused when group or others may read it, and written whole or not
 * at all (a temporary file, fsync, rename, the directory fsynced); a
 * renewed pair's last rename, which nl_open also finishes.
 */
#include "nodelink/nlint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "lib/limits.h"

char *
nl_file_read(const char *dir, const char *name, bool secret, size_t *len)
{
	char path[WORKSPACE_PATH_MAX];
	struct stat st;
	char *data = NULL;
	size_t got = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > (off_t)NL_PEM_MAX || (secret && (st.st_mode & 077)))
		goto out;
	data = malloc((size_t)st.st_size + 1);
	while (data != NULL && got < (size_t)st.st_size) {
		ssize_t n = read(fd, data + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (data != NULL && got != (size_t)st.st_size) {
		free(data);
		data = NULL;
	}
	if (data != NULL) {
		data[got] = '\0';
		*len = got;
	}
out:
	close(fd);
	return data;
}

int
nl_file_write(const char *dir, const char *name, const void *data, size_t len,
              int mode)
{
	char path[WORKSPACE_PATH_MAX], tmp[WORKSPACE_PATH_MAX + 8];
	int fd, rc = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0)
		return -1;
	if (fchmod(fd, (mode_t)mode) == 0 &&
	    fileio_write_all(fd, data, len) == 0 && fsync(fd) == 0)
		rc = 0;
	close(fd);
	if (rc == 0 && rename(tmp, path) == 0)
		return fileio_sync_dir(dir);
	unlink(tmp);
	return -1;
}

int
nl_rename_in(const char *dir, const char *from, const char *to)
{
	char a[WORKSPACE_PATH_MAX], b[WORKSPACE_PATH_MAX];

	snprintf(a, sizeof(a), "%s/%s", dir, from);
	snprintf(b, sizeof(b), "%s/%s", dir, to);
	return rename(a, b);
}

int
nl_finish_renewal(const char *dir)
{
	char p[WORKSPACE_PATH_MAX];

	snprintf(p, sizeof(p), "%s/cert.pem.new", dir);
	if (access(p, F_OK) < 0 ||
	    nl_rename_in(dir, "cert.pem.new", "cert.pem"))
		return -1;
	return fileio_sync_dir(dir);
}
