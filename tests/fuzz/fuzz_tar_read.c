/*
 * libFuzzer target: the workspace tar reader (export/tar.h,
 * tar_read_tree), which takes archives from other nodes.  The input is
 * the archive; it is read into an empty directory beneath a scratch
 * directory of the target's own.  Nothing may crash or leak, and
 * whatever was made must be beneath that directory and harmless: no
 * device, FIFO or socket, no set-id bit, nothing beside it in the
 * scratch directory.
 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "disk/copytree.h"
#include "export/tar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[64];

static int
check_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)path;
	(void)flag;
	(void)ftw;
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) ||
	    S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode) ||
	    (st->st_mode & (S_ISUID | S_ISGID)))
		__builtin_trap();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[96];
	struct err e = {0};
	struct dirent *de;
	int64_t bytes;
	int fd, dirfd, n = 0;
	DIR *d;

	/* a scratch directory per input: libFuzzer may end the process
	 * without running exit handlers */
	snprintf(scratch, sizeof(scratch), "/tmp/fuzz-tar-XXXXXX");
	if (mkdtemp(scratch) == NULL)
		abort();
	snprintf(out, sizeof(out), "%s/out", scratch);
	if (mkdir(out, 0700) < 0 ||
	    (dirfd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		abort();
	fd = memfd_create("tar", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size ||
	    lseek(fd, 0, SEEK_SET) != 0)
		abort();
	(void)tar_read_tree(fd, dirfd, 1 << 20, &bytes, &e);
	close(fd);
	close(dirfd);
	nftw(out, check_entry, 16, FTW_PHYS);
	if ((d = opendir(scratch)) == NULL)
		abort();
	while ((de = readdir(d)) != NULL)
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	if (n != 1) /* only out/ */
		__builtin_trap();
	copytree_remove(out);
	rmdir(scratch);
	return 0;
}
