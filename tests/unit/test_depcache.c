/*
 * Unit tests of the dependency cache (depcache/depcache.h) on real
 * directories: a workspace's trees saved (store entries linked, dot
 * files copied, symlinks kept as symlinks, modes kept, a monorepo's
 * node_modules found, the Python user site too) and seeded into
 * another (the links again, the rest the workspace user's without
 * setuid, the key file written); what a hostile workspace plants (a
 * symlink to /etc, a FIFO, a directory symlinked outside, a tree too
 * deep) neither followed nor copied; the bounds; eviction, gc and the
 * watcher.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "depcache/depcache.h"
#include "lib/clock.h"
#include "vault/vault.h"
#include "unit.h"

static char root[64];
static struct config cfg;

#define KEY1   "1111111111111111111111111111111111111111111111111111111111111111"
#define KEY2   "2222222222222222222222222222222222222222222222222222222222222222"
#define KEY3   "3333333333333333333333333333333333333333333333333333333333333333"
#define KEY4   "4444444444444444444444444444444444444444444444444444444444444444"
#define WS_A   "data/workspaces/AAAAAAAAAAAAAAAAAAAAAAAAAA"
#define WS_B   "data/workspaces/BBBBBBBBBBBBBBBBBBBBBBBBBB"
#define WS_C   "data/workspaces/CCCCCCCCCCCCCCCCCCCCCCCCCC"
#define WS_D   "data/workspaces/DDDDDDDDDDDDDDDDDDDDDDDDDD"
#define WS_E   "data/workspaces/EEEEEEEEEEEEEEEEEEEEEEEEEE"
#define ENTRY1 "data/depcache/" KEY1

static const char *
at(const char *rel)
{
	static char p[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", root, rel);
	return p[i];
}

static void
mkparents(const char *rel)
{
	char p[512], dir[512];

	snprintf(p, sizeof(p), "%s", at(rel));
	for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')) != NULL;
	     s++) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(s - p), p);
		mkdir(dir, 0755);
	}
}

static void
put_n(const char *rel, char c, size_t n, mode_t mode)
{
	FILE *f;

	mkparents(rel);
	f = fopen(at(rel), "w");
	if (f) {
		for (size_t i = 0; i < n; i++)
			fputc(c, f);
		fclose(f);
	}
	chmod(at(rel), mode);
}

static void
put(const char *rel, const char *text, mode_t mode)
{
	FILE *f;

	mkparents(rel);
	f = fopen(at(rel), "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	chmod(at(rel), mode);
}

static struct stat
st_of(const char *rel)
{
	struct stat st = {0};

	if (lstat(at(rel), &st) < 0)
		st.st_ino = 0;
	return st;
}

static bool
exists(const char *rel)
{
	struct stat st;

	return lstat(at(rel), &st) == 0;
}

static const char *
text_of(const char *rel, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(at(rel), O_RDONLY);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static bool
no_tmp(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "ls -a '%s' | grep -q '^\\.tmp-'",
	         at("data/depcache"));
	return system(cmd) != 0;
}

/* A workspace as an npm install in a monorepo and pip install --user
 * leave it, plus what a hostile sandbox plants. */
static void
make_ws_a(void)
{
	char target[512];

	put_n(WS_A "/workspace/app/node_modules/x/index.js", 'x', 100000, 0644);
	put(WS_A "/workspace/app/node_modules/x/package.json",
	    "{\"name\":\"x\"}", 0644);
	put(WS_A "/workspace/app/node_modules/x/cli.js",
	    "#!/usr/bin/env node\n", 0755);
	put(WS_A "/workspace/app/node_modules/x/node_modules/z/z.js", "z",
	    0644);
	put(WS_A "/workspace/app/node_modules/.package-lock.json", "{}", 0640);
	put(WS_A "/workspace/app/node_modules/.suid", "s", 04755);
	mkdir(at(WS_A "/workspace/app/node_modules/.bin"), 0755);
	symlink("../x/cli.js", at(WS_A "/workspace/app/node_modules/.bin/x"));
	symlink("/etc", at(WS_A "/workspace/app/node_modules/etc"));
	mkfifo(at(WS_A "/workspace/app/node_modules/fifo"), 0644);
	put(WS_A "/workspace/app/package.json", "{}", 0644);
	put(WS_A "/workspace/app/packages/web/node_modules/y/y.js", "y", 0644);
	put(WS_A "/workspace/app/a/b/c/d/node_modules/deep.js", "d", 0644);
	put(WS_A "/workspace/app/.git/node_modules/g.js", "g", 0644);
	put(WS_A "/workspace/app/src/main.js", "main", 0644);
	put("outside/node_modules/secret", "secret", 0600);
	snprintf(target, sizeof(target), "%s", at("outside"));
	symlink(target, at(WS_A "/workspace/app/link"));
	put(WS_A "/.local/lib/python3.12/site-packages/pkg/__init__.py", "p",
	    0644);
	put(WS_A "/.local/bin/tool", "#!/bin/sh\n", 0755);
}

static void
save_and_seed(void)
{
	struct depcache_stats st;
	struct stat a, e, b;
	char buf[128];

	make_ws_a();
	CHECK(depcache_save(&cfg, NULL, at(WS_A), KEY1, &st) == 1);
	CHECK(st.trees == 4);
	CHECK(no_tmp());
	/* The big file is a store entry, linked, not copied. */
	a = st_of(WS_A "/workspace/app/node_modules/x/index.js");
	e = st_of(ENTRY1 "/workspace/app/node_modules/x/index.js");
	CHECK(a.st_ino != 0 && a.st_ino == e.st_ino && a.st_uid == 0);
	CHECK((a.st_mode & 07777) == 0444 && a.st_nlink >= 3);
	CHECK(st_of(ENTRY1 "/workspace/app/node_modules/x/cli.js").st_mode &
	      0100);
	/* Dot files copied with their mode; symlinks kept, not followed. */
	e = st_of(ENTRY1 "/workspace/app/node_modules/.package-lock.json");
	CHECK(e.st_ino != 0 &&
	      e.st_ino !=
	          st_of(WS_A "/workspace/app/node_modules/.package-lock.json")
	              .st_ino);
	CHECK((e.st_mode & 07777) == 0640);
	CHECK(S_ISLNK(
	    st_of(ENTRY1 "/workspace/app/node_modules/.bin/x").st_mode));
	CHECK(S_ISLNK(st_of(ENTRY1 "/workspace/app/node_modules/etc").st_mode));
	CHECK(!exists(ENTRY1 "/workspace/app/node_modules/fifo"));
	CHECK(
	    exists(ENTRY1 "/workspace/app/node_modules/x/node_modules/z/z.js"));
	/* A monorepo's package; not too deep, not .git, not a link out. */
	CHECK(exists(ENTRY1 "/workspace/app/packages/web/node_modules/y/y.js"));
	CHECK(!exists(ENTRY1 "/workspace/app/a"));
	CHECK(!exists(ENTRY1 "/workspace/app/.git"));
	CHECK(!exists(ENTRY1 "/workspace/app/link"));
	CHECK(!exists(ENTRY1 "/workspace/app/src"));
	CHECK(exists(ENTRY1 "/.local/lib/python3.12/site-packages/pkg"));
	CHECK(exists(ENTRY1 "/.local/bin/tool"));
	/* The key is taken: a second save does nothing. */
	CHECK(depcache_save(&cfg, NULL, at(WS_A), KEY1, &st) == 0);

	put(WS_B "/workspace/app/package.json", "{}", 0644);
	chown(at(WS_B "/workspace/app"), 1000, 1000);
	CHECK(depcache_seed(&cfg, at(WS_B), KEY1, &st) == 1);
	b = st_of(WS_B "/workspace/app/node_modules/x/index.js");
	CHECK(b.st_ino == a.st_ino && b.st_uid == 0);
	b = st_of(WS_B "/workspace/app/node_modules/.package-lock.json");
	CHECK(b.st_uid == 1000 && b.st_gid == 1000 &&
	      (b.st_mode & 07777) == 0640);
	CHECK((st_of(WS_B "/workspace/app/node_modules/.suid").st_mode &
	       07777) == 0755);
	CHECK(st_of(WS_B "/workspace/app/node_modules").st_uid == 1000);
	CHECK(
	    S_ISLNK(st_of(WS_B "/workspace/app/node_modules/.bin/x").st_mode));
	CHECK(exists(WS_B "/workspace/app/packages/web/node_modules/y/y.js"));
	CHECK(st_of(WS_B "/workspace/app/packages").st_uid == 1000);
	CHECK(st_of(WS_B "/.local/lib/python3.12").st_uid == 1000);
	CHECK(exists(WS_B "/.local/bin/tool"));
	CHECK_STR(text_of(WS_B "/.sandboxd/install.key", buf, sizeof(buf)),
	          KEY1 "\n");
	CHECK(st_of(WS_B "/.sandboxd/install.key").st_uid == 1000);
	/* No entry, a bad key: nothing. */
	CHECK(depcache_seed(&cfg, at(WS_B), KEY2, &st) == 0);
	CHECK(depcache_seed(&cfg, at(WS_B), "../../etc", &st) == 0);
	CHECK(depcache_save(&cfg, NULL, at(WS_B), "/etc", &st) == 0);
}

static void
seed_refused(void)
{
	struct depcache_stats st;
	char target[512];

	/* The workspace has its own node_modules: left alone. */
	put(WS_C "/workspace/app/node_modules/mine.js", "mine", 0644);
	CHECK(depcache_seed(&cfg, at(WS_C), KEY1, &st) == 0);
	CHECK(!exists(WS_C "/workspace/app/node_modules/x"));
	CHECK(!exists(WS_C "/.sandboxd/install.key"));
	/* A parent symlinked outside: nothing written through it. */
	mkdir(at("outside2"), 0755);
	mkdir(at(WS_D), 0755);
	mkdir(at(WS_D "/workspace"), 0755);
	mkdir(at(WS_D "/workspace/app"), 0755);
	snprintf(target, sizeof(target), "%s", at("outside2"));
	symlink(target, at(WS_D "/workspace/app/packages"));
	CHECK(depcache_seed(&cfg, at(WS_D), KEY1, &st) == 0);
	CHECK(!exists("outside2/web"));
	CHECK(!exists(WS_D "/workspace/app/node_modules"));
}

static void
bounds(void)
{
	struct depcache_stats st;
	struct config small = cfg;
	char rel[512];

	/* More copied bytes than the cap: not cached, nothing left. */
	small.depcache_max_mb = 1;
	put_n(WS_C "/workspace/app/node_modules/.big", 'b', 2 << 20, 0644);
	CHECK(depcache_save(&small, NULL, at(WS_C), KEY2, &st) == 0);
	CHECK(!exists("data/depcache/" KEY2));
	CHECK(no_tmp());
	/* A tree deeper than the copy goes: the same. */
	snprintf(rel, sizeof(rel), WS_D "/workspace/app/node_modules");
	mkdir(at(rel), 0755);
	for (int i = 0; i < 70 && strlen(rel) < 400; i++) {
		strcat(rel, "/d");
		mkdir(at(rel), 0755);
	}
	CHECK(depcache_save(&cfg, NULL, at(WS_D), KEY3, &st) == 0);
	CHECK(!exists("data/depcache/" KEY3));
	CHECK(no_tmp());
	/* Off: SANDBOXD_DEDUP=false, or a cap of 0. */
	small.depcache_max_mb = 0;
	CHECK(depcache_save(&small, NULL, at(WS_A), KEY4, &st) == 0);
	small = cfg;
	small.dedup = false;
	CHECK(depcache_save(&small, NULL, at(WS_A), KEY4, &st) == 0);
	CHECK(depcache_seed(&small, at(WS_C), KEY1, &st) == 0);
	CHECK(!exists("data/depcache/" KEY4));
}

static void
age(const char *rel, time_t secs_ago)
{
	struct timespec ts[2] = {{.tv_sec = time(NULL) - secs_ago},
	                         {.tv_sec = time(NULL) - secs_ago}};

	utimensat(AT_FDCWD, at(rel), ts, 0);
}

static void
evict_and_gc(void)
{
	struct depcache_stats st;
	int64_t bytes;
	int n;

	put(WS_E "/workspace/app/node_modules/.lock", "l", 0644);
	CHECK(depcache_save(&cfg, NULL, at(WS_E), KEY4, &st) == 1);
	age(ENTRY1, 40 * 86400);
	/* Over a cap of 1 byte: the oldest goes, the kept one stays. */
	CHECK(depcache_evict(at("data"), 1, KEY4) == 1);
	CHECK(!exists(ENTRY1) && exists("data/depcache/" KEY4));

	age("data/depcache/" KEY4, 40 * 86400);
	mkdir(at("data/depcache/.tmp-1-2-3"), 0700);
	age("data/depcache/.tmp-1-2-3", 7200);
	mkdir(at("data/depcache/.tmp-young"), 0700);
	CHECK(depcache_gc(at("data"), 30, false, &n, &bytes) == 0);
	CHECK(n == 2);
	CHECK(exists("data/depcache/" KEY4));
	CHECK(depcache_gc(at("data"), 30, true, &n, &bytes) == 0 && n == 2);
	CHECK(!exists("data/depcache/" KEY4));
	CHECK(!exists("data/depcache/.tmp-1-2-3"));
	CHECK(exists("data/depcache/.tmp-young"));
}

static void
watcher(void)
{
	struct depcache *dc = depcache_new(&cfg, NULL);
	int64_t end;

	CHECK(dc != NULL && depcache_start(dc) == 0);
	depcache_watch(dc, "EEEEEEEEEEEEEEEEEEEEEEEEEE", KEY3, 30);
	depcache_watch(dc, "not-an-id", KEY3, 30);
	depcache_watch(dc, "EEEEEEEEEEEEEEEEEEEEEEEEEE", "bad", 30);
	CHECK(depcache_watching(dc) == 1);
	/* The supervisor writes the key after the install. */
	put(WS_E "/.sandboxd/install.key", KEY3 "\n", 0644);
	end = clock_now_ms() + 10000;
	while (depcache_watching(dc) > 0 && clock_now_ms() < end)
		usleep(50000);
	CHECK(depcache_watching(dc) == 0);
	CHECK(
	    exists("data/depcache/" KEY3 "/workspace/app/node_modules/.lock"));
	/* An install that never ends: dropped at its deadline. */
	depcache_watch(dc, "DDDDDDDDDDDDDDDDDDDDDDDDDD", KEY2, -59);
	end = clock_now_ms() + 10000;
	while (depcache_watching(dc) > 0 && clock_now_ms() < end)
		usleep(50000);
	CHECK(depcache_watching(dc) == 0);
	CHECK(!exists("data/depcache/" KEY2));
	depcache_free(dc);
}

static void
keys(void)
{
	CHECK(depcache_key_ok(KEY1));
	CHECK(!depcache_key_ok(""));
	CHECK(!depcache_key_ok("111"));
	CHECK(!depcache_key_ok(KEY1 "1"));
	CHECK(!depcache_key_ok("../111111111111111111111111111111111111111111"
	                       "1111111111111111111111"));
	CHECK(!depcache_key_ok("A111111111111111111111111111111111111111111111"
	                       "111111111111111111"));
}

static const struct unit_test tests[] = {
    {"a key is 64 lowercase hex digits", keys},
    {"a workspace's trees are saved and seeded into another", save_and_seed},
    {"a workspace with its own trees or a parent symlinked out is not "
     "seeded",
     seed_refused},
    {"a tree past a bound, or the cache off: nothing cached", bounds},
    {"eviction takes the least recently used; gc the old and stale",
     evict_and_gc},
    {"the watcher saves once the install wrote its key", watcher},
};

int
main(void)
{
	char cmd[128];
	int rc;

	snprintf(root, sizeof(root), "/tmp/sandboxd-depcache-XXXXXX");
	if (vault_init() < 0 || mkdtemp(root) == NULL)
		return 1;
	snprintf(cfg.data_dir, sizeof(cfg.data_dir), "%s/data", root);
	cfg.dedup = true;
	cfg.depcache_max_mb = 4096;
	mkdir(at("data"), 0700);
	mkdir(at("data/workspaces"), 0700);
	rc = UNIT_RUN("depcache", tests);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
