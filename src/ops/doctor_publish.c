/*
 * The `releases` check of `sandboxd doctor` (doctor.h): the published
 * apps' releases under <data>/releases.  They are the daemon's own
 * (root's, 0700: a sandbox must never reach them), so a link there or
 * another owner is a failure; directories of apps that are gone (a
 * removal interrupted) are a warning that `sandboxd gc` fixes.  Looks
 * only: the database is read read-only, nothing is removed.
 */
#include "ops/doctor.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ops/gc.h"
#include "ws/usage.h"

static void
count_orphan(const struct gc_found *f, void *arg)
{
	(void)f;
	(*(int *)arg)++;
}

static void say(struct doctor_check *c, enum doctor_level l, const char *fix,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
say(struct doctor_check *c, enum doctor_level l, const char *fix,
    const char *fmt, ...)
{
	va_list ap;

	c->level = l;
	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	snprintf(c->fix, sizeof(c->fix), "%s", fix ? fix : "");
}

void
doctor_releases(const struct config *cfg, struct doctor_check *c)
{
	char dir[PATH_MAX];
	struct gc_result r = {0};
	struct stat st;
	int64_t bytes;
	int orphans = 0;

	snprintf(dir, sizeof(dir), "%s/releases", cfg->data_dir);
	if (lstat(dir, &st) < 0) {
		say(c, errno == ENOENT ? DOCTOR_OK : DOCTOR_WARN, NULL,
		    "%s: %s", dir,
		    errno == ENOENT ? "nothing published yet"
		                    : strerror(errno));
		return;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 0077) != 0) {
		say(c, DOCTOR_FAIL,
		    "the daemon makes it again at start once it is gone",
		    "%s is %s (owner %d, mode %04o): releases must be the "
		    "daemon's alone",
		    dir,
		    S_ISLNK(st.st_mode) ? "a symbolic link" : "not private",
		    (int)st.st_uid, (unsigned)(st.st_mode & 07777));
		snprintf(c->fix, sizeof(c->fix),
		         "chown root:root %s && chmod 0700 %s (a link: move "
		         "it away and restore the releases from a backup)",
		         dir, dir);
		return;
	}
	bytes = ws_usage_walk(dir, NULL);
	gc_releases(cfg, false, count_orphan, &orphans, &r);
	if (r.releases_unreadable) {
		say(c, DOCTOR_WARN, NULL,
		    "%s: %lld MiB; the database could not be read to tell "
		    "which apps they are of",
		    dir, (long long)((bytes > 0 ? bytes : 0) >> 20));
		return;
	}
	say(c, orphans ? DOCTOR_WARN : DOCTOR_OK,
	    orphans ? "`sandboxd gc --yes` removes them" : NULL,
	    "%s: %lld MiB; %d director%s of apps that are gone (%lld MiB)", dir,
	    (long long)((bytes > 0 ? bytes : 0) >> 20), orphans,
	    orphans == 1 ? "y" : "ies", (long long)(r.releases_bytes >> 20));
}
