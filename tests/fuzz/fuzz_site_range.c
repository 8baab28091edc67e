/*
 * libFuzzer target: what a client of a published static app controls
 * in the headers and path the edge answers from memory (src/site).  The
 * input is tried as a Range header against a body size its first bytes
 * pick, as an Accept-Encoding header, and as a request path looked up
 * in a small site.  Invariants: nothing crashes or reads out of bounds
 * (ASan); a satisfiable range lies inside the body and is not empty; an
 * unsatisfiable one only when it starts at or past the end (or is a zero
 * suffix); a path found names a loaded file, and one with a ".."
 * segment, decoded, is never found.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "site/site.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct site *
fz_site(void)
{
	static struct site *s;
	static const struct site_limits lim = {64, 1u << 20, 4};
	static const char *const files[] = {"index.html", "a.html",
	                                    "d/index.html", "d/x.js"};
	char dir[64] = "/tmp/fuzz-site-XXXXXX", p[128], err[128];

	if (s)
		return s;
	if (mkdtemp(dir) == NULL)
		abort();
	snprintf(p, sizeof(p), "%s/d", dir);
	mkdir(p, 0755);
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, "x", 1) != 1)
			abort();
		close(fd);
	}
	if (site_load(&s, dir, &lim, err, sizeof(err)) < 0)
		abort();
	return s;
}

static void
check_range(const char *v, size_t n, size_t body)
{
	size_t off = 0, len = 0;
	int r = site_range(v, n, body, &off, &len);

	if (r == 1 && (len == 0 || off >= body || len > body - off))
		__builtin_trap();
	if (r < -1 || r > 1)
		__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct site_file *f;
	size_t body;

	if (size < 2)
		return 0;
	body = (size_t)data[0] << 8 | data[1];
	data += 2;
	size -= 2;
	check_range((const char *)data, size, body);
	check_range((const char *)data, size, 0);
	(void)site_accepts((const char *)data, size, "br");
	(void)site_accepts((const char *)data, size, "gzip");
	f = site_find(fz_site(), (const char *)data, size);
	if (f && (f->len != 1 || f->path[0] != '/' ||
	          strstr(f->path, "/..") != NULL))
		__builtin_trap();
	return 0;
}
