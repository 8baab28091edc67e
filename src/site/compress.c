/*
 * Precompression at publish time: "X.gz" (zlib's deflate in the gzip
 * format, level 9) and "X.br" (brotli, quality 11) beside each
 * compressible file X, so the edge sends compressed bytes without
 * compressing on its loop.  The only file that includes zlib and
 * brotli.
 *
 * The directory is a build's output, written by the app's own code:
 * it is walked from its fd with O_NOFOLLOW (a symbolic link is never
 * followed or written through), a twin is made only where no name
 * "X.gz" / "X.br" exists at all (the build's own twins are kept), and
 * written to a new temporary name (O_EXCL) renamed into place.  A file
 * over SITE_COMPRESS_MAX_BYTES or under SITE_COMPRESS_MIN_BYTES is left
 * alone, as is a twin that would not be smaller.  Compression is
 * CPU-bound and runs on the publish thread, never on the edge's.
 *
 * Rejected: compressing at request time (CPU per request on the one
 * edge thread, and no brotli 11 at that speed), zopfli (minutes for
 * the few percent more).
 */
#include <brotli/encode.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/fileio.h"
#include "site/site.h"

#define COMPRESS_DEPTH_MAX 64 /* deeper than any load allows */

struct squeeze {
	char *err;
	size_t errlen;
};

static const char *const compressible[] = {
    ".html",        ".htm", ".js",   ".mjs", ".cjs", ".css", ".json",
    ".map",         ".svg", ".txt",  ".xml", ".md",  ".csv", ".wasm",
    ".webmanifest", ".rss", ".atom", ".ico", ".ttf", ".otf", ".eot",
};

static bool
wanted(const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < sizeof(compressible) / sizeof(*compressible);
	     i++) {
		size_t k = strlen(compressible[i]);
		if (n > k && strcasecmp(name + n - k, compressible[i]) == 0)
			return true;
	}
	return false;
}

static int
gzip_of(const char *in, size_t n, char **out, size_t *outlen)
{
	z_stream z = {0};
	uLong cap;
	int rc;

	if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -1;
	cap = deflateBound(&z, (uLong)n) + 32;
	*out = malloc(cap);
	if (*out == NULL) {
		deflateEnd(&z);
		return -1;
	}
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)*out;
	z.avail_out = (uInt)cap;
	rc = deflate(&z, Z_FINISH);
	*outlen = z.total_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

static int
brotli_of(const char *in, size_t n, char **out, size_t *outlen)
{
	size_t cap = BrotliEncoderMaxCompressedSize(n);

	if (cap == 0)
		return -1;
	*out = malloc(cap);
	if (*out == NULL)
		return -1;
	*outlen = cap;
	if (!BrotliEncoderCompress(BROTLI_MAX_QUALITY, BROTLI_DEFAULT_WINDOW,
	                           BROTLI_MODE_GENERIC, n, (const uint8_t *)in,
	                           outlen, (uint8_t *)*out)) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

static char *
read_file(int dirfd, const char *name, size_t size)
{
	char *data = malloc(size ? size : 1);
	size_t got = 0;
	ssize_t n = 0;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0 || data == NULL) {
		if (fd >= 0)
			close(fd);
		free(data);
		return NULL;
	}
	while (got < size && (n = read(fd, data + got, size - got)) > 0)
		got += (size_t)n;
	close(fd);
	if (got != size) {
		free(data);
		return NULL;
	}
	return data;
}

/* Writes data as dirfd/name through a temporary name: 0 or -1. */
static int
write_twin(int dirfd, const char *name, const char *data, size_t len)
{
	char tmp[NAME_MAX + 16];
	int fd, rc;

	if (snprintf(tmp, sizeof(tmp), ".%s.tmp", name) >= (int)sizeof(tmp))
		return -1;
	unlinkat(dirfd, tmp, 0);
	fd = openat(dirfd, tmp,
	            O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -1;
	rc = fileio_write_all(fd, data, len);
	if (close(fd) < 0)
		rc = -1;
	if (rc == 0)
		rc = renameat(dirfd, tmp, dirfd, name);
	if (rc < 0)
		unlinkat(dirfd, tmp, 0);
	return rc;
}

static bool
exists(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
	       errno != ENOENT;
}

/* The twins of dirfd/name (size bytes) that are missing: 0 or -1. */
static int
squeeze_file(struct squeeze *q, int dirfd, const char *name, size_t size)
{
	char gzname[NAME_MAX + 4], brname[NAME_MAX + 4];
	char *data, *out = NULL;
	size_t outlen = 0;
	bool want_gz, want_br;
	int rc = 0;

	if (snprintf(gzname, sizeof(gzname), "%s.gz", name) >=
	        (int)sizeof(gzname) ||
	    snprintf(brname, sizeof(brname), "%s.br", name) >=
	        (int)sizeof(brname))
		return 0;
	want_gz = !exists(dirfd, gzname);
	want_br = !exists(dirfd, brname);
	if (!want_gz && !want_br)
		return 0;
	if ((data = read_file(dirfd, name, size)) == NULL)
		return 0; /* changed under us: served without twins */
	if (want_gz && gzip_of(data, size, &out, &outlen) == 0) {
		if (outlen < size && write_twin(dirfd, gzname, out, outlen) < 0)
			rc = -1;
		free(out);
	}
	if (rc == 0 && want_br && brotli_of(data, size, &out, &outlen) == 0) {
		if (outlen < size && write_twin(dirfd, brname, out, outlen) < 0)
			rc = -1;
		free(out);
	}
	free(data);
	if (rc < 0)
		snprintf(q->err, q->errlen, "cannot write the twins of %s: %s",
		         name, strerror(errno));
	return rc;
}

static int
squeeze_dir(struct squeeze *q, int dirfd, int depth)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		close(dirfd);
		snprintf(q->err, q->errlen, "cannot read a directory");
		return -1;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		struct stat st;
		int sub;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISREG(st.st_mode) && wanted(de->d_name) &&
		    st.st_size >= SITE_COMPRESS_MIN_BYTES &&
		    st.st_size <= SITE_COMPRESS_MAX_BYTES) {
			rc = squeeze_file(q, dirfd, de->d_name,
			                  (size_t)st.st_size);
		} else if (S_ISDIR(st.st_mode) && depth < COMPRESS_DEPTH_MAX) {
			sub = openat(dirfd, de->d_name,
			             O_RDONLY | O_DIRECTORY | O_CLOEXEC |
			                 O_NOFOLLOW);
			if (sub >= 0)
				rc = squeeze_dir(q, sub, depth + 1);
		}
	}
	closedir(d);
	return rc;
}

int
site_precompress(const char *dir, char *err, size_t errlen)
{
	struct squeeze q = {.err = err, .errlen = errlen};
	/* opened before err is touched: a caller may pass one buffer for
	 * both */
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		snprintf(err, errlen, "cannot open the directory: %s",
		         strerror(errno));
		return -1;
	}
	if (errlen)
		err[0] = '\0';
	return squeeze_dir(&q, fd, 0);
}
