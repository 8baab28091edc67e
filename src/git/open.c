/*
 * open.c - opening a workspace's app repository with libgit2: its
 * settings, the layout checks, the config audit and a cache of open
 * repositories.  Every use of a workspace's repository goes through
 * gitws_with_repo here (ops.c's status, diff and commit; remote.c's
 * push), and every caller of it runs in the helper process, confined to
 * that one workspace as the sandbox user (helper.c, confine.c).  git2.h
 * is included only inside src/git/.
 *
 * The repository was written by code in the sandbox, so it is hostile
 * input.  What keeps it in its box:
 *  - The box itself (confine.c): the helper's root is a tmpfs holding
 *    only the workspace, and it runs as uid/gid 1000 with no new
 *    privileges.  A symlink anywhere (below .git/objects, .git/refs, in
 *    a pack directory, in the worktree), absolute or full of `..`,
 *    resolves inside the workspace or to nothing: another tenant's
 *    workspace, the daemon's database and the host are not in the
 *    helper's mount namespace at all.  This is what holds when a running
 *    sandbox changes the tree between the checks below and the use.
 *  - workspace, workspace/app and workspace/app/.git must be real
 *    directories (lstat), so neither a symlink nor a `.git` file
 *    ("gitdir: /elsewhere") moves the repository; the well-known entries
 *    of .git (HEAD, config, index, objects, refs, packed-refs) must not
 *    be symlinks, nor anything below refs/ or among the entries of
 *    objects/ and objects/pack/ (the walk stops after LINK_WALK_MAX
 *    entries; the box holds beyond it), and commondir and
 *    objects/info/alternates must not exist.  These give a clear
 *    unsafe_repo instead of a missing object; they are not the boundary.
 *  - It is opened with GIT_REPOSITORY_OPEN_NO_SEARCH and its workdir is
 *    set explicitly afterwards, so core.worktree moves nothing.
 *  - Its local config is audited: keys that name programs, other files or
 *    other remotes (core.worktree, core.sshCommand, core.hooksPath,
 *    core.fsmonitor, core.excludesFile, core.attributesFile, filter.*,
 *    diff.*.command, include.path, includeIf.*, url.*.insteadOf,
 *    url.*.pushInsteadOf, http.proxy, http.*.proxy) refuse the repository
 *    with unsafe_repo_config.  libgit2 runs no hooks and no external
 *    filter or diff driver anyway (none is registered); the audit keeps
 *    the repository safe for the git CLI too.
 *  - The system, global and XDG configs are not read (empty search
 *    paths): the daemon's own ~/.gitconfig has no say.
 *  - A symlink in the worktree is hashed as a link (its target path), its
 *    target is never read; libgit2 does not descend into symlinked
 *    directories.
 *  - Answers are bounded (GITWS_MAX_*, ops.c); files larger than
 *    GITWS_MAX_BLOB diff as binary.
 *
 * Operations on one app are serialized by a striped mutex (in the
 * daemon, across its helpers).  Rejected: running the git CLI (hooks,
 * filters, config-driven programs to disarm one by one); chowning .git
 * afterwards (a walk over a tree the sandbox can change under us); the
 * daemon's own thread with its fsuid switched to 1000 (what it was:
 * uid 1000 owns every tenant's workspace, so the kernel's checks told
 * them apart not at all).
 */
#include <errno.h>
#include <git2.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "git/git.h"
#include "git/internal.h"
#include "lib/limits.h"

#define STRIPES 64

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_rc;
static pthread_mutex_t stripes[STRIPES];

static void
init_once(void)
{
	static const int levels[] = {
	    GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_XDG,
	    GIT_CONFIG_LEVEL_GLOBAL, GIT_CONFIG_LEVEL_PROGRAMDATA};

	for (int i = 0; i < STRIPES; i++)
		pthread_mutex_init(&stripes[i], NULL);
	if (git_libgit2_init() < 0) {
		init_rc = -1;
		return;
	}
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, levels[i], "");
	/* The repository is the sandbox user's; we open it on purpose. */
	git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 1);
	git_libgit2_opts(GIT_OPT_ENABLE_FSYNC_GITDIR, 1);
}

static pthread_mutex_t *
stripe(const char *key)
{
	unsigned h = 5381;

	for (const char *p = key; *p; p++)
		h = h * 33 + (unsigned char)*p;
	return &stripes[h % STRIPES];
}

int
gitws_init(void)
{
	pthread_once(&once, init_once);
	return init_rc;
}

void
gitws_lock(const char *key)
{
	pthread_once(&once, init_once);
	pthread_mutex_lock(stripe(key));
}

void
gitws_unlock(const char *key)
{
	pthread_mutex_unlock(stripe(key));
}

int
gitws_lib_err(struct err *e, const char *what)
{
	const git_error *ge = git_error_last();

	return ERR_INTERNAL(e, "git: %s failed: %s", what,
	                    ge && ge->message ? ge->message : "unknown error");
}

static int
real_dir(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	return S_ISDIR(st.st_mode) ? 1 : -1;
}

/*
 * A symbolic link below .git/refs (any depth) or among the entries of
 * .git/objects and .git/objects/pack, into bad; 1 when found, 0 when
 * none, -1 when the walk went past LINK_WALK_MAX entries (not an error:
 * the box holds anyway).  readdir's d_type, so no stat per entry.
 */
#define LINK_WALK_MAX   20000
#define LINK_WALK_DEPTH 16

static int
find_link(int dfd, const char *rel, int depth, size_t *budget, char *bad,
          size_t len)
{
	int fd =
	    openat(dfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (fd < 0)
		return 0; /* absent, or not a directory: libgit2 says */
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return 0;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		unsigned char t = de->d_type;
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if ((*budget)-- == 0) {
			rc = -1;
			break;
		}
		if (t == DT_UNKNOWN && fstatat(dirfd(d), de->d_name, &st,
		                               AT_SYMLINK_NOFOLLOW) == 0)
			t = S_ISLNK(st.st_mode)   ? DT_LNK
			    : S_ISDIR(st.st_mode) ? DT_DIR
			                          : DT_REG;
		if (t == DT_LNK) {
			snprintf(bad, len, "%s/%s", rel, de->d_name);
			rc = 1;
		} else if (t == DT_DIR && depth > 0) {
			rc = find_link(dirfd(d), de->d_name, depth - 1, budget,
			               bad, len);
			if (rc == 1) {
				char sub[1024];

				snprintf(sub, sizeof(sub), "%s", bad);
				snprintf(bad, len, "%s/%s", rel, sub);
			}
		}
	}
	closedir(d);
	return rc;
}

static int
check_links(const char *app, struct err *e)
{
	static const struct {
		const char *dir;
		int depth;
	} walks[] = {
	    {"refs", LINK_WALK_DEPTH}, {"objects", 0}, {"objects/pack", 0}};
	size_t budget = LINK_WALK_MAX;
	char p[WORKSPACE_PATH_MAX], bad[1024];
	int gfd;

	snprintf(p, sizeof(p), "%s/.git", app);
	gfd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (gfd < 0)
		return 0;
	for (size_t i = 0; i < sizeof(walks) / sizeof(walks[0]); i++)
		if (find_link(gfd, walks[i].dir, walks[i].depth, &budget, bad,
		              sizeof(bad)) == 1) {
			close(gfd);
			return err_set(e, 409, "unsafe_repo",
			               ".git/%s is a symbolic link", bad);
		}
	close(gfd);
	return 0;
}

static int
check_layout(const char *ws, char *app, size_t len, struct err *e)
{
	static const char *const nolink[] = {
	    "HEAD", "config", "index", "objects", "refs", "packed-refs"};
	static const char *const absent[] = {"commondir",
	                                     "objects/info/alternates"};
	char p[4096];
	struct stat st;
	int rc;

	snprintf(p, sizeof(p), "%s/workspace", ws);
	if ((rc = real_dir(p)) <= 0)
		return rc == 0 ? GITWS_NOT_REPO
		               : err_set(e, 409, "unsafe_repo",
		                         "workspace is not a directory");
	snprintf(app, len, "%s/workspace/app", ws);
	if ((rc = real_dir(app)) <= 0)
		return rc == 0 ? GITWS_NOT_REPO
		               : err_set(e, 409, "unsafe_repo",
		                         "workspace/app is not a directory");
	snprintf(p, sizeof(p), "%s/.git", app);
	if (lstat(p, &st) < 0)
		return GITWS_NOT_REPO;
	if (!S_ISDIR(st.st_mode))
		return err_set(
		    e, 409, "unsafe_repo",
		    "workspace/app/.git is not a directory (a .git "
		    "file or symlink pointing elsewhere is refused)");
	for (size_t i = 0; i < sizeof(nolink) / sizeof(nolink[0]); i++) {
		snprintf(p, sizeof(p), "%s/.git/%s", app, nolink[i]);
		if (lstat(p, &st) == 0 && S_ISLNK(st.st_mode))
			return err_set(e, 409, "unsafe_repo",
			               ".git/%s is a symbolic link", nolink[i]);
	}
	for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
		snprintf(p, sizeof(p), "%s/.git/%s", app, absent[i]);
		if (lstat(p, &st) == 0)
			return err_set(e, 409, "unsafe_repo",
			               ".git/%s is not supported", absent[i]);
	}
	return check_links(app, e);
}

/* A local config key that names a program, another file or remote. */
static bool
unsafe_key(const char *k)
{
	static const char *const exact[] = {
	    "core.worktree",  "core.sshcommand",   "core.hookspath",
	    "core.fsmonitor", "core.excludesfile", "core.attributesfile",
	    "include.path",   "http.proxy",        "core.gitproxy",
	    "core.askpass",   "credential.helper"};
	size_t n = strlen(k);
	const char *last = strrchr(k, '.');

	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (strcmp(k, exact[i]) == 0)
			return true;
	if (strncmp(k, "filter.", 7) == 0 || strncmp(k, "includeif.", 10) == 0)
		return true;
	if (strncmp(k, "diff.", 5) == 0 && n > 8 &&
	    strcmp(k + n - 8, ".command") == 0)
		return true;
	if (strncmp(k, "url.", 4) == 0 && last &&
	    (strcmp(last, ".insteadof") == 0 ||
	     strcmp(last, ".pushinsteadof") == 0))
		return true;
	if (strncmp(k, "http.", 5) == 0 && last && strcmp(last, ".proxy") == 0)
		return true;
	return false;
}

/* The first unsafe key of cfg into bad (or ""); 0, or -1 on a read. */
static int
first_unsafe(git_config *cfg, char *bad, size_t len)
{
	git_config_iterator *it = NULL;
	git_config_entry *ent;

	bad[0] = '\0';
	if (git_config_iterator_new(&it, cfg) < 0)
		return -1;
	while (git_config_next(&ent, it) == 0)
		if (unsafe_key(ent->name)) {
			snprintf(bad, len, "%s", ent->name);
			break;
		}
	git_config_iterator_free(it);
	return 0;
}

static int
unsafe_err(struct err *e, const char *bad)
{
	return err_set(e, 409, "unsafe_repo_config",
	               "the repository's config sets %s; remove it to use "
	               "git through the API",
	               bad);
}

static int
audit_config(git_repository *repo, struct err *e)
{
	git_config *all = NULL, *local = NULL;
	char bad[256] = "";
	int rc = -1;

	if (git_repository_config(&all, repo) < 0 ||
	    git_config_open_level(&local, all, GIT_CONFIG_LEVEL_LOCAL) < 0 ||
	    first_unsafe(local, bad, sizeof(bad)) < 0) {
		if (git_error_last() &&
		    git_error_last()->klass == GIT_ERROR_CONFIG)
			rc = gitws_lib_err(e, "reading the repository config");
		else
			rc = 0; /* no local config at all */
		goto out;
	}
	rc = bad[0] ? unsafe_err(e, bad) : 0;
out:
	git_config_free(local);
	git_config_free(all);
	return rc;
}

/*
 * After a failed open: whether the config file alone sets an unsafe key
 * (core.worktree naming a directory the box does not have fails the
 * open itself).  -1 with e filled when it does, else 0.
 */
static int
audit_file(const char *app, struct err *e)
{
	git_config *cfg = NULL;
	char p[WORKSPACE_PATH_MAX], bad[256] = "";

	snprintf(p, sizeof(p), "%s/.git/config", app);
	if (git_config_open_ondisk(&cfg, p) == 0)
		first_unsafe(cfg, bad, sizeof(bad));
	git_config_free(cfg);
	return bad[0] ? unsafe_err(e, bad) : 0;
}

static int
repo_open(const char *app, git_repository **out, struct err *e)
{
	git_repository *repo = NULL;

	*out = NULL;
	if (init_rc < 0)
		return ERR_INTERNAL(e, "libgit2 did not initialize");
	if (git_repository_open_ext(&repo, app, GIT_REPOSITORY_OPEN_NO_SEARCH,
	                            NULL) < 0) {
		const git_error *ge = git_error_last();
		int klass = ge ? ge->klass : GIT_ERROR_NONE;
		char msg[512];

		snprintf(msg, sizeof(msg), "%s",
		         ge && ge->message ? ge->message : "unknown error");
		if (audit_file(app, e) < 0)
			return -1;
		if (klass == GIT_ERROR_REPOSITORY)
			return GITWS_NOT_REPO;
		/* e.g. include.path naming a file that is no config */
		if (klass == GIT_ERROR_CONFIG)
			return err_set(
			    e, 409, "unsafe_repo_config",
			    "the repository's config cannot be read: "
			    "%s",
			    msg);
		return ERR_INTERNAL(e, "git: opening the repository failed: %s",
		                    msg);
	}
	if (audit_config(repo, e) < 0 ||
	    git_repository_set_workdir(repo, app, 0) < 0) {
		if (e->status == 0)
			gitws_lib_err(e, "setting the workdir");
		git_repository_free(repo);
		return -1;
	}
	*out = repo;
	return 0;
}

/*
 * Open repositories kept between calls: opening one reads its config,
 * index and ignore rules again, a third of a status on 10,000 files.  An
 * entry is used only when the layout checks pass again and .git and
 * .git/config are the very same files (device, inode, size, times) as
 * when it was opened and its config audited; otherwise it is dropped and
 * the repository opened afresh.  libgit2 re-reads an index, refs or packs
 * that changed on disk by itself.  An entry is taken out of the cache
 * while in use, so no two threads ever share one.  Entries idle for
 * CACHE_IDLE_S are freed by gitws_cache_trim.
 */
#define CACHE_SLOTS  8
#define CACHE_IDLE_S 120

struct stamp {
	dev_t dev;
	ino_t gitdir, config;
	off_t size;
	struct timespec mtime, ctime;
};

struct slot {
	char key[64];
	char ws[4096];
	git_repository *repo;
	struct stamp st;
	time_t used;
};

static struct slot cache[CACHE_SLOTS];
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;

static int
stamp_of(const char *app, struct stamp *s)
{
	struct stat g, c;
	char p[WORKSPACE_PATH_MAX];

	memset(s, 0, sizeof(*s));
	snprintf(p, sizeof(p), "%s/.git", app);
	if (lstat(p, &g) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/.git/config", app);
	if (lstat(p, &c) < 0)
		memset(&c, 0, sizeof(c));
	s->dev = g.st_dev;
	s->gitdir = g.st_ino;
	s->config = c.st_ino;
	s->size = c.st_size;
	s->mtime = c.st_mtim;
	s->ctime = c.st_ctim;
	return 0;
}

static bool
stamp_eq(const struct stamp *a, const struct stamp *b)
{
	return a->dev == b->dev && a->gitdir == b->gitdir &&
	       a->config == b->config && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       a->ctime.tv_sec == b->ctime.tv_sec &&
	       a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/* The cached repository for key at ws with this stamp, taken out. */
static git_repository *
cache_take(const char *key, const char *ws, const struct stamp *st)
{
	git_repository *r = NULL, *stale = NULL;

	pthread_mutex_lock(&cache_mu);
	for (int i = 0; i < CACHE_SLOTS; i++) {
		struct slot *c = &cache[i];

		if (c->repo == NULL || strcmp(c->key, key) != 0)
			continue;
		if (strcmp(c->ws, ws) == 0 && stamp_eq(&c->st, st))
			r = c->repo;
		else
			stale = c->repo;
		c->repo = NULL;
		break;
	}
	pthread_mutex_unlock(&cache_mu);
	git_repository_free(stale);
	return r;
}

static void
cache_put(const char *key, const char *ws, git_repository *repo,
          const struct stamp *st)
{
	struct slot *pick = &cache[0];
	git_repository *evicted;

	if (strlen(key) >= sizeof(pick->key) ||
	    strlen(ws) >= sizeof(pick->ws)) {
		git_repository_free(repo);
		return;
	}
	pthread_mutex_lock(&cache_mu);
	for (int i = 0; i < CACHE_SLOTS; i++) {
		if (cache[i].repo == NULL) {
			pick = &cache[i];
			break;
		}
		if (cache[i].used < pick->used)
			pick = &cache[i];
	}
	evicted = pick->repo;
	snprintf(pick->key, sizeof(pick->key), "%s", key);
	snprintf(pick->ws, sizeof(pick->ws), "%s", ws);
	pick->repo = repo;
	pick->st = *st;
	pick->used = time(NULL);
	pthread_mutex_unlock(&cache_mu);
	git_repository_free(evicted);
}

void
gitws_repo_cache_trim(void)
{
	git_repository *idle[CACHE_SLOTS];
	time_t now = time(NULL);
	int n = 0;

	pthread_mutex_lock(&cache_mu);
	for (int i = 0; i < CACHE_SLOTS; i++)
		if (cache[i].repo && now - cache[i].used >= CACHE_IDLE_S) {
			idle[n++] = cache[i].repo;
			cache[i].repo = NULL;
		}
	pthread_mutex_unlock(&cache_mu);
	for (int i = 0; i < n; i++)
		git_repository_free(idle[i]);
}

int
gitws_with_repo(const char *key, const char *ws,
                int (*fn)(git_repository *, void *, struct err *), void *arg,
                struct err *e)
{
	pthread_mutex_t *mu;
	git_repository *repo = NULL;
	struct stamp st;
	char app[4096];
	int rc;

	pthread_once(&once, init_once);
	mu = stripe(key);
	pthread_mutex_lock(mu);
	rc = check_layout(ws, app, sizeof(app), e);
	if (rc == 0 && stamp_of(app, &st) < 0)
		rc = GITWS_NOT_REPO;
	if (rc == 0 && (repo = cache_take(key, ws, &st)) == NULL)
		rc = repo_open(app, &repo, e);
	if (rc == 0)
		rc = fn(repo, arg, e);
	if (rc == 0)
		cache_put(key, ws, repo, &st);
	else
		git_repository_free(repo);
	pthread_mutex_unlock(mu);
	return rc;
}
