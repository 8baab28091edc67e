/*
 * site: loading a directory into memory (limits, what is skipped, the
 * twins), lookups by URL path, immutable names, ETags, Range and
 * Accept-Encoding headers, content types, and precompression checked by
 * decompressing the twins it writes.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "site/site.h"
#include "unit.h"

static const struct site_limits big = {1000, 1u << 24, 8};

static void
put(const char *root, const char *rel, const char *data, size_t len)
{
	char p[512];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	for (char *s = strchr(p + strlen(root) + 1, '/'); s;
	     s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, data, len) == (ssize_t)len);
		close(fd);
	}
}

static void
puts_(const char *root, const char *rel, const char *text)
{
	put(root, rel, text, strlen(text));
}

static char *
tree(void)
{
	static char root[64];

	snprintf(root, sizeof(root), "/tmp/test-site-XXXXXX");
	if (mkdtemp(root) == NULL)
		abort();
	puts_(root, "index.html", "<h1>home</h1>");
	puts_(root, "about.html", "about");
	puts_(root, "docs/index.html", "docs");
	puts_(root, "assets/index-3f2a1b9c.js", "console.log(1)");
	puts_(root, "assets/index-3f2a1b9c.js.gz", "gz");
	puts_(root, "assets/index-3f2a1b9c.js.br", "br");
	puts_(root, "img/logo.png", "\x89PNG");
	puts_(root, "a b.txt", "space");
	puts_(root, ".env", "SECRET=1");
	puts_(root, ".git/config", "x");
	puts_(root, ".well-known/security.txt", "contact");
	return root;
}

static void
rmtree(const char *root)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK(system(cmd) == 0);
}

static const char *
found(const struct site *s, const char *path)
{
	const struct site_file *f = site_find(s, path, strlen(path));
	return f ? f->path : NULL;
}

static void
load_and_find(void)
{
	char *root = tree(), err[160], link[600];
	struct site *s;

	snprintf(link, sizeof(link), "%s/passwd", root);
	CHECK(symlink("/etc/passwd", link) == 0);
	CHECK(site_load(&s, root, &big, err, sizeof(err)) == 0);
	CHECK(site_files(s) == 9); /* not .env, .git, the link */
	CHECK_STR(found(s, "/"), "/index.html");
	CHECK_STR(found(s, "/about"), "/about.html");
	CHECK_STR(found(s, "/docs"), "/docs/index.html");
	CHECK_STR(found(s, "/docs/"), "/docs/index.html");
	CHECK_STR(found(s, "/a%20b.txt"), "/a b.txt");
	CHECK_STR(found(s, "/.well-known/security.txt"),
	          "/.well-known/security.txt");
	CHECK(found(s, "/.env") == NULL);
	CHECK(found(s, "/passwd") == NULL);
	CHECK(found(s, "/docs/../index.html") == NULL);
	CHECK(found(s, "/docs/%2e%2e/index.html") == NULL);
	CHECK(found(s, "/./index.html") == NULL);
	CHECK(found(s, "/index.html%00") == NULL);
	CHECK(found(s, "/index.html%") == NULL);
	CHECK(found(s, "/index.html%4") == NULL);
	CHECK(found(s, "/index.html%zz") == NULL);
	CHECK(found(s, "index.html") == NULL);
	CHECK(found(s, "/nope") == NULL);
	CHECK(found(s, "/..") == NULL);
	CHECK_STR(site_fallback(s, true)->path, "/index.html");
	CHECK(site_fallback(s, false) == NULL);
	site_unref(s);
	rmtree(root);
}

static void
files_and_twins(void)
{
	char *root = tree(), err[160];
	const struct site_file *f, *g;
	struct site *s;

	puts_(root, "404.html", "gone");
	puts_(root, "copy.html", "<h1>home</h1>");
	CHECK(site_load(&s, root, &big, err, sizeof(err)) == 0);
	f = site_find(s, "/assets/index-3f2a1b9c.js", 25);
	CHECK(f && f->gz && f->br && f->immutable);
	CHECK(f && f->gz && memcmp(f->gz->data, "gz", 2) == 0);
	CHECK(f && f->br && f->br->len == 2);
	CHECK_STR(f ? f->type : NULL, "text/javascript; charset=utf-8");
	f = site_find(s, "/", 1);
	g = site_find(s, "/copy.html", 10);
	CHECK(f && g && !f->immutable && f->gz == NULL);
	CHECK(f && g && strcmp(f->etag, g->etag) == 0); /* same bytes */
	CHECK(f && f->etag[0] == '"' && f->etag[strlen(f->etag) - 1] == '"');
	g = site_find(s, "/about", 6);
	CHECK(f && g && strcmp(f->etag, g->etag) != 0);
	CHECK_STR(site_fallback(s, false)->path, "/404.html");
	site_ref(s); /* two holders: the first unref keeps the bytes */
	site_unref(s);
	CHECK(f && memcmp(f->data, "<h1>", 4) == 0);
	site_unref(s);
	rmtree(root);
}

static void
limits(void)
{
	char *root = tree(), err[160];
	struct site_limits l = big;
	struct site *s = (struct site *)1;

	l.max_files = 3;
	CHECK(site_load(&s, root, &l, err, sizeof(err)) < 0 && s == NULL);
	CHECK(strstr(err, "more than 3 files") != NULL);
	l = big;
	l.max_bytes = 20;
	CHECK(site_load(&s, root, &l, err, sizeof(err)) < 0);
	CHECK(strstr(err, "MiB") != NULL);
	l = big;
	l.max_depth = 0;
	CHECK(site_load(&s, root, &l, err, sizeof(err)) < 0);
	CHECK(strstr(err, "deeper") != NULL);
	CHECK(site_load(&s, "/nonexistent-site", &big, err, sizeof(err)) < 0);
	rmtree(root);
}

static bool
imm(const char *name)
{
	char root[64] = "/tmp/test-site-XXXXXX", err[160], p[256];
	const struct site_file *f;
	struct site *s;
	bool r = false;

	if (mkdtemp(root) == NULL)
		abort();
	puts_(root, name, "x");
	snprintf(p, sizeof(p), "/%s", name);
	if (site_load(&s, root, &big, err, sizeof(err)) == 0) {
		f = site_find(s, p, strlen(p));
		r = f && f->immutable;
		site_unref(s);
	}
	rmtree(root);
	return r;
}

static void
immutable_names(void)
{
	CHECK(imm("index-3f2a1b9c.js"));
	CHECK(imm("index-D8r-Kx_2.js"));
	CHECK(imm("main.a1b2c3d4.css"));
	CHECK(imm("3f2a1b9c.woff2"));
	CHECK(imm("assets/logo.svg"));
	CHECK(imm("_next/static/chunks/app.js"));
	CHECK(!imm("assets/page.html"));
	CHECK(!imm("app.js"));
	CHECK(!imm("favicon.ico"));
	CHECK(!imm("index-abcdefgh.js")); /* no digit */
	CHECK(!imm("page-2024aaaa.html"));
	CHECK(!imm("v-12345.js")); /* 7 characters */
}

static int
range(const char *v, size_t size, size_t *off, size_t *len)
{
	*off = *len = 12345;
	return site_range(v, strlen(v), size, off, len);
}

static void
ranges(void)
{
	size_t off, len;

	CHECK(range("bytes=0-99", 1000, &off, &len) == 1 && off == 0 &&
	      len == 100);
	CHECK(range("bytes=100-", 1000, &off, &len) == 1 && off == 100 &&
	      len == 900);
	CHECK(range("bytes=-10", 1000, &off, &len) == 1 && off == 990 &&
	      len == 10);
	CHECK(range("bytes=-5000", 1000, &off, &len) == 1 && off == 0 &&
	      len == 1000);
	CHECK(range("bytes=990-5000", 1000, &off, &len) == 1 && off == 990 &&
	      len == 10);
	CHECK(range(" Bytes=5-5 ", 1000, &off, &len) == 1 && off == 5 &&
	      len == 1);
	CHECK(range("bytes=999-999", 1000, &off, &len) == 1 && len == 1);
	CHECK(range("bytes=1000-", 1000, &off, &len) == -1);
	CHECK(range("bytes=-0", 1000, &off, &len) == -1);
	CHECK(range("bytes=0-0", 0, &off, &len) == -1);
	CHECK(range("bytes=0-1,5-6", 1000, &off, &len) == 0);
	CHECK(range("bytes=5-1", 1000, &off, &len) == 0);
	CHECK(range("bytes=-", 1000, &off, &len) == 0);
	CHECK(range("bytes=1-2x", 1000, &off, &len) == 0);
	CHECK(range("items=1-2", 1000, &off, &len) == 0);
	CHECK(range("bytes=99999999999999999999999-", 1000, &off, &len) == 0);
	CHECK(range("", 1000, &off, &len) == 0);
	CHECK(off == 12345 && len == 12345); /* untouched when not 1 */
}

static bool
acc(const char *v, const char *coding)
{
	return site_accepts(v, strlen(v), coding);
}

static void
accept_encoding(void)
{
	CHECK(acc("gzip, deflate, br", "br"));
	CHECK(acc("gzip, deflate, br", "gzip"));
	CHECK(!acc("gzip, deflate", "br"));
	CHECK(acc("GZIP", "gzip"));
	CHECK(!acc("gzip;q=0", "gzip"));
	CHECK(!acc("gzip; q=0.000", "gzip"));
	CHECK(acc("gzip;q=0.5", "gzip"));
	CHECK(acc("br;q=1.0, gzip;q=0", "br"));
	CHECK(!acc("br;q=1.0, gzip;q=0", "gzip"));
	CHECK(acc("*", "br"));
	CHECK(!acc("*;q=0", "br"));
	CHECK(!acc("*, br;q=0", "br"));
	CHECK(acc("identity, *;q=1", "gzip"));
	CHECK(!acc("gzipx", "gzip"));
	CHECK(!acc("", "gzip"));
	CHECK(!acc("x-gzip", "gzip"));
}

static void
types(void)
{
	CHECK_STR(site_type("/a/index.html"), "text/html; charset=utf-8");
	CHECK_STR(site_type("x.CSS"), "text/css; charset=utf-8");
	CHECK_STR(site_type("x.wasm"), "application/wasm");
	CHECK_STR(site_type("x.svg"), "image/svg+xml");
	CHECK_STR(site_type("x.json"), "application/json");
	CHECK_STR(site_type("noext"), "application/octet-stream");
	CHECK_STR(site_type("/dir.js/file"), "application/octet-stream");
}

/* A readable file's whole text, via a shell decompressor. */
static bool
same_after(const char *cmd, const char *twin, const char *orig)
{
	char line[1024];

	snprintf(line, sizeof(line), "%s < '%s' | cmp -s - '%s'", cmd, twin,
	         orig);
	return system(line) == 0;
}

static void
precompress(void)
{
	char root[64] = "/tmp/test-site-XXXXXX", err[160], p[128], q[128];
	char *big_js = malloc(64 << 10);
	struct stat st;
	struct site *s;
	const struct site_file *f;

	if (mkdtemp(root) == NULL || big_js == NULL)
		abort();
	for (size_t i = 0; i < (64u << 10); i++)
		big_js[i] = "function f(){return 42}\n"[i % 24];
	big_js[(64u << 10) - 1] = '\0'; /* also a string (more.js) */
	put(root, "app.js", big_js, 64 << 10);
	puts_(root, "small.css", "a{}");
	put(root, "photo.png", big_js, 4096); /* not compressible by type */
	put(root, "kept.js", big_js, 4096);
	puts_(root, "kept.js.gz", "theirs");
	CHECK(site_precompress(root, err, sizeof(err)) == 0);
	snprintf(p, sizeof(p), "%s/app.js", root);
	snprintf(q, sizeof(q), "%s/app.js.gz", root);
	CHECK(stat(q, &st) == 0 && st.st_size < 4096);
	CHECK(same_after("gzip -dc", q, p));
	snprintf(q, sizeof(q), "%s/app.js.br", root);
	CHECK(stat(q, &st) == 0 && st.st_size < 4096);
	if (system("command -v brotli >/dev/null") == 0)
		CHECK(same_after("brotli -dc", q, p));
	snprintf(q, sizeof(q), "%s/small.css.gz", root);
	CHECK(stat(q, &st) < 0);
	snprintf(q, sizeof(q), "%s/photo.png.gz", root);
	CHECK(stat(q, &st) < 0);
	snprintf(q, sizeof(q), "%s/kept.js.br", root);
	CHECK(stat(q, &st) == 0);
	CHECK(site_load(&s, root, &big, err, sizeof(err)) == 0);
	f = site_find(s, "/kept.js", 8);
	CHECK(f && f->gz && f->gz->len == 6 && f->br);
	f = site_find(s, "/app.js", 7);
	CHECK(f && f->gz && f->br && f->br->len < f->gz->len);
	site_unref(s);
	CHECK(site_precompress("/nonexistent-site", err, sizeof(err)) < 0);
	/* one buffer for the directory and the reason, as a caller may */
	snprintf(q, sizeof(q), "%s/small.css", root);
	puts_(root, "more.js", big_js + 60000);
	snprintf(err, sizeof(err), "%s", root);
	CHECK(site_precompress(err, err, sizeof(err)) == 0);
	snprintf(q, sizeof(q), "%s/more.js.br", root);
	CHECK(stat(q, &st) == 0);
	free(big_js);
	rmtree(root);
}

static const struct unit_test tests[] = {
    {"load and find by URL path", load_and_find},
    {"files, twins, ETags, references", files_and_twins},
    {"limits fail the load", limits},
    {"content-hashed names are immutable", immutable_names},
    {"Range headers", ranges},
    {"Accept-Encoding", accept_encoding},
    {"content types", types},
    {"precompression: gzip and brotli twins", precompress},
};

int
main(void)
{
	return UNIT_RUN("site", tests);
}
