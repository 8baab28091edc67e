/*
 * seed.c - the first boot of an app with a preset.
 *
 * Once per workspace, at the first boot (no .sandboxd/seeded yet): when
 * SANDBOXD_PRESET names a template and workspace/app is empty, the app dir
 * receives a copy of the template; a non-empty one is left alone.  A lone
 * .git counts as empty: an app imported from a repository without commits
 * gets its preset's template next to the repository.  Then
 * the marker is written in every case (no preset, no such template, a
 * non-empty dir), so a user who later empties the app dir does not get the
 * template back, and the control plane, which waits for the marker before
 * it writes run.conf, knows the first boot is done.  Only a copy that
 * fails leaves no marker: the next boot decides again.
 *
 * The copy is `cp -a` as a child process reaped by the main loop, so
 * signals are still handled while a large template is copied; the control
 * socket is opened and run.conf applied once it is done (the processes
 * need the app's files).  Preset names are checked before they become a
 * path.
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

/* 1 empty (or only .git), 0 not, -1 cannot tell (logged). */
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
		    strcmp(de->d_name, "..") != 0 &&
		    strcmp(de->d_name, ".git") != 0) {
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
	struct proc_spec s = {
	    .argv = argv, .envp = environ, .out = -1, .err = -1};
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

	snprintf(marker, sizeof(marker), "%s/.sandboxd/seeded", home);
	if (lstat(marker, &st) == 0)
		return 0;
	snprintf(app, sizeof(app), "%s/workspace/app", home);
	empty = seed_dir_empty(app);
	if (empty == -1)
		return 0;
	if (preset == NULL || preset[0] == '\0' || empty == 0) {
		if (empty == 0)
			log_msg("seeding: %s is not empty; left as it is", app);
		seed_mark(home);
		return 0;
	}
	snprintf(tpl, sizeof(tpl), "%s/%s", templates, preset);
	if (!seed_preset_ok(preset) || stat(tpl, &st) == -1 ||
	    !S_ISDIR(st.st_mode)) {
		log_msg("seeding: no template \"%.64s\" in %s", preset,
		        templates);
		seed_mark(home);
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
