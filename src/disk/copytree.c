/*
 * The copy of a tree (copytree.h).  Each directory is opened relative
 * to its parent with O_NOFOLLOW and checked to be on the source's
 * device; each file is opened the same way and fstat'ed, so what is
 * copied, or linked as a store entry (linkat of the descriptor), is
 * what was checked.  Owners, modes and mtimes are set on the
 * copy through its own descriptors after its content.
 *
 * Rejected: nftw over paths (a path can change under us between the
 * stat and the open), sendfile or read/write loops first
 * (copy_file_range lets the kernel copy in place and is as fast or
 * faster; a read/write loop is kept for filesystems without it).
 */
#include "disk/copytree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define COPY_CHUNK (1 << 20)

struct walk {
	const struct copytree_opts *o;
	struct copytree_stats *st;
	dev_t dev;
	int64_t entries, max_entries;
};

/* Owner, mode and times of the copy from st, or the owner the caller
 * chose (owner: best effort when we are not root). */
static int
set_meta(const struct walk *w, int fd, const struct stat *st)
{
	struct timespec ts[2] = {st->st_atim, st->st_mtim};
	uid_t uid = w->o->uid >= 0 ? (uid_t)w->o->uid : st->st_uid;
	gid_t gid = w->o->uid >= 0 ? (gid_t)w->o->gid : st->st_gid;
	mode_t mode = st->st_mode & (w->o->uid >= 0 ? 01777 : 07777);

	if (fchown(fd, uid, gid) < 0 && geteuid() == 0)
		return -1;
	if (fchmod(fd, mode) < 0 || futimens(fd, ts) < 0)
		return -1;
	return 0;
}

/* The bound on bytes copied (not linked); EFBIG past it. */
static int
own_bytes_add(struct walk *w, int64_t n)
{
	w->st->own_bytes += n;
	if (w->o->max_own_bytes > 0 && w->st->own_bytes > w->o->max_own_bytes) {
		errno = EFBIG;
		return -1;
	}
	return 0;
}

static int
copy_bytes(int in, int out, off_t size)
{
	char buf[65536];
	off_t done = 0;

	while (done < size) {
		size_t want = (size_t)(size - done) < COPY_CHUNK
		                  ? (size_t)(size - done)
		                  : COPY_CHUNK;
		ssize_t n = copy_file_range(in, NULL, out, NULL, want, 0);
		if (n < 0 && (errno == EXDEV || errno == ENOSYS ||
		              errno == EOPNOTSUPP || errno == EINVAL))
			break;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0; /* shrank while we copied */
		done += n;
	}
	/* Without copy_file_range: plain reads and writes. */
	while (done < size) {
		ssize_t n = pread(in, buf, sizeof(buf), done), w = 0;
		if (n <= 0)
			return n < 0 ? -1 : 0;
		while (w < n) {
			ssize_t k =
			    pwrite(out, buf + w, (size_t)(n - w), done + w);
			if (k < 0)
				return -1;
			w += k;
		}
		done += n;
	}
	return 0;
}

static int
copy_file(struct walk *w, int sdir, int ddir, const char *name)
{
	struct stat st;
	int in, out = -1, rc = -1;

	in = openat(sdir, name,
	            O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (in < 0)
		return errno == ENOENT ? 0 : -1; /* gone meanwhile */
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(in);
		return 0;
	}
	/* The store's inode, linked through the descriptor checked: a name
	 * the sandbox swapped meanwhile cannot get its own file linked. */
	if (ws_inoset_has(w->o->store, st.st_dev, st.st_ino) &&
	    linkat(in, "", ddir, name, AT_EMPTY_PATH) == 0) {
		w->st->files++;
		w->st->size_bytes += st.st_size;
		close(in);
		return 0;
	}
	if (own_bytes_add(w, st.st_size) < 0)
		goto out_in;
	out = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0)
		goto out;
	if (ioctl(out, FICLONE, in) != 0) {
		w->st->reflinked = false;
		w->st->copied = true;
		if (copy_bytes(in, out, st.st_size) < 0)
			goto out;
	}
	if (set_meta(w, out, &st) < 0)
		goto out;
	w->st->files++;
	w->st->size_bytes += st.st_size;
	rc = 0;
out:
	if (out >= 0 && close(out) < 0)
		rc = -1;
out_in:
	close(in);
	return rc;
}

static int
copy_link(struct walk *w, int sdir, int ddir, const char *name,
          const struct stat *st)
{
	char target[PATH_MAX];
	struct timespec ts[2] = {st->st_atim, st->st_mtim};
	ssize_t n = readlinkat(sdir, name, target, sizeof(target) - 1);

	if (n < 0)
		return errno == ENOENT ? 0 : -1;
	target[n] = '\0';
	uid_t uid = w->o->uid >= 0 ? (uid_t)w->o->uid : st->st_uid;
	gid_t gid = w->o->uid >= 0 ? (gid_t)w->o->gid : st->st_gid;

	if (own_bytes_add(w, n) < 0 || symlinkat(target, ddir, name) < 0)
		return -1;
	if (fchownat(ddir, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0 &&
	    geteuid() == 0)
		return -1;
	utimensat(ddir, name, ts, AT_SYMLINK_NOFOLLOW);
	w->st->files++;
	w->st->size_bytes += n;
	return 0;
}

static int copy_dir(struct walk *w, int sfd, int dfd, int depth);

static int
copy_subdir(struct walk *w, int sdir, int ddir, const char *name, int depth)
{
	int sfd, dfd, rc;

	if (depth >= COPYTREE_MAX_DEPTH) {
		errno = EMLINK;
		return -1;
	}
	sfd =
	    openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		return errno == ENOENT ? 0 : -1;
	if (mkdirat(ddir, name, 0700) < 0 ||
	    (dfd = openat(ddir, name,
	                  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
	        0) {
		close(sfd);
		return -1;
	}
	rc = copy_dir(w, sfd, dfd, depth + 1);
	close(dfd);
	close(sfd);
	return rc;
}

static int
copy_entry(struct walk *w, int sfd, int dfd, const char *name, int depth)
{
	struct stat st;

	if (++w->entries > w->max_entries) {
		errno = EFBIG;
		return -1;
	}
	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (st.st_dev != w->dev) /* a mount inside: not ours to copy */
		return 0;
	if (S_ISDIR(st.st_mode))
		return copy_subdir(w, sfd, dfd, name, depth);
	if (S_ISREG(st.st_mode))
		return copy_file(w, sfd, dfd, name);
	if (S_ISLNK(st.st_mode))
		return copy_link(w, sfd, dfd, name, &st);
	w->st->skipped++;
	return 0;
}

/* Copies the entries of sfd into dfd, then gives dfd sfd's metadata
 * (last: its mtime would change with every entry made in it). */
static int
copy_dir(struct walk *w, int sfd, int dfd, int depth)
{
	struct stat st;
	struct dirent *de;
	int fd = dup(sfd), rc = 0;
	DIR *d;

	if (fd < 0 || (d = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		rc = copy_entry(w, sfd, dfd, de->d_name, depth);
	}
	if (rc == 0 && errno != 0)
		rc = -1;
	closedir(d);
	if (rc == 0 && (fstat(sfd, &st) < 0 || set_meta(w, dfd, &st) < 0))
		rc = -1;
	return rc;
}

int
copytree(const char *src, const char *dst, const struct ws_inoset *store,
         struct copytree_stats *st)
{
	struct copytree_opts o = {.store = store, .uid = -1, .gid = -1};
	struct walk w = {.o = &o, .st = st, .max_entries = COPYTREE_MAX_FILES};
	struct stat sst;
	int sfd, dfd = -1, rc = -1, saved;

	*st = (struct copytree_stats){.reflinked = true};
	sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0 || fstat(sfd, &sst) < 0)
		goto out;
	w.dev = sst.st_dev;
	if (mkdir(dst, 0700) < 0)
		goto out;
	dfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0)
		rc = copy_dir(&w, sfd, dfd, 0);
	if (rc == 0 && st->files == 0)
		st->reflinked = false;
out:
	saved = errno;
	if (dfd >= 0)
		close(dfd);
	if (sfd >= 0)
		close(sfd);
	errno = saved;
	return rc;
}

int
copytree_at(int sdir, const char *name, int ddir, const struct copytree_opts *o,
            struct copytree_stats *st)
{
	struct walk w = {.o = o,
	                 .st = st,
	                 .max_entries = o->max_entries > 0
	                                    ? o->max_entries
	                                    : COPYTREE_MAX_FILES};
	struct stat sst;
	int rc;

	*st = (struct copytree_stats){.reflinked = true};
	if (fstatat(sdir, name, &sst, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	if (!S_ISDIR(sst.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	w.dev = sst.st_dev;
	rc = copy_subdir(&w, sdir, ddir, name, 0);
	if (rc == 0 && st->files == 0)
		st->reflinked = false;
	return rc;
}

static int
remove_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

int
copytree_remove(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	/* As root, a read-only directory does not stop the walk. */
	nftw(path, remove_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	return lstat(path, &st) == 0 ? -1 : 0;
}
