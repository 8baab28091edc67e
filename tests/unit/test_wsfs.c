/*
 * Unit tests of workspace file access on a real temporary tree with the
 * tricks a hostile sandbox would play: symlinks to outside, symlinked
 * parents, "..", NUL, absolute paths.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ws/wsfs.h"
#include "unit.h"

static char root[64];

static int
setup(void)
{
	char p[128];

	snprintf(root, sizeof(root), "/tmp/sandboxd-wsfs-XXXXXX");
	if (mkdtemp(root) == NULL)
		return -1;
	snprintf(p, sizeof(p), "%s/app", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/secret", root);
	FILE *f = fopen(p, "w");
	fputs("outside", f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/app/up", root);
	symlink("..", p);
	snprintf(p, sizeof(p), "%s/app/leak", root);
	symlink("../secret", p);
	snprintf(p, sizeof(p), "%s/app/etc", root);
	symlink("/etc", p);
	return 0;
}

static void
clean_normalizes_and_refuses(void)
{
	char out[WSFS_MAX_PATH + 1];
	struct err e = {0};

	CHECK(wsfs_clean("./a//b/./c", 10, out, sizeof(out), false, &e) == 0);
	CHECK_STR(out, "a/b/c");
	CHECK(wsfs_clean("", 0, out, sizeof(out), true, &e) == 0);
	CHECK_STR(out, "");
	CHECK(wsfs_clean("", 0, out, sizeof(out), false, &e) == -1);
	CHECK(wsfs_clean("../x", 4, out, sizeof(out), false, &e) == -1);
	CHECK(wsfs_clean("a/..", 4, out, sizeof(out), false, &e) == -1);
	CHECK(wsfs_clean("/etc/passwd", 11, out, sizeof(out), false, &e) == -1);
	CHECK(wsfs_clean("a\0b", 3, out, sizeof(out), false, &e) == -1);
	CHECK(e.status == 400);
}

static void
symlinks_never_lead_outside(void)
{
	struct err e = {0};
	struct buf b;
	char p[128];
	int app;

	snprintf(p, sizeof(p), "%s/app", root);
	app = open(p, O_PATH | O_DIRECTORY);
	CHECK(app >= 0);
	CHECK(wsfs_read(app, "leak", 100, &b, &e) == -1);
	CHECK(e.status == 400);
	CHECK(wsfs_read(app, "up/secret", 100, &b, &e) == -1);
	CHECK(wsfs_read(app, "etc/hostname", 100, &b, &e) == -1);
	CHECK(wsfs_write(app, "up/secret", "x", 1, -1, -1, &e) == -1);
	CHECK(wsfs_write(app, "etc/evil", "x", 1, -1, -1, &e) == -1);
	CHECK(wsfs_write(app, "leak", "x", 1, -1, -1, &e) == -1);
	snprintf(p, sizeof(p), "%s/secret", root);

	/* the outside file is untouched */
	FILE *f = fopen(p, "r");
	char got[16] = "";
	CHECK(f && fgets(got, sizeof(got), f));
	if (f)
		fclose(f);
	CHECK_STR(got, "outside");
	close(app);
}

static void
write_read_list_remove(void)
{
	struct err e = {0};
	struct jv *list;
	bool trunc;
	struct buf b;
	char p[128];
	int app;

	snprintf(p, sizeof(p), "%s/app", root);
	app = open(p, O_PATH | O_DIRECTORY);
	CHECK(wsfs_write(app, "src/deep/x.txt", "hello", 5, -1, -1, &e) == 0);
	CHECK(wsfs_read(app, "src/deep/x.txt", 100, &b, &e) == 0);
	CHECK(b.len == 5 && memcmp(b.data, "hello", 5) == 0);
	buf_release(&b);
	CHECK(wsfs_read(app, "src/deep/x.txt", 3, &b, &e) == -1);
	CHECK(e.status == 413);
	CHECK(wsfs_list(app, "", true, &list, &trunc, &e) == 0);
	/* src, src/deep, src/deep/x.txt; the three symlinks are not listed */
	CHECK(jv_len(list) == 3);
	CHECK_STR(jv_str(jv_get(jv_at(list, 2), "path")), "src/deep/x.txt");
	jv_free(list);
	e.status = 0;
	CHECK(wsfs_remove(app, "src", false, &e) == -1);
	CHECK(e.status == 409);
	CHECK(wsfs_remove(app, "src", true, &e) == 0);
	CHECK(wsfs_remove(app, "leak", false, &e) == 0); /* the link only */
	snprintf(p, sizeof(p), "%s/secret", root);
	CHECK(access(p, F_OK) == 0);
	close(app);
}

struct seen {
	int calls;
	char first[16], last[16];
	bool poke; /* the first call changes the file, as a sandbox might */
	int app;
	int refuse_at; /* the call that refuses (0: none) */
};

static void
read_fd(int fd, char *out, size_t len)
{
	ssize_t n = fd >= 0 ? pread(fd, out, len - 1, 0) : -1;

	if (n < 0)
		snprintf(out, len, "(none)");
	else
		out[n] = '\0';
}

static int
check_seen(int fd, void *arg, struct err *e)
{
	struct seen *s = arg;

	s->calls++;
	read_fd(fd, s->calls == 1 ? s->first : s->last, sizeof(s->first));
	if (s->calls == 1 && s->poke) {
		char p[128];
		snprintf(p, sizeof(p), "%s/app/c.txt", root);
		FILE *f = fopen(p, "w"); /* in place: same inode */
		fputs("sandbox wrote", f);
		fclose(f);
	}
	if (s->calls == s->refuse_at)
		return err_set(e, 412, "precondition_failed", "refused");
	return 0;
}

static void
slurp(const char *rel, char *out, size_t len)
{
	char p[128];
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), "%s/app/%s", root, rel);
	f = fopen(p, "r");
	n = f ? fread(out, 1, len - 1, f) : 0;
	out[n] = '\0';
	if (f)
		fclose(f);
}

static void
conditional_writes(void)
{
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	struct seen s = {0};
	struct wsfs_cond c = {.mu = &mu, .check = check_seen, .arg = &s};
	struct err e = {0};
	char p[128], got[32];
	int app;

	snprintf(p, sizeof(p), "%s/app/lnk", root);
	symlink("../secret", p);
	snprintf(p, sizeof(p), "%s/app", root);
	app = open(p, O_PATH | O_DIRECTORY);
	/* absent: the check sees no file */
	CHECK(wsfs_write_cond(app, "c.txt", "one", 3, -1, -1, &c, &e) == 0);
	CHECK(s.calls == 1);
	CHECK_STR(s.first, "(none)");
	/* present: the check sees the current bytes */
	s = (struct seen){0};
	CHECK(wsfs_write_cond(app, "c.txt", "two", 3, -1, -1, &c, &e) == 0);
	CHECK_STR(s.first, "one");
	slurp("c.txt", got, sizeof(got));
	CHECK_STR(got, "two");
	/* refused: nothing is written, no temporary file is left */
	s = (struct seen){.refuse_at = 1};
	CHECK(wsfs_write_cond(app, "c.txt", "three", 5, -1, -1, &c, &e) == -1);
	CHECK(e.status == 412);
	slurp("c.txt", got, sizeof(got));
	CHECK_STR(got, "two");
	/* changed during the check: checked again, with the new bytes */
	e = (struct err){0};
	s = (struct seen){.poke = true, .refuse_at = 2};
	CHECK(wsfs_write_cond(app, "c.txt", "four", 4, -1, -1, &c, &e) == -1);
	CHECK(s.calls == 2 && e.status == 412);
	CHECK_STR(s.last, "sandbox wrote");
	slurp("c.txt", got, sizeof(got));
	CHECK_STR(got, "sandbox wrote");
	/* create only: an existing file is given to the check, never
	 * replaced; without a check it is a 409 */
	e = (struct err){0};
	s = (struct seen){0};
	c.create_only = true;
	c.check = NULL;
	CHECK(wsfs_write_cond(app, "c.txt", "five", 4, -1, -1, &c, &e) == -1);
	CHECK(e.status == 409);
	slurp("c.txt", got, sizeof(got));
	CHECK_STR(got, "sandbox wrote");
	e = (struct err){0};
	CHECK(wsfs_write_cond(app, "new.txt", "six", 3, -1, -1, &c, &e) == 0);
	slurp("new.txt", got, sizeof(got));
	CHECK_STR(got, "six");
	/* a symlink is never written through */
	c.check = check_seen;
	c.create_only = false;
	e = (struct err){0};
	CHECK(wsfs_write_cond(app, "lnk", "x", 1, -1, -1, &c, &e) == -1);
	CHECK(e.status == 400);
	slurp("../secret", got, sizeof(got));
	CHECK_STR(got, "outside");
	snprintf(p, sizeof(p), "%s/app", root);
	{
		DIR *d = opendir(p);
		struct dirent *de;
		bool tmp = false;
		while (d && (de = readdir(d)) != NULL)
			tmp |= strstr(de->d_name, ".tmp") != NULL;
		if (d)
			closedir(d);
		CHECK(!tmp);
	}
	wsfs_remove(app, "c.txt", false, &e);
	wsfs_remove(app, "new.txt", false, &e);
	close(app);
}

static void
moves(void)
{
	struct err e = {0};
	char p[128], got[32];
	int app;

	snprintf(p, sizeof(p), "%s/app", root);
	app = open(p, O_PATH | O_DIRECTORY);
	CHECK(wsfs_write(app, "m/a.txt", "a", 1, -1, -1, &e) == 0);
	CHECK(wsfs_write(app, "b.txt", "b", 1, -1, -1, &e) == 0);
	CHECK(wsfs_move(app, "m/a.txt", "n/o/a2.txt", -1, -1, &e) == 0);
	slurp("n/o/a2.txt", got, sizeof(got));
	CHECK_STR(got, "a");
	CHECK(wsfs_move(app, "m/a.txt", "x.txt", -1, -1, &e) == -1);
	CHECK(e.status == 404);
	e = (struct err){0};
	CHECK(wsfs_move(app, "b.txt", "n/o/a2.txt", -1, -1, &e) == -1);
	CHECK(e.status == 409);
	slurp("n/o/a2.txt", got, sizeof(got));
	CHECK_STR(got, "a");
	e = (struct err){0};
	CHECK(wsfs_move(app, "n", "m/n", -1, -1, &e) == 0); /* a directory */
	slurp("m/n/o/a2.txt", got, sizeof(got));
	CHECK_STR(got, "a");
	CHECK(wsfs_move(app, "m", "m/n/o/m", -1, -1, &e) == -1);
	CHECK(e.status == 400);
	e = (struct err){0};
	CHECK(wsfs_move(app, "lnk", "lnk2", -1, -1, &e) == -1); /* a link */
	CHECK(e.status == 400);
	e = (struct err){0};
	CHECK(wsfs_move(app, "b.txt", "up/b.txt", -1, -1, &e) == -1);
	CHECK(e.status == 400);
	e = (struct err){0};
	CHECK(wsfs_move(app, "b.txt", "etc/passwd2", -1, -1, &e) == -1);
	CHECK(e.status == 400);
	snprintf(p, sizeof(p), "%s/b.txt", root);
	CHECK(access(p, F_OK) != 0);
	CHECK(access("/etc/passwd2", F_OK) != 0);
	wsfs_remove(app, "m", true, &e);
	wsfs_remove(app, "b.txt", false, &e);
	close(app);
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What a sandbox can plant where the daemon reads a file: each read
 * fails at once with a clear error, none blocks (alarm turns a block
 * into a failed run instead of a hung one). */
static void
hostile_files_are_refused_at_once(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct err e = {0};
	struct buf b;
	char p[160];
	int app, fd, s;
	int64_t t0;

	snprintf(p, sizeof(p), "%s/app", root);
	app = open(p, O_PATH | O_DIRECTORY);
	snprintf(p, sizeof(p), "%s/app/fifo", root);
	CHECK(mkfifo(p, 0644) == 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/app/sock", root);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	snprintf(p, sizeof(p), "%s/app/dir", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/app/huge", root);
	fd = open(p, O_WRONLY | O_CREAT, 0644);
	CHECK(ftruncate(fd, (off_t)1 << 40) == 0); /* sparse: 1 TiB */
	close(fd);

	alarm(10);
	t0 = now_ms();
	CHECK(wsfs_read(app, "fifo", 100, &b, &e) == -1);
	CHECK(e.status == 400 && strstr(e.msg, "not a regular file"));
	e.status = 0;
	CHECK(wsfs_read(app, "sock", 100, &b, &e) == -1 && e.status == 400);
	e.status = 0;
	CHECK(wsfs_read(app, "dir", 100, &b, &e) == -1 && e.status == 400);
	e.status = 0;
	CHECK(wsfs_read(app, "leak", 100, &b, &e) == -1 && e.status == 400);
	e.status = 0;
	CHECK(wsfs_read(app, "huge", 1u << 20, &b, &e) == -1);
	CHECK(e.status == 413);
	e.status = 0;
	CHECK(wsfs_read(app, "nothing", 100, &b, &e) == -1 && e.status == 404);
	fd = wsfs_open_file(app, "fifo", &e);
	CHECK(fd == -1);
	CHECK(now_ms() - t0 < 1000);
	alarm(0);

	unlink(sa.sun_path);
	close(s);
	snprintf(p, sizeof(p), "%s/app/fifo", root);
	unlink(p);
	snprintf(p, sizeof(p), "%s/app/huge", root);
	unlink(p);
	snprintf(p, sizeof(p), "%s/app/dir", root);
	rmdir(p);
	close(app);
}

/* A read that takes longer than its budget is abandoned (a budget of 0
 * stands in for a slow file: the check comes after each chunk). */
static void
slow_reads_stop_at_the_deadline(void)
{
	static char big[256 << 10];
	struct err e = {0};
	struct buf b;
	char p[128];
	int app;

	snprintf(p, sizeof(p), "%s/app", root);
	app = open(p, O_PATH | O_DIRECTORY);
	memset(big, 'x', sizeof(big));
	CHECK(wsfs_write(app, "big", big, sizeof(big), -1, -1, &e) == 0);
	CHECK(wsfs_read_within(app, "big", sizeof(big), 0, &b, &e) == -1);
	CHECK(e.status == 502 && strstr(e.msg, "took more than"));
	CHECK(b.data == NULL);
	e.status = 0;
	CHECK(wsfs_read_within(app, "big", sizeof(big), 5000, &b, &e) == 0);
	CHECK(b.len == sizeof(big));
	buf_release(&b);
	CHECK(wsfs_remove(app, "big", false, &e) == 0);
	close(app);
}

static void
secret_files_are_owner_only(void)
{
	struct err e = {0};
	struct stat st;
	char p[160];
	int app;

	snprintf(p, sizeof(p), "%s/app", root);
	app = open(p, O_PATH | O_DIRECTORY);
	CHECK(wsfs_write_secret(app, "sec/env", "TOKEN=x", 7, -1, -1, &e) == 0);
	CHECK(wsfs_write(app, "sec/plain", "x", 1, -1, -1, &e) == 0);
	snprintf(p, sizeof(p), "%s/app/sec/env", root);
	CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0600);
	snprintf(p, sizeof(p), "%s/app/sec/plain", root);
	CHECK(stat(p, &st) == 0 && (st.st_mode & 0077) != 0);
	close(app);
}

static const struct unit_test tests[] = {
    {"hostile files are refused at once", hostile_files_are_refused_at_once},
    {"slow reads stop at the deadline", slow_reads_stop_at_the_deadline},
    {"clean normalizes and refuses", clean_normalizes_and_refuses},
    {"symlinks never lead outside", symlinks_never_lead_outside},
    {"write, read, list, remove", write_read_list_remove},
    {"conditional writes check the file as it is at the rename",
     conditional_writes},
    {"moves stay inside and never replace", moves},
    {"files that carry a credential are 0600", secret_files_are_owner_only},
};

int
main(void)
{
	int rc;

	if (setup() < 0)
		return 1;
	rc = UNIT_RUN("wsfs", tests);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "%s", root);
	/* tidy up: remove_tree-like cleanup via the module itself */
	int fd = open("/tmp", O_PATH | O_DIRECTORY);
	struct err e = {0};
	wsfs_remove(fd, strrchr(cmd, '/') + 1, true, &e);
	close(fd);
	return rc;
}
