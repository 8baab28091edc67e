/*
 * Hostile-tree file access for the files API, the manifest and the logs.
 *
 * The workspace directory itself (<data>/workspaces/<id>) is ours: its
 * parent is root-owned, so the sandbox cannot swap it.  Everything below
 * is the sandbox's.  So every lookup below it goes through openat2() with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
 * RESOLVE_NO_XDEV, which the kernel enforces atomically: a symlink swapped
 * in between two of our calls makes the second fail (ELOOP) instead of
 * leading elsewhere.  Leaf operations (unlink, rename, mkdir) use *at()
 * calls on a directory descriptor obtained that way and never follow the
 * leaf.  Rejected: realpath()-then-open checks (racy) and chroot helpers
 * (need a process per call).
 *
 * Writes go to a temporary file beside the target, then a rename.  A
 * conditional write (wsfs_write_cond) runs its caller's check against
 * the file as it is just before that rename, under the caller's lock,
 * and renames only if the name still holds the file it checked; a
 * create-only write renames with RENAME_NOREPLACE.  Moves are renames
 * with RENAME_NOREPLACE too: nothing is ever replaced by one.
 */
#include "ws/wsfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/ulid.h"
#include "lib/utf8.h"

#define RESOLVE_SAFE                                                           \
	(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |       \
	 RESOLVE_NO_XDEV)

int
wsfs_clean(const char *in, size_t len, char *out, size_t outlen,
           bool allow_root, struct err *e)
{
	size_t o = 0, depth = 0, i = 0;

	if (memchr(in, '\0', len) != NULL)
		return ERR_BAD(e, "path must not contain NUL");
	if (len > WSFS_MAX_PATH)
		return ERR_BAD(e, "path is longer than %d bytes",
		               WSFS_MAX_PATH);
	if (len && in[0] == '/')
		return ERR_BAD(e, "path must be relative to the app directory");
	while (i < len) {
		size_t j = i;
		while (j < len && in[j] != '/')
			j++;
		size_t n = j - i;
		if (n == 2 && in[i] == '.' && in[i + 1] == '.')
			return ERR_BAD(e, "path must not contain \"..\"");
		if (n && !(n == 1 && in[i] == '.')) {
			if (++depth > WSFS_MAX_DEPTH || o + n + 2 > outlen)
				return ERR_BAD(e, "path is too deep");
			if (o)
				out[o++] = '/';
			memcpy(out + o, in + i, n);
			o += n;
		}
		i = j + 1;
	}
	out[o] = '\0';
	if (o == 0 && !allow_root)
		return ERR_BAD(e, "path must name a file in the app directory");
	return 0;
}

int
wsfs_openat(int dirfd, const char *rel, int flags, int mode)
{
	struct open_how how = {
	    .flags = (unsigned long long)(flags | O_CLOEXEC),
	    .mode = (flags & O_CREAT) ? (unsigned long long)mode : 0,
	    .resolve = RESOLVE_SAFE,
	};

	return (int)syscall(SYS_openat2, dirfd, *rel ? rel : ".", &how,
	                    sizeof(how));
}

bool
wsfs_exists(int dirfd, const char *rel)
{
	int fd = wsfs_openat(dirfd, rel, O_PATH | O_NOFOLLOW, 0);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Turns an errno from a lookup into the API's answer. */
static int
lookup_err(int errnum, const char *rel, struct err *e)
{
	switch (errnum) {
	case ENOENT:
		return ERR_NOTFOUND(e, "no such file or directory: %s", rel);
	case ELOOP:
	case EXDEV:
		return ERR_BAD(e,
		               "path goes through a symbolic link or leaves "
		               "the workspace: %s",
		               rel);
	case ENOTDIR:
		return ERR_BAD(e, "a parent of %s is not a directory", rel);
	case EISDIR:
		return ERR_BAD(e, "%s is a directory", rel);
	case ENAMETOOLONG:
		return ERR_BAD(e, "path is too long");
	default:
		return ERR_INTERNAL(e, "%s: %s", rel, strerror(errnum));
	}
}

int
wsfs_open_dir(const char *ws, const char *sub, struct err *e)
{
	int root, fd;

	root = open(ws, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (root < 0)
		return ERR_NOTFOUND(e, "the workspace does not exist");
	fd = wsfs_openat(root, sub, O_PATH | O_DIRECTORY, 0);
	if (fd < 0)
		lookup_err(errno, sub, e);
	close(root);
	return fd;
}

int
wsfs_open_file(int dirfd, const char *rel, struct err *e)
{
	struct stat st;
	int fd = wsfs_openat(dirfd, rel, O_RDONLY | O_NONBLOCK | O_NOFOLLOW, 0);

	/* A socket does not open (ENXIO), nor a device without a driver. */
	if (fd < 0 && (errno == ENXIO || errno == ENODEV))
		return ERR_BAD(e, "%s is not a regular file", rel);
	if (fd < 0)
		return lookup_err(errno, rel, e);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return ERR_BAD(e, "%s is not a regular file", rel);
	}
	return fd;
}

int
wsfs_read_within(int dirfd, const char *rel, size_t max, int timeout_ms,
                 struct buf *out, struct err *e)
{
	int64_t deadline = clock_mono_ms() + timeout_ms;
	char chunk[65536];
	struct stat st;
	ssize_t n;
	int fd = wsfs_open_file(dirfd, rel, e);

	buf_init(out, max);
	if (fd < 0)
		return -1;
	/* st_size is only a first refusal: the file may grow (or be sparse
	 * and claim anything); the buffer's cap is what holds. */
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size > max) {
		close(fd);
		return err_set(e, 413, "payload_too_large",
		               "%s is larger than %zu bytes", rel, max);
	}
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (buf_append(out, chunk, (size_t)n) < 0) {
			close(fd);
			buf_release(out);
			return err_set(e, 413, "payload_too_large",
			               "%s grew past %zu bytes", rel, max);
		}
		if (clock_mono_ms() >= deadline) {
			close(fd);
			buf_release(out);
			return err_set(e, 502, "sandbox_unavailable",
			               "reading %s took more than %d ms", rel,
			               timeout_ms);
		}
	}
	close(fd);
	if (n < 0) {
		buf_release(out);
		return ERR_INTERNAL(e, "reading %s failed", rel);
	}
	if (out->data == NULL)
		buf_append(out, "", 0);
	return 0;
}

int
wsfs_read(int dirfd, const char *rel, size_t max, struct buf *out,
          struct err *e)
{
	return wsfs_read_within(dirfd, rel, max, WSFS_READ_MS, out, e);
}

/* Splits "a/b/c" into parent "a/b" and leaf "c" (parent "" for "c"). */
static void
split(const char *rel, char *parent, size_t plen, const char **leaf)
{
	const char *slash = strrchr(rel, '/');

	if (slash == NULL) {
		parent[0] = '\0';
		*leaf = rel;
		return;
	}
	snprintf(parent, plen, "%.*s", (int)(slash - rel), rel);
	*leaf = slash + 1;
}

/* Opens (creating as needed) the directory parent beneath dirfd. */
static int
make_parents(int dirfd, const char *parent, int uid, int gid, struct err *e)
{
	char comp[WSFS_MAX_PATH + 1];
	const char *p = parent;
	int fd = wsfs_openat(dirfd, "", O_PATH | O_DIRECTORY, 0);

	while (fd >= 0 && *p) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		int next;

		snprintf(comp, sizeof(comp), "%.*s", (int)n, p);
		if (mkdirat(fd, comp, 0755) == 0)
			fchownat(fd, comp, (uid_t)uid, (gid_t)gid,
			         AT_SYMLINK_NOFOLLOW);
		next = wsfs_openat(fd, comp, O_PATH | O_DIRECTORY, 0);
		if (next < 0)
			lookup_err(errno, parent, e);
		close(fd);
		fd = next;
		p += n + (slash ? 1 : 0);
	}
	if (fd < 0 && e->status == 0)
		lookup_err(errno, parent, e);
	return fd;
}

int
wsfs_mkdirs(int dirfd, const char *rel, int uid, int gid, struct err *e)
{
	int fd = make_parents(dirfd, rel, uid, gid, e);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static bool
same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	       a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/*
 * Whether leaf (beneath pfd) is still what a check saw: the file open
 * at fd, unchanged and still at that name, or still nothing (fd < 0).
 */
static bool
unchanged(int pfd, const char *leaf, int fd, const struct stat *seen)
{
	struct stat now, again;

	if (fd < 0)
		return fstatat(pfd, leaf, &now, AT_SYMLINK_NOFOLLOW) < 0 &&
		       errno == ENOENT;
	return fstat(fd, &again) == 0 &&
	       fstatat(pfd, leaf, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
	       same_file(seen, &again) && same_file(seen, &now);
}

/* The file at leaf for a check: *fd, or -1 there when there is none. */
static int
open_current(int pfd, const char *leaf, const char *rel, int *fd,
             struct stat *st, struct err *e)
{
	*fd = openat(pfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (*fd < 0 && errno == ENOENT)
		return 0;
	if (*fd < 0 && (errno == ENXIO || errno == ENODEV))
		return ERR_BAD(e, "%s exists and is not a regular file", rel);
	if (*fd < 0)
		return lookup_err(errno, rel, e);
	if (fstat(*fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(*fd);
		*fd = -1;
		return ERR_BAD(e, "%s exists and is not a regular file", rel);
	}
	return 0;
}

/*
 * The rename of a conditional write, under c->mu: the check against the
 * file as it is now, then the rename, unless the file changed between
 * the two (then the check runs again).
 */
static int
rename_checked(int pfd, const char *tmp, const char *leaf, const char *rel,
               const struct wsfs_cond *c, struct err *e)
{
	struct stat st;
	int fd = -1, rc = -1;

	pthread_mutex_lock(c->mu);
	for (int tries = 0;; tries++) {
		if (fd >= 0)
			close(fd);
		fd = -1;
		if (tries == 3) {
			ERR_CONFLICT(e,
			             "%s kept changing while it was being "
			             "written; nothing was written, try again",
			             rel);
			break;
		}
		if (c->check &&
		    (open_current(pfd, leaf, rel, &fd, &st, e) < 0 ||
		     c->check(fd, c->arg, e) < 0))
			break;
		if (c->check && !unchanged(pfd, leaf, fd, &st))
			continue;
		if (!c->create_only) {
			if (renameat(pfd, tmp, pfd, leaf) == 0)
				rc = 0;
			else
				ERR_INTERNAL(e, "writing %s failed: %s", rel,
				             strerror(errno));
			break;
		}
		if (renameat2(pfd, tmp, pfd, leaf, RENAME_NOREPLACE) == 0) {
			rc = 0;
			break;
		}
		if (errno != EEXIST || c->check == NULL) {
			if (errno == EEXIST)
				ERR_CONFLICT(e, "%s exists already", rel);
			else
				ERR_INTERNAL(e, "writing %s failed: %s", rel,
				             strerror(errno));
			break;
		}
		/* made meanwhile: the check says what to answer */
	}
	if (fd >= 0)
		close(fd);
	pthread_mutex_unlock(c->mu);
	return rc;
}

static int
write_file(int dirfd, const char *rel, const void *data, size_t len, int uid,
           int gid, mode_t mode, const struct wsfs_cond *c, struct err *e)
{
	char parent[WSFS_MAX_PATH + 1], tmp[300], id[ULID_LEN + 1];
	const char *leaf;
	struct stat st;
	int pfd, fd, rc = -1;

	split(rel, parent, sizeof(parent), &leaf);
	pfd = make_parents(dirfd, parent, uid, gid, e);
	if (pfd < 0)
		return -1;
	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISREG(st.st_mode)) {
		close(pfd);
		return ERR_BAD(e, "%s exists and is not a regular file", rel);
	}
	ulid_new(id);
	snprintf(tmp, sizeof(tmp), ".%.200s.%s.tmp", leaf, id);
	fd = openat(pfd, tmp,
	            O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		close(pfd);
		return lookup_err(errno, rel, e);
	}
	if (fchown(fd, (uid_t)uid, (gid_t)gid) < 0 ||
	    fileio_write_all(fd, data, len) < 0 || fsync(fd) < 0)
		ERR_INTERNAL(e, "writing %s failed: %s", rel, strerror(errno));
	else if (c)
		rc = rename_checked(pfd, tmp, leaf, rel, c, e);
	else if (renameat(pfd, tmp, pfd, leaf) == 0)
		rc = 0;
	else
		ERR_INTERNAL(e, "writing %s failed: %s", rel, strerror(errno));
	close(fd);
	if (rc < 0)
		unlinkat(pfd, tmp, 0);
	close(pfd);
	return rc;
}

int
wsfs_write(int dirfd, const char *rel, const void *data, size_t len, int uid,
           int gid, struct err *e)
{
	return write_file(dirfd, rel, data, len, uid, gid, 0644, NULL, e);
}

int
wsfs_write_cond(int dirfd, const char *rel, const void *data, size_t len,
                int uid, int gid, const struct wsfs_cond *c, struct err *e)
{
	return write_file(dirfd, rel, data, len, uid, gid, 0644, c, e);
}

int
wsfs_write_secret(int dirfd, const char *rel, const void *data, size_t len,
                  int uid, int gid, struct err *e)
{
	return write_file(dirfd, rel, data, len, uid, gid, 0600, NULL, e);
}

int
wsfs_fd_each(int fd, size_t max, int timeout_ms,
             void (*fn)(const void *p, size_t n, void *arg), void *arg,
             struct err *e)
{
	int64_t deadline = clock_mono_ms() + timeout_ms;
	char chunk[65536];
	size_t total = 0;
	ssize_t n;

	while ((n = pread(fd, chunk, sizeof(chunk), (off_t)total)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ERR_INTERNAL(e, "reading failed: %s",
			                    strerror(errno));
		total += (size_t)n;
		if (total > max)
			return err_set(e, 413, "payload_too_large",
			               "the file is larger than %zu bytes",
			               max);
		fn(chunk, (size_t)n, arg);
		if (clock_mono_ms() >= deadline)
			return err_set(e, 502, "sandbox_unavailable",
			               "reading the file took more than %d ms",
			               timeout_ms);
	}
	return 0;
}

/* The rename of a move, from beneath fpfd to beneath tpfd. */
static int
move_leaf(int fpfd, const char *fleaf, int tpfd, const char *tleaf,
          const char *from, const char *to, struct err *e)
{
	if (renameat2(fpfd, fleaf, tpfd, tleaf, RENAME_NOREPLACE) == 0)
		return 0;
	switch (errno) {
	case EEXIST:
	case ENOTEMPTY:
		return ERR_CONFLICT(e, "%s exists already", to);
	case ENOENT:
		return ERR_NOTFOUND(e, "no such file or directory: %s", from);
	case EINVAL:
		return ERR_BAD(e, "%s cannot be moved to %s", from, to);
	default:
		return lookup_err(errno, to, e);
	}
}

int
wsfs_move(int dirfd, const char *from, const char *to, int uid, int gid,
          struct err *e)
{
	char fparent[WSFS_MAX_PATH + 1], tparent[WSFS_MAX_PATH + 1];
	const char *fleaf, *tleaf;
	size_t flen = strlen(from);
	struct stat st;
	int fpfd, tpfd, rc;

	if (*from == '\0' || *to == '\0')
		return ERR_BAD(e, "the app directory itself cannot be moved");
	if (strncmp(to, from, flen) == 0 && to[flen] == '/')
		return ERR_BAD(e, "%s cannot be moved into itself", from);
	split(from, fparent, sizeof(fparent), &fleaf);
	fpfd = wsfs_openat(dirfd, fparent, O_PATH | O_DIRECTORY, 0);
	if (fpfd < 0)
		return lookup_err(errno, from, e);
	if (fstatat(fpfd, fleaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		rc = lookup_err(errno, from, e);
		close(fpfd);
		return rc;
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		close(fpfd);
		return ERR_BAD(e, "%s is not a regular file or a directory",
		               from);
	}
	split(to, tparent, sizeof(tparent), &tleaf);
	tpfd = make_parents(dirfd, tparent, uid, gid, e);
	if (tpfd < 0) {
		close(fpfd);
		return -1;
	}
	rc = move_leaf(fpfd, fleaf, tpfd, tleaf, from, to, e);
	close(tpfd);
	close(fpfd);
	return rc;
}

int
wsfs_move_in(int rootfd, const char *dir, const char *from, const char *to,
             int uid, int gid, struct err *e)
{
	int dfd = wsfs_openat(rootfd, dir, O_PATH | O_DIRECTORY, 0), rc;

	if (dfd < 0)
		return errno == ENOENT
		           ? ERR_NOTFOUND(e, "%s does not exist", dir)
		           : ERR_BAD(e, "%s is not a directory", dir);
	rc = wsfs_move(dfd, from, to, uid, gid, e);
	close(dfd);
	return rc;
}

/* Removes name (a directory) beneath dirfd with everything in it. */
static int
remove_tree(int dirfd, const char *name, int depth)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd;

	if (depth > WSFS_MAX_DEPTH)
		return -1;
	fd = openat(dirfd, name,
	            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || (d = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		return unlinkat(dirfd, name, 0);
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode))
			remove_tree(fd, de->d_name, depth + 1);
		else
			unlinkat(fd, de->d_name, 0);
	}
	closedir(d);
	return unlinkat(dirfd, name, AT_REMOVEDIR);
}

int
wsfs_remove(int dirfd, const char *rel, bool recursive, struct err *e)
{
	char parent[WSFS_MAX_PATH + 1];
	const char *leaf;
	struct stat st;
	int pfd, rc;

	if (*rel == '\0')
		return ERR_BAD(e, "the app directory itself cannot be removed");
	split(rel, parent, sizeof(parent), &leaf);
	pfd = wsfs_openat(dirfd, parent, O_PATH | O_DIRECTORY, 0);
	if (pfd < 0)
		return lookup_err(errno, rel, e);
	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		close(pfd);
		return lookup_err(errno, rel, e);
	}
	if (!S_ISDIR(st.st_mode))
		rc = unlinkat(pfd, leaf, 0);
	else if (recursive)
		rc = remove_tree(pfd, leaf, 0);
	else
		rc = unlinkat(pfd, leaf, AT_REMOVEDIR);
	if (rc < 0 && errno == ENOTEMPTY)
		ERR_CONFLICT(e,
		             "%s is a directory that is not empty "
		             "(recursive=true removes it all)",
		             rel);
	else if (rc < 0)
		ERR_INTERNAL(e, "removing %s failed: %s", rel, strerror(errno));
	close(pfd);
	return rc;
}

struct entry {
	char *path;
	bool dir;
	long long size;
};

struct listing {
	struct entry *v;
	size_t n, cap;
	bool truncated;
};

static bool
skipped_dir(const char *name)
{
	static const char *const heavy[] = {
	    "node_modules", ".git", "dist", ".vite", "__pycache__", ".venv"};

	for (size_t i = 0; i < sizeof(heavy) / sizeof(heavy[0]); i++)
		if (strcmp(name, heavy[i]) == 0)
			return true;
	return false;
}

static int
listing_add(struct listing *l, const char *prefix, const char *name,
            const struct stat *st)
{
	size_t plen = strlen(prefix), nlen = strlen(name);
	char *path;

	if (l->n == WSFS_MAX_LIST) {
		l->truncated = true;
		return -1;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct entry *v = realloc(l->v, cap * sizeof(*v));
		if (v == NULL)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	path = malloc(plen + nlen + 2);
	if (path == NULL)
		return -1;
	snprintf(path, plen + nlen + 2, "%s%s%s", prefix, plen ? "/" : "",
	         name);
	l->v[l->n].path = path;
	l->v[l->n].dir = S_ISDIR(st->st_mode);
	l->v[l->n].size = (long long)st->st_size;
	l->n++;
	return 0;
}

static void
list_dir(int fd, const char *prefix, bool recursive, int depth,
         struct listing *l)
{
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (depth > WSFS_MAX_DEPTH || (d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL && !l->truncated) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
			continue; /* symlinks, sockets, devices: not shown */
		if (S_ISDIR(st.st_mode) && skipped_dir(de->d_name))
			continue;
		if (listing_add(l, prefix, de->d_name, &st) < 0)
			break;
		if (recursive && S_ISDIR(st.st_mode)) {
			int sub = openat(fd, de->d_name,
			                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			                     O_CLOEXEC);
			if (sub >= 0)
				list_dir(sub, l->v[l->n - 1].path, true,
				         depth + 1, l);
		}
	}
	closedir(d);
}

static int
by_path(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->path,
	              ((const struct entry *)b)->path);
}

/*
 * A name that is not UTF-8 shows escaped in "path" (lib/jv.h); beside it
 * "path_encoded" has its bytes percent-encoded, as ?path= takes them,
 * so the file can still be read, written and deleted.
 */
static void
set_path_encoded(struct jv *o, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t len = strlen(path), k = 0;
	char *out;

	if (utf8_valid(path, len) || (out = malloc(len * 3 + 1)) == NULL)
		return;
	for (const unsigned char *p = (const void *)path; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~/", *p)) {
			out[k++] = (char)*p;
		} else {
			out[k++] = '%';
			out[k++] = hex[*p >> 4];
			out[k++] = hex[*p & 15];
		}
	}
	out[k] = '\0';
	jv_set_str(o, "path_encoded", out);
	free(out);
}

int
wsfs_list(int dirfd, const char *rel, bool recursive, struct jv **out,
          bool *truncated, struct err *e)
{
	struct listing l = {0};
	int fd = wsfs_openat(dirfd, rel, O_RDONLY | O_DIRECTORY, 0);

	if (fd < 0)
		return lookup_err(errno, rel, e);
	list_dir(fd, rel, recursive, 0, &l);
	qsort(l.v, l.n, sizeof(*l.v), by_path);
	*out = jv_arr();
	for (size_t i = 0; i < l.n; i++) {
		struct jv *o = jv_obj();
		jv_set_str(o, "path", l.v[i].path);
		set_path_encoded(o, l.v[i].path);
		jv_set_str(o, "type", l.v[i].dir ? "dir" : "file");
		if (!l.v[i].dir)
			jv_set_int(o, "size", l.v[i].size);
		jv_push(*out, o);
		free(l.v[i].path);
	}
	free(l.v);
	*truncated = l.truncated;
	return 0;
}
