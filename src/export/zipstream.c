/*
 * An app directory as a zip, pulled a step at a time (zipstream.h).
 *
 * libarchive pushes what it writes to a callback; the HTTP server pulls
 * a response body.  The bridge is one step at a time: a pull that finds
 * nothing waiting runs one step of the walk (the next directory entry,
 * or the next ZIPSTREAM_CHUNK bytes of the open file) and hands out what
 * libarchive wrote for it.  With blocking off (bytes_per_block 0) every
 * write of libarchive reaches the callback at once, so the output that
 * waits is what one step made, bounded by ZIPSTREAM_OUT_MAX.
 *
 * The walk keeps a stack of open directories (each opened beneath its
 * parent with O_NOFOLLOW, so a directory swapped for a symlink is not
 * entered), and opens a file the same way with O_NONBLOCK (a FIFO put
 * there after the look cannot block), then checks what it opened is a
 * regular file.  An entry's size is the one fstat gave when its header
 * was written: a file that grows meanwhile is cut at that size, one that
 * shrinks ends the stream (its header cannot be taken back).
 *
 * Rejected: a thread writing the zip into a pipe the server reads (a
 * thread per download, blocked on a slow client until the connection's
 * timeout), and a temporary file (unbounded disk, and the client waits
 * for the whole archive before its first byte).
 */
#include "export/zipstream.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/log.h"

struct level {
	DIR *d;
	size_t len; /* the path's length before this directory's name */
};

struct zipstream {
	struct archive *a;
	struct buf out; /* written by libarchive, not yet read */
	size_t off;     /* of out, read so far */
	struct level stack[ZIPSTREAM_MAX_DEPTH];
	int depth;
	char path[ZIPSTREAM_MAX_PATH + 2]; /* the directory's, "a/b/" */
	size_t len;
	dev_t dev;
	int fd;     /* the file being stored, or -1 */
	off_t left; /* its bytes still to store */
	bool git;
	bool closed; /* the central directory is written */
	bool failed;
	size_t files, left_out;
	char chunk[ZIPSTREAM_CHUNK];
};

/* Left out at every level, by name. */
static const char *const skip_names[] = {
    "node_modules", ".venv",         "venv",        "__pycache__",
    ".vite",        ".pytest_cache", ".mypy_cache", ".sandboxd",
};

static la_ssize_t
on_write(struct archive *a, void *arg, const void *p, size_t n)
{
	struct zipstream *z = arg;

	if (buf_append(&z->out, p, n) < 0) {
		archive_set_error(a, ENOMEM, "export: output over its cap");
		return -1;
	}
	return (la_ssize_t)n;
}

static int
fail(struct zipstream *z, const char *what, int err)
{
	log_warn("export: %s%s: %s", z->path, what,
	         err ? strerror(err) : archive_error_string(z->a));
	z->failed = true;
	return -1;
}

/* Whether the directory being read is .next (its cache is left out). */
static bool
in_next(const struct zipstream *z)
{
	return (z->len == 6 && memcmp(z->path, ".next/", 6) == 0) ||
	       (z->len > 6 && memcmp(z->path + z->len - 7, "/.next/", 7) == 0);
}

static bool
skipped(const struct zipstream *z, const char *name)
{
	for (size_t i = 0; i < sizeof(skip_names) / sizeof(skip_names[0]); i++)
		if (strcmp(name, skip_names[i]) == 0)
			return true;
	if (!z->git && strcmp(name, ".git") == 0)
		return true;
	return strcmp(name, "cache") == 0 && in_next(z);
}

static int
dir_push(struct zipstream *z, int dfd, const char *name, size_t nl)
{
	int fd;
	DIR *d;

	if (z->depth == ZIPSTREAM_MAX_DEPTH ||
	    z->len + nl + 1 > ZIPSTREAM_MAX_PATH) {
		z->left_out++;
		return 0;
	}
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		/* Gone, or no longer a directory, since the look. */
		z->left_out++;
		return errno == ENOENT || errno == ELOOP || errno == ENOTDIR
		           ? 0
		           : fail(z, name, errno);
	}
	d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return fail(z, name, errno);
	}
	z->stack[z->depth++] = (struct level){.d = d, .len = z->len};
	memcpy(z->path + z->len, name, nl);
	z->len += nl;
	z->path[z->len++] = '/';
	z->path[z->len] = '\0';
	return 0;
}

static int
entry_end(struct zipstream *z)
{
	close(z->fd);
	z->fd = -1;
	z->path[z->len] = '\0';
	if (archive_write_finish_entry(z->a) < ARCHIVE_WARN)
		return fail(z, "", 0);
	return 0;
}

static int
file_start(struct zipstream *z, int dfd, const char *name, size_t nl)
{
	struct archive_entry *en;
	struct stat st;
	int fd, rc;

	if (z->files == ZIPSTREAM_MAX_FILES)
		return fail(z, " (more files than an export holds)", E2BIG);
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		z->left_out++;
		return 0;
	}
	memcpy(z->path + z->len, name, nl + 1);
	en = archive_entry_new();
	if (en == NULL) {
		close(fd);
		return fail(z, "", ENOMEM);
	}
	archive_entry_set_pathname(en, z->path);
	archive_entry_set_filetype(en, AE_IFREG);
	archive_entry_set_perm(en, (st.st_mode & 0111) ? 0755 : 0644);
	archive_entry_set_size(en, st.st_size);
	archive_entry_set_mtime(en, st.st_mtim.tv_sec, 0);
	rc = archive_write_header(z->a, en);
	archive_entry_free(en);
	z->fd = fd;
	if (rc < ARCHIVE_WARN)
		return fail(z, "", 0);
	z->files++;
	z->left = st.st_size;
	return z->left == 0 ? entry_end(z) : 0;
}

static int
entry_add(struct zipstream *z, int dfd, const char *name)
{
	size_t nl = strlen(name);
	struct stat st;

	if (z->len + nl > ZIPSTREAM_MAX_PATH) {
		z->left_out++;
		return 0;
	}
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		z->left_out++;
		return errno == ENOENT ? 0 : fail(z, name, errno);
	}
	if (st.st_dev != z->dev) { /* a mount point */
		z->left_out++;
		return 0;
	}
	if (S_ISDIR(st.st_mode))
		return dir_push(z, dfd, name, nl);
	if (S_ISREG(st.st_mode))
		return file_start(z, dfd, name, nl);
	z->left_out++; /* a symlink, FIFO, socket or device */
	return 0;
}

static int
dir_step(struct zipstream *z)
{
	struct level *lv = &z->stack[z->depth - 1];
	struct dirent *de;

	errno = 0;
	de = readdir(lv->d);
	if (de == NULL) {
		if (errno)
			return fail(z, "", errno);
		closedir(lv->d);
		z->depth--;
		z->len = lv->len;
		z->path[z->len] = '\0';
		return 0;
	}
	if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
		return 0;
	if (skipped(z, de->d_name)) {
		z->left_out++;
		return 0;
	}
	return entry_add(z, dirfd(lv->d), de->d_name);
}

static int
file_step(struct zipstream *z)
{
	size_t want = z->left < (off_t)sizeof(z->chunk) ? (size_t)z->left
	                                                : sizeof(z->chunk);
	ssize_t n = read(z->fd, z->chunk, want);

	if (n < 0 && errno == EINTR)
		return 0;
	if (n <= 0)
		return fail(z, n < 0 ? "" : " (shrank while read)",
		            n < 0 ? errno : EIO);
	if (archive_write_data(z->a, z->chunk, (size_t)n) != n)
		return fail(z, "", 0);
	z->left -= n;
	return z->left == 0 ? entry_end(z) : 0;
}

static int
step(struct zipstream *z)
{
	if (z->fd >= 0)
		return file_step(z);
	if (z->depth > 0)
		return dir_step(z);
	z->closed = true;
	if (archive_write_close(z->a) != ARCHIVE_OK)
		return fail(z, "(the archive's end)", 0);
	return 0;
}

ssize_t
zipstream_read(struct zipstream *z, char *buf, size_t max)
{
	size_t n;

	while (z->off == z->out.len) {
		buf_reset(&z->out);
		z->off = 0;
		if (z->failed)
			return -1;
		if (z->closed)
			return 0;
		if (step(z) < 0)
			return -1;
	}
	n = z->out.len - z->off;
	if (n > max)
		n = max;
	memcpy(buf, z->out.data + z->off, n);
	z->off += n;
	return (ssize_t)n;
}

int
zipstream_open(int dirfd, bool with_git, struct zipstream **out)
{
	struct zipstream *z = calloc(1, sizeof(*z));
	struct stat st;
	DIR *d = NULL;

	if (z == NULL || fstat(dirfd, &st) < 0 ||
	    (d = fdopendir(dirfd)) == NULL) {
		free(z);
		close(dirfd);
		return -1;
	}
	buf_init(&z->out, ZIPSTREAM_OUT_MAX);
	z->fd = -1;
	z->git = with_git;
	z->dev = st.st_dev;
	z->stack[z->depth++] = (struct level){.d = d, .len = 0};
	z->a = archive_write_new();
	if (z->a == NULL || archive_write_set_format_zip(z->a) != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(z->a, 0) != ARCHIVE_OK ||
	    archive_write_open2(z->a, z, NULL, on_write, NULL, NULL) !=
	        ARCHIVE_OK) {
		zipstream_free(z);
		return -1;
	}
	*out = z;
	return 0;
}

void
zipstream_counts(const struct zipstream *z, size_t *files, size_t *left_out)
{
	*files = z->files;
	*left_out = z->left_out;
}

void
zipstream_free(struct zipstream *z)
{
	if (z == NULL)
		return;
	if (z->fd >= 0)
		close(z->fd);
	while (z->depth > 0)
		closedir(z->stack[--z->depth].d);
	if (z->a)
		archive_write_free(z->a);
	buf_release(&z->out);
	free(z);
}
