#include "lib/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

/* Every byte of data to fd, by write(2) or, on a socket, send(2). */
static int
put_all(int fd, const void *data, size_t len, bool sock)
{
	const char *p = data;

	while (len) {
		ssize_t n =
		    sock ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
fileio_write_all(int fd, const void *data, size_t len)
{
	return put_all(fd, data, len, false);
}

int
fileio_send_all(int fd, const void *data, size_t len)
{
	return put_all(fd, data, len, true);
}

int
fileio_sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}
