/*
 * A workspace as a tar stream, both ways (tar.h), for moving a sandbox's
 * files between nodes.
 *
 * Writing walks the tree with a directory descriptor per level, each
 * opened beneath its parent with O_NOFOLLOW (a directory swapped for a
 * link is not entered), crossing no mount.  A file is opened O_NOFOLLOW |
 * O_NONBLOCK (a FIFO put there after the look cannot block) and must be
 * a regular file once open; its header carries the size fstat gave, and
 * a file that shrinks meanwhile is padded with zeros by libarchive.  A
 * second name of an inode already stored is written as a hard link.
 * What is not a file, directory or link (a FIFO, socket, device) is
 * left out.
 *
 * Reading trusts nothing in the archive: each name is checked (not
 * absolute, no "..", no empty or "." component, bounded), each parent
 * is opened component by component with O_NOFOLLOW beneath dirfd (a
 * link planted by an earlier entry is never followed), files are made
 * O_EXCL, set-id bits are dropped, devices and FIFOs are refused, and a
 * hard link must name a regular file already written.  The raw bytes
 * read are counted against bytes_max.
 *
 * Rejected: archive_write_disk (it resolves names through the process's
 * view of the filesystem, and its "secure" flags check links with lstat
 * before use, a race a hostile tree can win).
 */
#include "export/tar.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAR_MAX_PATH  4096
#define TAR_MAX_DEPTH 256
#define TAR_CHUNK     (64u << 10)
#define TAR_MAX_LINKS (1u << 20) /* inodes remembered for hard links */

static const char *const dep_names[] = {"node_modules", ".venv", "__pycache__"};

struct seen {
	dev_t dev;
	ino_t ino;
	char *path;
};

struct writer {
	struct archive *a;
	int fd;
	int64_t bytes;
	dev_t dev;
	bool exclude_deps;
	char path[TAR_MAX_PATH + 2];
	struct seen *seen; /* open addressing by inode, nseen of cap */
	size_t nseen, cap;
	char *chunk;
	struct err *e;
};

static la_ssize_t
on_write(struct archive *a, void *arg, const void *p, size_t n)
{
	struct writer *w = arg;
	const char *s = p;
	size_t done = 0;

	while (done < n) {
		ssize_t k = write(w->fd, s + done, n - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			archive_set_error(a, errno, "tar: write: %s",
			                  strerror(errno));
			return -1;
		}
		done += (size_t)k;
	}
	w->bytes += (int64_t)n;
	return (la_ssize_t)n;
}

static size_t
seen_slot(const struct writer *w, dev_t dev, ino_t ino)
{
	size_t i = (size_t)(ino * 0x9E3779B97F4A7C15ull) & (w->cap - 1);

	while (w->seen[i].path != NULL &&
	       (w->seen[i].dev != dev || w->seen[i].ino != ino))
		i = (i + 1) & (w->cap - 1);
	return i;
}

/* The name under which dev/ino was stored first, or NULL after noting
 * path as that name. */
static const char *
seen_link(struct writer *w, const struct stat *st, const char *path)
{
	if (w->nseen * 2 >= w->cap) {
		size_t ncap = w->cap ? w->cap * 2 : 1024;
		struct seen *old = w->seen;
		size_t ocap = w->cap;
		if (w->nseen >= TAR_MAX_LINKS)
			return NULL; /* stored as a copy past the cap */
		w->seen = calloc(ncap, sizeof(*w->seen));
		if (w->seen == NULL) {
			w->seen = old;
			return NULL;
		}
		w->cap = ncap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].path != NULL)
				w->seen[seen_slot(w, old[i].dev, old[i].ino)] =
				    old[i];
		free(old);
	}
	size_t i = seen_slot(w, st->st_dev, st->st_ino);
	if (w->seen[i].path != NULL)
		return w->seen[i].path;
	w->seen[i].path = strdup(path);
	if (w->seen[i].path != NULL) {
		w->seen[i].dev = st->st_dev;
		w->seen[i].ino = st->st_ino;
		w->nseen++;
	}
	return NULL;
}

static struct archive_entry *
entry_for(const char *path, const struct stat *st)
{
	struct archive_entry *en = archive_entry_new();

	if (en == NULL)
		return NULL;
	archive_entry_set_pathname(en, path);
	archive_entry_set_mode(en, st->st_mode);
	archive_entry_set_uid(en, st->st_uid);
	archive_entry_set_gid(en, st->st_gid);
	archive_entry_set_mtime(en, st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
	archive_entry_set_size(en, 0);
	return en;
}

static int
put_header(struct writer *w, struct archive_entry *en)
{
	int rc = archive_write_header(w->a, en);

	archive_entry_free(en);
	if (rc < ARCHIVE_WARN)
		return err_set(w->e, 500, "internal", "tar: %s",
		               archive_error_string(w->a));
	return 0;
}

static int
put_file(struct writer *w, int dirfd, const char *name, const char *path)
{
	int fd =
	    openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	struct archive_entry *en;
	off_t left;

	if (fd < 0)
		return 0; /* gone, or not ours to read: left out */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_dev != w->dev) {
		close(fd);
		return 0;
	}
	en = entry_for(path, &st);
	if (en == NULL)
		goto nomem;
	const char *first = st.st_nlink > 1 ? seen_link(w, &st, path) : NULL;
	if (first != NULL) {
		archive_entry_set_hardlink(en, first);
		close(fd);
		return put_header(w, en);
	}
	archive_entry_set_size(en, st.st_size);
	if (put_header(w, en) < 0)
		goto fail;
	for (left = st.st_size; left > 0;) {
		ssize_t n = read(fd, w->chunk,
		                 left < TAR_CHUNK ? (size_t)left : TAR_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* shrank: the rest is padded with zeros */
		if (archive_write_data(w->a, w->chunk, (size_t)n) != n) {
			err_set(w->e, 500, "internal", "tar: %s",
			        archive_error_string(w->a));
			goto fail;
		}
		left -= n;
	}
	close(fd);
	return 0;
nomem:
	err_set(w->e, 500, "internal", "tar: out of memory");
fail:
	close(fd);
	return -1;
}

static int
put_link(struct writer *w, int dirfd, const char *name, const char *path,
         const struct stat *st)
{
	char target[TAR_MAX_PATH + 1];
	ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);
	struct archive_entry *en;

	if (n < 0)
		return 0;
	target[n] = '\0';
	en = entry_for(path, st);
	if (en == NULL)
		return err_set(w->e, 500, "internal", "tar: out of memory");
	archive_entry_set_symlink(en, target);
	return put_header(w, en);
}

static bool
is_dep(const char *name)
{
	for (size_t i = 0; i < sizeof(dep_names) / sizeof(dep_names[0]); i++)
		if (strcmp(name, dep_names[i]) == 0)
			return true;
	return false;
}

static int put_dir(struct writer *w, int fd, size_t len, int depth);

/* One entry of the directory open at dirfd; w->path holds its name at
 * len. */
static int
put_entry(struct writer *w, int dirfd, const char *name, size_t len, int depth)
{
	struct stat st;
	size_t nlen = strlen(name);

	if (len + nlen + 1 > TAR_MAX_PATH)
		return 0; /* a name too long to store is left out */
	memcpy(w->path + len, name, nlen + 1);
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    st.st_dev != w->dev)
		return 0;
	if (S_ISREG(st.st_mode))
		return put_file(w, dirfd, name, w->path);
	if (S_ISLNK(st.st_mode))
		return put_link(w, dirfd, name, w->path, &st);
	if (!S_ISDIR(st.st_mode) || depth >= TAR_MAX_DEPTH ||
	    (w->exclude_deps && is_dep(name)))
		return 0;
	int fd = openat(dirfd, name,
	                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || st.st_dev != w->dev) {
		close(fd);
		return 0;
	}
	struct archive_entry *en = entry_for(w->path, &st);
	if (en == NULL) {
		close(fd);
		return err_set(w->e, 500, "internal", "tar: out of memory");
	}
	if (put_header(w, en) < 0) {
		close(fd);
		return -1;
	}
	w->path[len + nlen] = '/';
	w->path[len + nlen + 1] = '\0';
	return put_dir(w, fd, len + nlen + 1, depth + 1);
}

/* Stores every entry of the directory open at fd (taken, closed). */
static int
put_dir(struct writer *w, int fd, size_t len, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		close(fd);
		return 0;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		rc = put_entry(w, dirfd(d), de->d_name, len, depth);
	}
	closedir(d);
	return rc;
}

int
tar_write_tree(int dirfd, int fd, bool exclude_deps, int64_t *bytes,
               struct err *e)
{
	struct writer w = {.fd = fd, .exclude_deps = exclude_deps, .e = e};
	struct stat st;
	int rc = -1, top;

	*bytes = 0;
	w.chunk = malloc(TAR_CHUNK);
	w.a = archive_write_new();
	top = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w.chunk == NULL || w.a == NULL || top < 0 || fstat(top, &st) < 0) {
		err_set(e, 500, "internal", "tar: cannot start: %s",
		        strerror(errno));
		goto out;
	}
	w.dev = st.st_dev;
	archive_write_set_format_pax_restricted(w.a);
	archive_write_set_bytes_in_last_block(w.a, 1);
	if (archive_write_open(w.a, &w, NULL, on_write, NULL) != ARCHIVE_OK) {
		err_set(e, 500, "internal", "tar: %s",
		        archive_error_string(w.a));
		goto out;
	}
	rc = put_dir(&w, top, 0, 0);
	top = -1;
	if (archive_write_close(w.a) != ARCHIVE_OK && rc == 0)
		rc = err_set(e, 500, "internal", "tar: %s",
		             archive_error_string(w.a));
out:
	if (top >= 0)
		close(top);
	if (w.a != NULL)
		archive_write_free(w.a);
	for (size_t i = 0; i < w.cap; i++)
		free(w.seen[i].path);
	free(w.seen);
	free(w.chunk);
	*bytes = w.bytes;
	return rc;
}
