/*
 * Reading a tar stream into an empty directory (tar.h, tar_read_tree).
 *
 * The archive comes from another node and carries what a sandbox wrote,
 * so every entry is checked before anything is made: its name (relative,
 * no "." or ".." or empty component, at most TAR_READ_MAX_PATH bytes and
 * TAR_READ_MAX_DEPTH components), its type (file, directory, symlink,
 * hard link; devices and FIFOs refused), and its mode (set-id bits
 * dropped).  The parent is reached from dirfd one component at a time
 * with O_DIRECTORY | O_NOFOLLOW, made when missing, so a symlink stored
 * by an earlier entry is never followed.  Files are created O_EXCL |
 * O_NOFOLLOW.  A symlink's target is stored as text and never resolved
 * here.  A hard link must name a regular file beneath dirfd.  The raw
 * bytes read (headers included) stop at bytes_max.  A full disk is told
 * apart (507), so the caller can say the copy did not fit.
 */
#include "export/tar.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAR_READ_MAX_PATH  4096
#define TAR_READ_MAX_DEPTH 256
/* Owner of a directory the archive implies but does not hold: the
 * workspace's user (ws/workspace.h). */
#define TAR_READ_UID 1000

struct reader {
	struct archive *a;
	int root;
	int64_t max;
	bool owners; /* chown what is made (only root can) */
	struct err *e;
};

/* Checks name; fills the copy and returns where its last component
 * starts. */
static int
name_check(const char *name, char *copy, size_t *leaf, struct err *e)
{
	size_t len = name ? strlen(name) : 0, start = 0, depth = 0;

	if (len == 0 || len > TAR_READ_MAX_PATH || name[0] == '/')
		return ERR_BAD(e, "tar: a bad name in the archive");
	memcpy(copy, name, len + 1);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0'; /* "dir/" names a directory */
	for (size_t i = 0; i <= len; i++) {
		if (copy[i] != '/' && copy[i] != '\0')
			continue;
		size_t n = i - start;
		if (n == 0 || (n == 1 && copy[start] == '.') ||
		    (n == 2 && copy[start] == '.' && copy[start + 1] == '.'))
			return ERR_BAD(e,
			               "tar: name \"%.200s\" leaves the "
			               "directory or is not clean",
			               name);
		if (++depth > TAR_READ_MAX_DEPTH)
			return ERR_BAD(e, "tar: name \"%.200s\" too deep",
			               name);
		*leaf = start;
		start = i + 1;
	}
	return 0;
}

/* -1 with 507 insufficient_storage when err says the disk is full. */
static int
disk_full(struct reader *r, int err)
{
	if (err != ENOSPC && err != EDQUOT)
		return 0;
	return err_set(r->e, 507, "insufficient_storage",
	               "tar: the disk is full");
}

/*
 * Opens the directory holding the entry copy (its last component at
 * leaf), making missing directories when make; never follows a link.
 */
static int
open_parent(struct reader *r, char *copy, size_t leaf, bool make)
{
	int fd = dup(r->root), made = 0;
	char *p = copy;

	if (fd < 0)
		return ERR_INTERNAL(r->e, "tar: dup: %s", strerror(errno));
	while (fd >= 0 && p < copy + leaf) {
		char *slash = strchr(p, '/');
		*slash = '\0';
		if (make && mkdirat(fd, p, 0755) < 0)
			made = errno;
		else if (make && r->owners)
			(void)fchownat(fd, p, TAR_READ_UID, TAR_READ_UID,
			               AT_SYMLINK_NOFOLLOW);
		int next = openat(
		    fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		*slash = '/';
		close(fd);
		fd = next;
		p = slash + 1;
	}
	if (fd < 0 && disk_full(r, made) < 0)
		return -1;
	if (fd < 0)
		return ERR_BAD(r->e,
		               "tar: \"%.200s\" goes through what is "
		               "not a directory",
		               copy);
	return fd;
}

static void
set_owner(struct reader *r, int fd, const char *leaf, struct archive_entry *en)
{
	int64_t uid = archive_entry_uid(en), gid = archive_entry_gid(en);

	if (!r->owners || uid < 0 || uid > 65535 || gid < 0 || gid > 65535)
		return;
	if (leaf == NULL)
		(void)fchown(fd, (uid_t)uid, (gid_t)gid);
	else
		(void)fchownat(fd, leaf, (uid_t)uid, (gid_t)gid,
		               AT_SYMLINK_NOFOLLOW);
}

static int
counted(struct reader *r)
{
	if (archive_filter_bytes(r->a, -1) > r->max)
		return err_set(r->e, 413, "too_large",
		               "tar: the archive is over %lld bytes",
		               (long long)r->max);
	return 0;
}

/* All n bytes at off (a short write, as on a disk filling up, goes on
 * until it fails with the reason); -1 with errno. */
static int
write_at(int fd, const void *p, size_t n, la_int64_t off)
{
	while (n > 0) {
		ssize_t k = pwrite(fd, p, n, off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO;
			return -1;
		}
		p = (const char *)p + k;
		n -= (size_t)k;
		off += k;
	}
	return 0;
}

static int
make_file(struct reader *r, int pfd, const char *leaf, struct archive_entry *en)
{
	mode_t mode = archive_entry_perm(en) & 0777;
	const void *p;
	size_t n;
	la_int64_t off;
	int fd, rc;

	if (archive_entry_size(en) > r->max)
		return err_set(r->e, 413, "too_large",
		               "tar: \"%.200s\" is over %lld bytes", leaf,
		               (long long)r->max);
	fd = openat(pfd, leaf,
	            O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return disk_full(r, errno) < 0
		           ? -1
		           : ERR_BAD(r->e, "tar: cannot make \"%.200s\": %s",
		                     leaf, strerror(errno));
	while ((rc = archive_read_data_block(r->a, &p, &n, &off)) ==
	       ARCHIVE_OK) {
		if (counted(r) < 0)
			goto fail;
		if (write_at(fd, p, n, off) < 0) {
			if (disk_full(r, errno) == 0)
				ERR_INTERNAL(r->e, "tar: write: %s",
				             strerror(errno));
			goto fail;
		}
	}
	if (rc != ARCHIVE_EOF) {
		ERR_BAD(r->e, "tar: %s", archive_error_string(r->a));
		goto fail;
	}
	if (ftruncate(fd, archive_entry_size(en)) < 0 || fchmod(fd, mode) < 0) {
		if (disk_full(r, errno) == 0)
			ERR_INTERNAL(r->e, "tar: %s", strerror(errno));
		goto fail;
	}
	set_owner(r, fd, NULL, en);
	struct timespec ts[2] = {
	    {.tv_nsec = UTIME_OMIT},
	    {archive_entry_mtime(en), archive_entry_mtime_nsec(en)}};
	(void)futimens(fd, ts);
	close(fd);
	return 0;
fail:
	close(fd);
	return -1;
}

static int
make_dir(struct reader *r, int pfd, const char *leaf, struct archive_entry *en)
{
	mode_t mode = (archive_entry_perm(en) & 01777) | 0700;
	int fd;

	if (mkdirat(pfd, leaf, mode) < 0 && errno != EEXIST)
		return disk_full(r, errno) < 0
		           ? -1
		           : ERR_BAD(r->e, "tar: cannot make \"%.200s\": %s",
		                     leaf, strerror(errno));
	fd = openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ERR_BAD(r->e, "tar: \"%.200s\" is not a directory",
		               leaf);
	(void)fchmod(fd, mode);
	set_owner(r, fd, NULL, en);
	close(fd);
	return 0;
}

static int
make_hardlink(struct reader *r, int pfd, const char *leaf, const char *target)
{
	char copy[TAR_READ_MAX_PATH + 1];
	size_t tleaf = 0;
	struct stat st;
	int tfd, rc = -1;

	if (name_check(target, copy, &tleaf, r->e) < 0)
		return -1;
	tfd = open_parent(r, copy, tleaf, false);
	if (tfd < 0)
		return -1;
	if (fstatat(tfd, copy + tleaf, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(st.st_mode))
		ERR_BAD(r->e, "tar: a hard link to what is not a file");
	else if (linkat(tfd, copy + tleaf, pfd, leaf, 0) == 0)
		rc = 0;
	else if (disk_full(r, errno) == 0)
		ERR_BAD(r->e, "tar: cannot link \"%.200s\": %s", leaf,
		        strerror(errno));
	close(tfd);
	return rc;
}

/* name without its leading "./" (as `tar -C dir .` writes them); NULL
 * for the top directory itself, which is dirfd. */
static const char *
strip_dot(const char *name)
{
	if (name == NULL)
		return NULL;
	while (name[0] == '.' && name[1] == '/') {
		name += 2;
		while (*name == '/')
			name++;
	}
	return name[0] == '\0' || strcmp(name, ".") == 0 ? NULL : name;
}

static int
make_entry(struct reader *r, struct archive_entry *en)
{
	char copy[TAR_READ_MAX_PATH + 1];
	size_t leaf = 0;
	const char *hard = archive_entry_hardlink(en);
	const char *name = archive_entry_pathname(en);
	mode_t type = archive_entry_filetype(en);
	int pfd, rc;

	if (name && strip_dot(name) == NULL && type == AE_IFDIR && !hard)
		return 0; /* "./": the directory we write into */
	if (name_check(strip_dot(name), copy, &leaf, r->e) < 0)
		return -1;
	if (hard != NULL && (hard = strip_dot(hard)) == NULL)
		return ERR_BAD(r->e, "tar: a hard link to the top directory");
	if (hard == NULL && type != AE_IFREG && type != AE_IFDIR &&
	    type != AE_IFLNK)
		return ERR_BAD(r->e,
		               "tar: \"%.200s\" is a device, FIFO or "
		               "socket",
		               copy);
	pfd = open_parent(r, copy, leaf, true);
	if (pfd < 0)
		return -1;
	if (hard != NULL) {
		rc = make_hardlink(r, pfd, copy + leaf, hard);
	} else if (type == AE_IFDIR) {
		rc = make_dir(r, pfd, copy + leaf, en);
	} else if (type == AE_IFLNK) {
		const char *to = archive_entry_symlink(en);
		rc = to != NULL && *to != '\0' &&
		             symlinkat(to, pfd, copy + leaf) == 0
		         ? 0
		         : ERR_BAD(r->e, "tar: cannot make link \"%.200s\"",
		                   copy);
		if (rc == 0)
			set_owner(r, pfd, copy + leaf, en);
	} else {
		rc = make_file(r, pfd, copy + leaf, en);
	}
	close(pfd);
	return rc;
}

int
tar_read_tree(int fd, int dirfd, int64_t bytes_max, int64_t *bytes,
              struct err *e)
{
	struct reader r = {.root = dirfd, .max = bytes_max, .e = e};
	struct archive_entry *en;
	int rc = -1, st;

	*bytes = 0;
	r.owners = geteuid() == 0;
	r.a = archive_read_new();
	if (r.a == NULL)
		return ERR_INTERNAL(e, "tar: out of memory");
	archive_read_support_format_tar(r.a);
	if (archive_read_open_fd(r.a, fd, 64 << 10) != ARCHIVE_OK) {
		ERR_BAD(e, "tar: %s", archive_error_string(r.a));
		goto out;
	}
	while ((st = archive_read_next_header(r.a, &en)) == ARCHIVE_OK) {
		if (counted(&r) < 0 || make_entry(&r, en) < 0)
			goto out;
	}
	if (st != ARCHIVE_EOF) {
		if (counted(&r) == 0)
			ERR_BAD(e, "tar: %s", archive_error_string(r.a));
		goto out;
	}
	rc = counted(&r);
out:
	*bytes = archive_filter_bytes(r.a, -1);
	archive_read_free(r.a);
	return rc;
}
