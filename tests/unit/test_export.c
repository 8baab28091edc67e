/*
 * The export's zip (export/zipstream.h): what the walk stores and leaves
 * out of a tree a sandbox could have made, and that the archive is whole
 * (local headers first, the end of central directory last) whatever the
 * size of the pieces it is pulled in.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/zipstream.h"
#include "unit.h"

static char root[64];

static void
put(const char *rel, const char *text)
{
	unit_put(root, rel, text);
}

static void
dir(const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	CHECK(mkdir(p, 0755) == 0);
}

/* The whole archive, pulled max bytes at a time, into a new buffer. */
static char *
pull(bool git, size_t max, size_t *len)
{
	struct zipstream *z;
	size_t cap = 1 << 20, n = 0;
	char *out = malloc(cap);
	ssize_t got;
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK(fd >= 0 && zipstream_open(fd, git, &z) == 0);
	while ((got = zipstream_read(z, out + n,
	                             max < cap - n ? max : cap - n)) > 0)
		n += (size_t)got;
	CHECK(got == 0);
	zipstream_free(z);
	*len = n;
	return out;
}

static bool
has(const char *zip, size_t len, const char *name)
{
	return memmem(zip, len, name, strlen(name)) != NULL;
}

static void
test_contents(void)
{
	size_t len;
	char *zip;

	snprintf(root, sizeof(root), "/tmp/sbx-export-XXXXXX");
	CHECK(mkdtemp(root) != NULL);
	dir("src");
	dir("node_modules");
	dir(".git");
	dir("sub");
	dir("sub/.next");
	dir("sub/.next/cache");
	put("src/app-kept.js", "kept");
	put("node_modules/dep-left.js", "left");
	put(".git/HEAD", "ref: refs/heads/main\n");
	put("sub/.next/cache/cache-left", "left");
	put("sub/.next/build-kept", "kept");
	put("empty-kept", "");
	{
		char p[256];
		snprintf(p, sizeof(p), "%s/link-left", root);
		CHECK(symlink("/etc/passwd", p) == 0);
	}

	zip = pull(false, 7, &len);
	CHECK(len > 22 && memcmp(zip, "PK\x03\x04", 4) == 0);
	CHECK(memcmp(zip + len - 22, "PK\x05\x06", 4) == 0);
	CHECK(has(zip, len, "src/app-kept.js"));
	CHECK(has(zip, len, "sub/.next/build-kept"));
	CHECK(has(zip, len, "empty-kept"));
	CHECK(!has(zip, len, "dep-left"));
	CHECK(!has(zip, len, "cache-left"));
	CHECK(!has(zip, len, "link-left"));
	CHECK(!has(zip, len, ".git/HEAD"));
	free(zip);

	zip = pull(true, 1 << 16, &len);
	CHECK(has(zip, len, ".git/HEAD"));
	CHECK(memcmp(zip + len - 22, "PK\x05\x06", 4) == 0);
	free(zip);
}

static const struct unit_test tests[] = {
    {"what an export holds, pulled in any piece size", test_contents},
};

int
main(void)
{
	return UNIT_RUN("export", tests);
}
