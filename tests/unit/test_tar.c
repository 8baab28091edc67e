/*
 * Workspace tar streams (export/tar.h): a tree written and read back
 * keeps its files, directories, symlinks (as links) and hard links, and
 * leaves out FIFOs and, when asked, dependency trees; archives made by
 * hand to attack the reader ("../x", an absolute name, a symlink then a
 * file through it, a device, a hard link out of the tree, more bytes
 * than allowed) are refused and write nothing outside the directory.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "export/tar.h"
#include "tar_fixture.h"
#include "unit.h"

static char base[64];

static void
put(const char *rel, const char *text)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0640);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
		close(fd);
	}
}

static void
mk(const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	CHECK(mkdir(p, 0755) == 0);
}

static int
dir_fd(const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	return open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static int
lst(const char *rel, struct stat *st)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	return lstat(p, st);
}

static void
setup(void)
{
	snprintf(base, sizeof(base), "/tmp/sbx-tar-XXXXXX");
	CHECK(mkdtemp(base) != NULL);
}

static void
teardown(void)
{
	char *const argv[] = {"rm", "-rf", base, NULL};
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && st == 0);
}

struct ent {
	const char *name;
	char type;
	const char *link;
	const char *data;
};

/* Writes the entries as a tar into a temporary file; its fd at 0. */
static int
archive_of(const struct ent *v, size_t n)
{
	char p[128];
	unsigned char h[512], zero[1024] = {0};
	int fd;

	snprintf(p, sizeof(p), "%s/in.tar", base);
	fd = open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	for (size_t i = 0; i < n; i++) {
		size_t len = v[i].data ? strlen(v[i].data) : 0;
		tar_header(h, v[i].name, v[i].type, v[i].link, len);
		CHECK(write(fd, h, 512) == 512);
		if (len) {
			unsigned char blk[512] = {0};
			memcpy(blk, v[i].data, len);
			CHECK(write(fd, blk, 512) == 512);
		}
	}
	CHECK(write(fd, zero, sizeof(zero)) == (ssize_t)sizeof(zero));
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	return fd;
}

/* Reads the entries into base/out; the status of the error, 0 on
 * success. */
static int
read_into(const struct ent *v, size_t n, int64_t max)
{
	struct err e = {0};
	int64_t bytes;
	int fd = archive_of(v, n), out, rc;

	mk("out");
	out = dir_fd("out");
	rc = tar_read_tree(fd, out, max, &bytes, &e);
	close(fd);
	close(out);
	CHECK((rc == 0) == (e.status == 0));
	return rc == 0 ? 0 : e.status;
}

static void
test_round_trip(void)
{
	struct err e = {0};
	struct stat a, b;
	int64_t wrote = 0, got = 0;
	char p[256], ln[300];
	int src, dst, fd;

	setup();
	mk("src");
	mk("src/app");
	mk("src/app/node_modules");
	put("src/app/node_modules/dep.js", "dep");
	put("src/app/index.js", "console.log(1)\n");
	snprintf(p, sizeof(p), "%s/src/app/index.js", base);
	snprintf(ln, sizeof(ln), "%s/src/app/same.js", base);
	CHECK(link(p, ln) == 0);
	snprintf(p, sizeof(p), "%s/src/app/to-index", base);
	CHECK(symlink("index.js", p) == 0);
	snprintf(p, sizeof(p), "%s/src/app/escape", base);
	CHECK(symlink("/etc/passwd", p) == 0);
	snprintf(p, sizeof(p), "%s/src/app/fifo", base);
	CHECK(mkfifo(p, 0600) == 0);
	mk("dst");

	snprintf(p, sizeof(p), "%s/w.tar", base);
	fd = open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	src = dir_fd("src");
	CHECK(tar_write_tree(src, fd, true, &wrote, &e) == 0);
	CHECK(wrote > 0 && wrote == lseek(fd, 0, SEEK_CUR));
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	dst = dir_fd("dst");
	CHECK(tar_read_tree(fd, dst, 1 << 20, &got, &e) == 0);
	CHECK(got == wrote);
	close(fd);
	close(src);
	close(dst);

	CHECK(lst("dst/app/index.js", &a) == 0 && S_ISREG(a.st_mode));
	CHECK(a.st_size == 15 && (a.st_mode & 0777) == 0640);
	CHECK(lst("dst/app/same.js", &b) == 0 && b.st_ino == a.st_ino);
	CHECK(a.st_nlink == 2);
	CHECK(lst("dst/app/to-index", &a) == 0 && S_ISLNK(a.st_mode));
	snprintf(p, sizeof(p), "%s/dst/app/escape", base);
	ssize_t n = readlink(p, ln, sizeof(ln) - 1);
	CHECK(n == 11 && memcmp(ln, "/etc/passwd", 11) == 0);
	CHECK(lst("dst/app/fifo", &a) < 0);
	CHECK(lst("dst/app/node_modules", &a) < 0);
	teardown();
}

static void
test_dotdot(void)
{
	const struct ent v[] = {{"../x", '0', NULL, "evil"}};

	setup();
	CHECK(read_into(v, 1, 1 << 20) == 400);
	CHECK(lst("x", &(struct stat){0}) < 0);
	teardown();
}

static void
test_inner_dotdot(void)
{
	const struct ent v[] = {{"a/../../y", '0', NULL, "evil"}};

	setup();
	CHECK(read_into(v, 1, 1 << 20) == 400);
	CHECK(lst("y", &(struct stat){0}) < 0);
	teardown();
}

static void
test_absolute(void)
{
	char name[128];
	struct ent v[] = {{name, '0', NULL, "evil"}};

	setup();
	snprintf(name, sizeof(name), "%s/abs", base);
	CHECK(read_into(v, 1, 1 << 20) == 400);
	CHECK(lst("abs", &(struct stat){0}) < 0);
	teardown();
}

static void
test_symlink_then_file(void)
{
	char target[128];
	struct ent v[] = {{"l", '2', target, NULL},
	                  {"l/evil", '0', NULL, "evil"}};

	setup();
	mk("outside");
	snprintf(target, sizeof(target), "%s/outside", base);
	CHECK(read_into(v, 2, 1 << 20) == 400);
	CHECK(lst("outside/evil", &(struct stat){0}) < 0);
	CHECK(lst("out/l", &(struct stat){0}) == 0); /* made, not followed */
	teardown();
}

static void
test_symlink_then_overwrite(void)
{
	char target[128];
	struct ent v[] = {{"l", '2', target, NULL}, {"l", '0', NULL, "evil"}};
	struct stat st;

	setup();
	put("victim", "safe");
	snprintf(target, sizeof(target), "%s/victim", base);
	CHECK(read_into(v, 2, 1 << 20) == 400);
	CHECK(lst("victim", &st) == 0 && st.st_size == 4);
	teardown();
}

static void
test_device(void)
{
	const struct ent v[] = {{"null", '3', NULL, NULL}};

	setup();
	CHECK(read_into(v, 1, 1 << 20) == 400);
	CHECK(lst("out/null", &(struct stat){0}) < 0);
	teardown();
}

static void
test_hardlink_out(void)
{
	const struct ent v[] = {{"h", '1', "../victim", NULL}};

	setup();
	put("victim", "safe");
	CHECK(read_into(v, 1, 1 << 20) == 400);
	CHECK(lst("out/h", &(struct stat){0}) < 0);
	teardown();
}

static void
test_too_large(void)
{
	const struct ent v[] = {{"a", '0', NULL, "aaaa"},
	                        {"b", '0', NULL, "bbbb"},
	                        {"c", '0', NULL, "cccc"}};

	setup();
	CHECK(read_into(v, 3, 1024) == 413);
	teardown();
	setup();
	CHECK(read_into(v, 3, 1 << 20) == 0);
	teardown();
}

static void
test_dot_prefix(void)
{
	const struct ent v[] = {{"./", '5', NULL, NULL},
	                        {"./d/", '5', NULL, NULL},
	                        {"./d/a", '0', NULL, "aaaa"},
	                        {"./d/h", '1', "./d/a", NULL}};
	struct stat a, h;

	setup();
	CHECK(read_into(v, 4, 1 << 20) == 0);
	CHECK(lst("out/d/a", &a) == 0 && a.st_size == 4);
	CHECK(lst("out/d/h", &h) == 0 && h.st_ino == a.st_ino);
	teardown();
}

static const struct unit_test tests[] = {
    {"round trip keeps links, leaves FIFOs and deps out", test_round_trip},
    {"\"../x\" refused", test_dotdot},
    {"\"a/../../y\" refused", test_inner_dotdot},
    {"an absolute name refused", test_absolute},
    {"a symlink then a file through it refused", test_symlink_then_file},
    {"a symlink then a file of its name refused", test_symlink_then_overwrite},
    {"a device refused", test_device},
    {"a hard link out of the tree refused", test_hardlink_out},
    {"past bytes_max: 413", test_too_large},
    {"a leading \"./\" (tar -C dir .) read as beneath", test_dot_prefix},
};

int
main(void)
{
	return UNIT_RUN("tar", tests);
}
