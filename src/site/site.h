/*
 * site: a directory of static files held in memory and looked up by
 * URL path, for the edge's answers (a published static release; the
 * console's files).  Loading reads the files (off the edge's loop) into
 * one immutable, reference-counted object; lookups and answers never
 * touch the disk.  Also the pure parts of serving them: content types,
 * ETags, which files are content-hashed (immutable), Range headers, and
 * the precompressed ".gz"/".br" twins written at publish time.
 */
#ifndef SITE_SITE_H
#define SITE_SITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct site;

/* The longest path of a file in a site ("/assets/x.js"), bytes. */
#define SITE_PATH_MAX 1024
/* site_precompress leaves larger files alone (brotli's 11 is slow). */
#define SITE_COMPRESS_MAX_BYTES (32u << 20)
/* A file smaller than this is not worth a twin. */
#define SITE_COMPRESS_MIN_BYTES 1024

struct site_file {
	const char *path; /* "/assets/index-3f2a1b.js" */
	size_t path_len;
	const char *type; /* Content-Type */
	const char *data; /* the bytes, in memory */
	size_t len;
	size_t off;     /* where data is in site_fd()'s memfd */
	char etag[32];  /* "\"…\"", strong, from the content */
	bool immutable; /* a content-hashed name: cache for a year */
	const struct site_file *gz, *br; /* precompressed twins, or NULL */
};

struct site_limits {
	size_t max_files;
	size_t max_bytes; /* all the files together */
	int max_depth;
};

/*
 * Loads every regular file under dir (no symbolic link followed, no dot
 * file but .well-known, nothing but regular files and directories).
 * Over a limit: -1 and why in err.  The site starts with one reference.
 */
int site_load(struct site **out, const char *dir, const struct site_limits *lim,
              char *err, size_t errlen);
void site_ref(struct site *s);
void site_unref(struct site *s);
/*
 * The memfd that holds every file's bytes (data points into its
 * read-only mapping), for sendfile: -1 when they are in plain memory
 * (no memfd could be made).  site_offset: where p, a pointer into a
 * file's data, is in it.
 */
int site_fd(const struct site *s);
long long site_offset(const struct site *s, const char *p);
size_t site_files(const struct site *s);
size_t site_bytes(const struct site *s);

/*
 * The file for a request path (raw, percent-encoded, query dropped by
 * the caller): "/" and "/dir/" are their index.html, "/about" is
 * "/about.html" or "/about/index.html" when there is no "/about".
 * NULL when none (a path with "..", NUL or a bad escape is none).
 */
const struct site_file *site_find(const struct site *s, const char *path,
                                  size_t len);
/* spa: "/index.html"; else "/404.html" (answered 404), or NULL. */
const struct site_file *site_fallback(const struct site *s, bool spa);

/*
 * A Range header's value against a body of size bytes: 1 and the one
 * range (*off, *len) to send 206; 0 to send the whole body 200 (not a
 * bytes range, or several ranges); -1 unsatisfiable (416).
 */
int site_range(const char *v, size_t n, size_t size, size_t *off, size_t *len);
/* Whether an Accept-Encoding value accepts coding ("gzip", "br"),
 * q=0 meaning no. */
bool site_accepts(const char *v, size_t n, const char *coding);
/* The Content-Type of a file name (by its extension). */
const char *site_type(const char *name);

/*
 * Writes "X.gz" and "X.br" beside each compressible file X of dir
 * (text, JSON, JS, CSS, SVG, WASM…; at least 1 KiB; kept only when
 * smaller), the twins of files that already have one left alone.
 */
int site_precompress(const char *dir, char *err, size_t errlen);

#endif
