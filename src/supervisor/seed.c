/*
 * seed.c - the first boot of an app with a preset.
 *
 * Once per workspace: when .sandboxd/seeded is missing and SANDBOXD_PRESET
 * names a template, an empty workspace/app receives a copy of the
 * template; a non-empty one is left alone.  Either way the marker is then
 * written, so a user who later empties the app dir does not get the
 * template back.  A copy that fails leaves no marker: the next boot finds
 * the app dir non-empty (partly copied) or empty and decides again.
 *
 * The copy is `cp -a` as a child process, run from the main loop: the
 * control socket answers while a large template is copied, and run.conf is
 * applied only once the copy is done (the processes need the app's files).
 * Preset names are checked before they become a path.
 *
 * Rejected: copying in C (cp -a gets modes, links, times and special files
 * right; the supervisor need not); copying into a non-empty dir (that
 * would mix the template into the user's work).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "proc.h"
#include "seed.h"

#define SEED_CP "/bin/cp"

extern char **environ;

/* A name, not a path: [a-z0-9][a-z0-9._-]*, at most 64 bytes. */
static bool
seed_preset_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 64 || s[0] == '.' || s[0] == '-' || s[0] == '_')
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
		      s[i] == '_' || s[i] == '-'))
			return false;
	return true;
}

/* 1 empty, 0 not, -1 cannot tell (logged). */
static int
seed_dir_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int empty = 1;

	if (d == NULL) {
		log_msg("seeding: cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0) {
			empty = 0;
			break;
		}
	}
	closedir(d);
	return empty;
}

static void
seed_mark(const char *home)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/.sandboxd/seeded", home);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd == -1)
		log_msg("seeding: cannot create %s: %s", path, strerror(errno));
	else
		close(fd);
}

static pid_t
seed_copy(const char *from, const char *to)
{
	char src[PATH_MAX + 2], dst[PATH_MAX + 1], why[64];
	char *argv[] = {SEED_CP, "-a", src, dst, NULL};
	struct proc_spec s = {.argv = argv, .envp = environ, .out = -1};
	pid_t pid;

	snprintf(src, sizeof(src), "%s/.", from);
	snprintf(dst, sizeof(dst), "%s/", to);
	pid = proc_spawn(&s, why, sizeof(why));
	if (pid == -1)
		log_msg("seeding: cannot start %s: %s", why, strerror(errno));
	else
		log_msg("seeding %s from %s (pid %d)", to, from, (int)pid);
	return pid == -1 ? 0 : pid;
}

pid_t
seed_start(const char *home, const char *preset, const char *templates)
{
	char marker[PATH_MAX], app[PATH_MAX], tpl[PATH_MAX];
	struct stat st;
	int empty;

	if (preset == NULL || preset[0] == '\0')
		return 0;
	snprintf(marker, sizeof(marker), "%s/.sandboxd/seeded", home);
	if (lstat(marker, &st) == 0)
		return 0;
	if (!seed_preset_ok(preset)) {
		log_msg("seeding: bad preset name \"%.64s\"", preset);
		return 0;
	}
	snprintf(app, sizeof(app), "%s/workspace/app", home);
	empty = seed_dir_empty(app);
	if (empty == -1)
		return 0;
	if (empty == 0) {
		log_msg("seeding: %s is not empty; leaving it as it is", app);
		seed_mark(home);
		return 0;
	}
	snprintf(tpl, sizeof(tpl), "%s/%s", templates, preset);
	if (stat(tpl, &st) == -1 || !S_ISDIR(st.st_mode)) {
		log_msg("seeding: no template directory %s", tpl);
		return 0;
	}
	return seed_copy(tpl, app);
}

void
seed_finish(const char *home, int status)
{
	char what[96];

	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		log_msg("seeding done");
		seed_mark(home);
		return;
	}
	proc_describe(status, what, sizeof(what));
	log_msg("seeding failed: cp %s", what);
}
