/*
 * site: a directory of static files read into memory once, then looked
 * up by URL path without a system call.
 *
 * site_load walks the directory with openat(O_NOFOLLOW) from its fd, so
 * a symbolic link anywhere in what a build wrote is skipped, never
 * followed out of it; dot files are skipped but .well-known (an app's
 * own ACME or security.txt files); anything but a regular file or a
 * directory is skipped.  Every limit (files, bytes together, depth, a
 * path's length) fails the load with the reason: a release over them is
 * refused at publish, not served in part.  The files sit in one array
 * sorted by path (binary search); "X.gz" and "X.br" become X's twins.
 * Each file gets a strong ETag from its content (FNV-1a 64 and the
 * length: a cache validator, not a defence: the files are the app's
 * own) and whether its name is content-hashed (immutable).
 *
 * Once read, every file's bytes move into one memfd, sealed and mapped
 * read-only (to_memfd): the lookups read the mapping, and the edge sends
 * a large body straight from the memfd with sendfile, no copy through
 * user memory, as a web server sends a file from the page cache.  The
 * pages are the memfd's alone (shared memory, never written back to a
 * disk), so there is no page fault that reads a disk.
 *
 * A site is immutable once loaded and reference-counted (atomics): the
 * edge's loop holds a reference while an answer's body points into it,
 * and the publication's switch drops the old one, so a rollback never
 * waits for a download to end and never frees bytes being sent.
 *
 * Rejected: mmap of the release's files themselves (a page fault on the
 * edge's loop is a disk read; a file truncated under the mapping:
 * SIGBUS),
 * reading on demand (the same disk reads on the loop), a hash table
 * (the sorted array is as fast for a few thousand files and has no
 * worst case an app's file names can steer).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "site/site.h"

struct site {
	atomic_int refs;
	struct site_file *files;
	size_t n, cap, bytes;
	int fd;    /* the memfd of every file's bytes, or -1 */
	char *map; /* its read-only mapping, map_len bytes */
	size_t map_len;
};

struct walk {
	struct site *s;
	const struct site_limits *lim;
	char *err;
	size_t errlen;
};

/* --- content-hashed names ------------------------------------------------ */

static bool
hash_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
}

/* p[0, n) is 8+ name characters with a digit. */
static bool
hash_like(const char *p, size_t n)
{
	bool digit = false;

	if (n < 8)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!hash_char(p[i]))
			return false;
		digit |= p[i] >= '0' && p[i] <= '9';
	}
	return digit;
}

/*
 * Under /assets/ or /_next/static/ (bundlers put only hashed names
 * there), or a dot-separated part of the name before its extension,
 * whole or after its first '-', is hash-like: "index-3f2a1b9c.js",
 * "index-D8r-Kx_2.js", "main.a1b2c3d4.css".  HTML never: it is the entry
 * point that names the hashed files.
 */
static bool
name_immutable(const char *path)
{
	const char *base = strrchr(path, '/'), *ext, *p;

	if (strncmp(path, "/assets/", 8) == 0 ||
	    strncmp(path, "/_next/static/", 14) == 0)
		return strcmp(site_type(path), site_type(".html")) != 0;
	base = base ? base + 1 : path;
	ext = strrchr(base, '.');
	if (ext == NULL || strcmp(site_type(path), site_type(".html")) == 0)
		return false;
	for (p = base; p < ext;) {
		const char *dot = memchr(p, '.', (size_t)(ext - p));
		const char *end = dot ? dot : ext;
		const char *dash = memchr(p, '-', (size_t)(end - p));
		if (hash_like(p, (size_t)(end - p)) ||
		    (dash && hash_like(dash + 1, (size_t)(end - dash - 1))))
			return true;
		p = end + 1;
	}
	return false;
}

static void
make_etag(struct site_file *f)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < f->len; i++)
		h = (h ^ (unsigned char)f->data[i]) * 1099511628211ull;
	snprintf(f->etag, sizeof(f->etag), "\"%016llx-%zx\"",
	         (unsigned long long)h, f->len & 0xffffffffu);
}

/* --- loading ----------------------------------------------------------------
 */

static int fail(struct walk *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The first reason is kept: -1. */
static int
fail(struct walk *w, const char *fmt, ...)
{
	va_list ap;

	if (w->errlen && w->err[0] == '\0') {
		va_start(ap, fmt);
		vsnprintf(w->err, w->errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int
read_into(int dirfd, const char *name, char *data, size_t size)
{
	size_t got = 0;
	ssize_t n = 0;
	char extra;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return -1;
	while (got < size && (n = read(fd, data + got, size - got)) > 0)
		got += (size_t)n;
	/* a file that grew or shrank while read is not the one stat saw */
	if (got == size)
		n = read(fd, &extra, 1);
	close(fd);
	return got == size && n == 0 ? 0 : -1;
}

static int
add_file(struct walk *w, int dirfd, const char *name, const char *rel,
         size_t size)
{
	struct site *s = w->s;
	struct site_file *f;
	char *path, *data;

	if (s->n >= w->lim->max_files)
		return fail(w, "more than %zu files", w->lim->max_files);
	if (size > w->lim->max_bytes - s->bytes)
		return fail(w, "more than %zu MiB of files (at %s)",
		            w->lim->max_bytes >> 20, rel);
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		f = realloc(s->files, cap * sizeof(*f));
		if (f == NULL)
			return fail(w, "out of memory at %s", rel);
		s->files = f;
		s->cap = cap;
	}
	path = strdup(rel);
	data = malloc(size ? size : 1);
	if (path == NULL || data == NULL ||
	    read_into(dirfd, name, data, size) < 0) {
		free(path);
		free(data);
		return fail(w, "cannot read %s", rel);
	}
	f = &s->files[s->n++];
	*f = (struct site_file){.path = path,
	                        .path_len = strlen(path),
	                        .type = site_type(path),
	                        .data = data,
	                        .len = size,
	                        .immutable = name_immutable(path)};
	make_etag(f);
	s->bytes += size;
	return 0;
}

static bool
skipped(const char *name, int depth)
{
	if (name[0] != '.')
		return false;
	return !(depth == 0 && strcmp(name, ".well-known") == 0);
}

static int
walk_dir(struct walk *w, int dirfd, const char *rel, int depth)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		close(dirfd);
		return fail(w, "cannot read the directory %s",
		            rel[0] ? rel : "/");
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		char path[SITE_PATH_MAX];
		struct stat st;
		int sub;

		if (skipped(de->d_name, depth))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", rel, de->d_name) >=
		    (int)sizeof(path)) {
			rc = fail(w, "a path longer than %d bytes under %s",
			          SITE_PATH_MAX, rel[0] ? rel : "/");
			break;
		}
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISREG(st.st_mode)) {
			rc = add_file(w, dirfd, de->d_name, path,
			              (size_t)st.st_size);
		} else if (S_ISDIR(st.st_mode)) {
			if (depth + 1 > w->lim->max_depth) {
				rc = fail(
				    w,
				    "directories nested deeper than %d at %s",
				    w->lim->max_depth, path);
				break;
			}
			sub = openat(dirfd, de->d_name,
			             O_RDONLY | O_DIRECTORY | O_CLOEXEC |
			                 O_NOFOLLOW);
			if (sub < 0)
				rc = fail(w, "cannot open %s", path);
			else
				rc = walk_dir(w, sub, path, depth + 1);
		}
	}
	closedir(d);
	return rc;
}

static int
file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct site_file *)a)->path,
	              ((const struct site_file *)b)->path);
}

static const struct site_file *
file_get(const struct site *s, const char *path, size_t len)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct site_file *f = &s->files[mid];
		int c = memcmp(f->path, path,
		               f->path_len < len ? f->path_len : len);
		if (c == 0)
			c = f->path_len == len ? 0 : f->path_len < len ? -1 : 1;
		if (c == 0)
			return f;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Each "X.gz" and "X.br" becomes X's twin. */
static void
pair_twins(struct site *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct site_file *f = &s->files[i], *base;
		size_t n = f->path_len;
		bool gz = n > 3 && strcmp(f->path + n - 3, ".gz") == 0;
		bool br = n > 3 && strcmp(f->path + n - 3, ".br") == 0;

		if (!gz && !br)
			continue;
		base = (struct site_file *)file_get(s, f->path, n - 3);
		if (base == NULL)
			continue;
		if (gz)
			base->gz = f;
		else
			base->br = f;
	}
}

static void
site_free(struct site *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free((char *)s->files[i].path);
		if (s->map == NULL)
			free((char *)s->files[i].data);
	}
	if (s->map) {
		munmap(s->map, s->map_len);
		close(s->fd);
	}
	free(s->files);
	free(s);
}

static int
pwrite_all(int fd, const char *p, size_t len, off_t off)
{
	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/*
 * Moves every file's bytes into one sealed memfd, mapped read-only, so
 * the edge can send a large body with sendfile (no copy through user
 * memory, as a web server sends a file); the pages are the memfd's, so
 * the mapping costs nothing twice.  On any failure the files stay where
 * they are (plain memory, fd -1).
 */
static void
to_memfd(struct site *s)
{
	size_t total = 0, off = 0;
	char *map;
	int fd;

	for (size_t i = 0; i < s->n; i++)
		total += s->files[i].len;
	if (total == 0)
		return;
	fd = memfd_create("sandboxd-site", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return;
	if (ftruncate(fd, (off_t)total) < 0)
		goto fail;
	for (size_t i = 0; i < s->n; i++) {
		struct site_file *f = &s->files[i];

		if (pwrite_all(fd, f->data, f->len, (off_t)off) < 0)
			goto fail;
		f->off = off;
		off += f->len;
	}
	map = mmap(NULL, total, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		goto fail;
	(void)fcntl(fd, F_ADD_SEALS,
	            F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	for (size_t i = 0; i < s->n; i++) {
		free((char *)s->files[i].data);
		s->files[i].data = map + s->files[i].off;
	}
	s->fd = fd;
	s->map = map;
	s->map_len = total;
	return;
fail:
	close(fd);
}

int
site_load(struct site **out, const char *dir, const struct site_limits *lim,
          char *err, size_t errlen)
{
	struct site *s = calloc(1, sizeof(*s));
	struct walk w = {.s = s, .lim = lim, .err = err, .errlen = errlen};
	int fd;

	*out = NULL;
	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	atomic_init(&s->refs, 1);
	s->fd = -1;
	/* opened before err is touched: a caller may pass one buffer */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		free(s);
		return -1;
	}
	if (errlen)
		err[0] = '\0';
	if (walk_dir(&w, fd, "", 0) < 0) {
		if (err[0] == '\0')
			snprintf(err, errlen, "cannot read the files");
		site_free(s);
		return -1;
	}
	if (s->n > 1)
		qsort(s->files, s->n, sizeof(*s->files), file_cmp);
	pair_twins(s);
	to_memfd(s);
	*out = s;
	return 0;
}

int
site_fd(const struct site *s)
{
	return s->fd;
}

long long
site_offset(const struct site *s, const char *p)
{
	if (s->map == NULL || p < s->map || p >= s->map + s->map_len)
		return -1;
	return (long long)(p - s->map);
}

void
site_ref(struct site *s)
{
	atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

void
site_unref(struct site *s)
{
	if (s &&
	    atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1)
		site_free(s);
}

size_t
site_files(const struct site *s)
{
	return s->n;
}

size_t
site_bytes(const struct site *s)
{
	return s->bytes;
}

/* --- lookup -----------------------------------------------------------------
 */

static int
hex(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/*
 * Percent-decodes path into out: its length, or -1 for none (not
 * absolute, a bad escape, NUL, a "." or ".." segment, too long).
 */
static int
decode_path(const char *path, size_t len, char *out, size_t cap)
{
	size_t o = 0;

	if (len == 0 || path[0] != '/')
		return -1;
	for (size_t i = 0; i < len; i++) {
		char ch = path[i];
		if (ch == '%') {
			int hi, lo;
			if (i + 2 >= len)
				return -1;
			hi = hex(path[i + 1]);
			lo = hex(path[i + 2]);
			if (hi < 0 || lo < 0)
				return -1;
			ch = (char)(hi * 16 + lo);
			i += 2;
		}
		if (ch == '\0' || o + 1 >= cap)
			return -1;
		out[o++] = ch;
	}
	out[o] = '\0';
	for (size_t i = 0; i < o; i++) {
		size_t k = i + 1;
		if (out[i] != '/')
			continue;
		while (k < o && out[k] == '.')
			k++;
		if ((k == i + 2 || k == i + 3) && (k == o || out[k] == '/'))
			return -1;
	}
	return (int)o;
}

const struct site_file *
site_find(const struct site *s, const char *path, size_t len)
{
	char p[SITE_PATH_MAX + 16];
	const struct site_file *f;
	int n = decode_path(path, len, p, SITE_PATH_MAX);
	size_t k;

	if (n < 0)
		return NULL;
	k = (size_t)n;
	if (p[k - 1] == '/') {
		memcpy(p + k, "index.html", 11);
		return file_get(s, p, k + 10);
	}
	if ((f = file_get(s, p, k)) != NULL)
		return f;
	memcpy(p + k, ".html", 6);
	if ((f = file_get(s, p, k + 5)) != NULL)
		return f;
	memcpy(p + k, "/index.html", 12);
	return file_get(s, p, k + 11);
}

const struct site_file *
site_fallback(const struct site *s, bool spa)
{
	return spa ? file_get(s, "/index.html", 11)
	           : file_get(s, "/404.html", 9);
}
