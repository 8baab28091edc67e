/*
 * A workspace's dependency trees, and an entry's list of them
 * (trees.h).  The walk for node_modules goes at most
 * TREES_SCAN_DEPTH directories down from workspace/app/ and into at most
 * TREES_SCAN_DIRS directories, never into .git, .sandboxd or a
 * node_modules (a dependency's own node_modules is part of its tree).
 */
#include "depcache/trees.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/log.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

struct scan {
	struct depcache_trees *t;
	dev_t dev;
	int dirs;
	bool full;
};

static int
add(struct scan *s, const char *rel)
{
	if (s->t->rel == NULL) {
		s->t->rel = calloc(TREES_MAX, TREES_REL_MAX);
		if (s->t->rel == NULL)
			return -1;
	}
	if (s->t->n >= TREES_MAX || strlen(rel) >= TREES_REL_MAX) {
		s->full = true;
		return 0;
	}
	snprintf(s->t->rel[s->t->n++], TREES_REL_MAX, "%s", rel);
	return 0;
}

/* A subdirectory of fd we may enter: a directory on our filesystem. */
static int
open_sub(const struct scan *s, int fd, const char *name)
{
	struct stat st;
	int sub;

	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISDIR(st.st_mode) || st.st_dev != s->dev)
		return -1;
	sub = openat(fd, name, DIR_FLAGS);
	if (sub >= 0 && (fstat(sub, &st) < 0 || st.st_dev != s->dev)) {
		close(sub);
		return -1;
	}
	return sub;
}

/* fd (owned here) is rel, depth directories below workspace/app/. */
static int
scan_dir(struct scan *s, int fd, const char *rel, int depth)
{
	char sub[TREES_REL_MAX];
	struct dirent *de;
	DIR *d = fdopendir(fd);
	int rc = 0;

	if (d == NULL) {
		close(fd);
		return 0;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		const char *n = de->d_name;
		if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0 ||
		    strcmp(n, ".git") == 0 || strcmp(n, ".sandboxd") == 0 ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", rel, n) >=
		    sizeof(sub))
			continue;
		if (strcmp(n, "node_modules") == 0) {
			int c = open_sub(s, dirfd(d), n);
			if (c >= 0) {
				close(c);
				rc = add(s, sub);
			}
			continue;
		}
		if (depth + 1 >= TREES_SCAN_DEPTH ||
		    ++s->dirs > TREES_SCAN_DIRS)
			continue;
		int c = open_sub(s, dirfd(d), n);
		if (c >= 0)
			rc = scan_dir(s, c, sub, depth + 1);
	}
	closedir(d);
	return rc;
}

/* .local/lib/python3*, each one's site-packages, and .local/bin. */
static int
scan_python(struct scan *s, int wsfd)
{
	char rel[TREES_REL_MAX];
	struct dirent *de;
	int local, lib, c, rc = 0;
	DIR *d;

	local = open_sub(s, wsfd, ".local");
	if (local < 0)
		return 0;
	lib = open_sub(s, local, "lib");
	if (lib >= 0 && (d = fdopendir(lib)) != NULL) {
		while (rc == 0 && (de = readdir(d)) != NULL) {
			if (strncmp(de->d_name, "python3", 7) != 0)
				continue;
			int py = open_sub(s, dirfd(d), de->d_name);
			if (py < 0)
				continue;
			c = open_sub(s, py, "site-packages");
			close(py);
			if (c < 0)
				continue;
			close(c);
			snprintf(rel, sizeof(rel),
			         ".local/lib/%.64s/site-packages", de->d_name);
			rc = add(s, rel);
		}
		closedir(d);
	} else if (lib >= 0) {
		close(lib);
	}
	if (rc == 0 && (c = open_sub(s, local, "bin")) >= 0) {
		close(c);
		rc = add(s, ".local/bin");
	}
	close(local);
	return rc;
}

int
trees_find(int wsfd, struct depcache_trees *t)
{
	struct scan s = {.t = t};
	struct stat st;
	int wsd, app;

	if (fstat(wsfd, &st) < 0)
		return -1;
	s.dev = st.st_dev;
	wsd = open_sub(&s, wsfd, "workspace");
	app = wsd >= 0 ? open_sub(&s, wsd, "app") : -1;
	if (wsd >= 0)
		close(wsd);
	if (app >= 0 && scan_dir(&s, app, "workspace/app", 0) < 0)
		return -1;
	if (scan_python(&s, wsfd) < 0)
		return -1;
	if (s.full)
		log_warn("depcache: more than %d dependency trees (or a path "
		         "too long): some are left out",
		         TREES_MAX);
	return 0;
}

/* A tree's path as we write it: relative, no "." or ".." component,
 * no empty one, at least two components. */
static bool
rel_ok(const char *rel)
{
	const char *p = rel;

	if (rel[0] == '\0' || rel[0] == '/' || strchr(rel, '/') == NULL)
		return false;
	while (*p != '\0') {
		size_t n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		if (*p == '/')
			p++;
		else
			break;
	}
	return p[-1] != '/';
}

static ssize_t
read_list(int dirfd, const char *name, char *buf, size_t len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n, got = 0;

	if (fd < 0)
		return -1;
	while ((size_t)got < len - 1 &&
	       (n = read(fd, buf + got, len - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return got;
}

int
trees_read(int entryfd, struct depcache_trees *t)
{
	struct scan s = {.t = t};
	char *buf = malloc(TREES_FILE_MAX), *line, *save = NULL;
	int rc = 0;

	if (buf == NULL ||
	    read_list(entryfd, TREES_FILE, buf, TREES_FILE_MAX) < 0) {
		free(buf);
		return -1;
	}
	for (line = strtok_r(buf, "\n", &save); rc == 0 && line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "own_bytes ", 10) == 0)
			continue;
		if (!rel_ok(line)) {
			rc = -1;
			break;
		}
		rc = add(&s, line);
	}
	free(buf);
	return rc == 0 && t->n > 0 ? 0 : -1;
}

int64_t
trees_own_bytes(int rootfd, const char *name)
{
	char path[128], buf[64];
	long long v = 0;

	snprintf(path, sizeof(path), "%s/" TREES_FILE, name);
	if (read_list(rootfd, path, buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "own_bytes %lld", &v) != 1 || v < 0)
		return 0;
	return v;
}

void
trees_release(struct depcache_trees *t)
{
	free(t->rel);
	t->rel = NULL;
	t->n = 0;
}

int
trees_open_parent(int base, const char *rel, bool make, int uid, int gid)
{
	char comp[TREES_REL_MAX];
	const char *p = rel, *slash;
	struct stat bst, st;
	int fd = dup(base);

	if (fd < 0 || fstat(base, &bst) < 0)
		goto fail;
	while ((slash = strchr(p, '/')) != NULL) {
		size_t n = (size_t)(slash - p);
		int next;
		bool made = false;
		if (n == 0 || n >= sizeof(comp))
			goto fail_inval;
		memcpy(comp, p, n);
		comp[n] = '\0';
		if (make && mkdirat(fd, comp, 0755) == 0)
			made = true;
		next = openat(fd, comp, DIR_FLAGS);
		close(fd);
		fd = next;
		if (fd < 0 || fstat(fd, &st) < 0)
			goto fail;
		if (st.st_dev != bst.st_dev)
			goto fail_inval;
		if (made && uid >= 0 &&
		    fchown(fd, (uid_t)uid, (gid_t)gid) < 0 && geteuid() == 0)
			goto fail;
		p = slash + 1;
	}
	return fd;
fail_inval:
	errno = EXDEV;
fail:
	if (fd >= 0) {
		int saved = errno;
		close(fd);
		errno = saved;
	}
	return -1;
}
