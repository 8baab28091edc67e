/*
 * mirror: the event files of a task whose sandbox is on another node,
 * copied to this host as they grow, so that the follower derives its
 * events from local files exactly as for a local sandbox (derive_open on
 * a directory fd, inotify on it: a copied byte wakes the follower).
 *
 * One thread per remote task, detached: every MIRROR_TICK_MS it reads
 * what each file gained since the copy's size (wsnode_mirror, one
 * ws_read per file, at most MIRROR_PASS_MAX bytes), so the follower's
 * shared thread never waits on the network; a slow or gone node only
 * delays this task's events (and the follower's own checks, a stopped
 * sandbox, an overdue task, end it as for a local one).  The copy lives
 * in <data>/state/taskmirror/<sandbox id>/.sandboxd/tasks/<task id>: the
 * root ends with the sandbox id, which is what runtime_request reads
 * from a workspace path.  Stopping marks the thread, which removes the
 * copy and frees itself; task_mirror_wait, at shutdown, waits for every
 * thread to be gone.  Rejected: reading the node from the follower's
 * thread (one hung node would stall every task's events).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/limits.h"
#include "lib/log.h"
#include "task/internal.h"
#include "wsnode/wsnode.h"

#define MIRROR_TICK_MS  300
#define MIRROR_PASS_MAX (256u << 10) /* bytes of one file per tick */
/* A file's copy stops growing here: derive reads no more of agent.out
 * (DERIVE_OUT_MAX), and far less of the others. */
#define MIRROR_FILE_MAX (64ll << 20)

struct mirror {
	struct mirror *next;
	char task_id[ULID_LEN + 1];
	struct sandbox sb;
	struct wsnode *wn;
	int dirfd;
	char dir[WORKSPACE_PATH_MAX + 96]; /* the copy's task directory */
	atomic_bool stop;
};

static pthread_mutex_t mirrors_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t mirrors_cv = PTHREAD_COND_INITIALIZER;
static struct mirror *mirrors;
static int nthreads;

static int
remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

/* The files derive reads (derive.h) besides `steps`. */
static const char *const names[] = {"agent.out", "files", "build.log",
                                    "agent.log"};

/* Appends data to the copy's steps (made when missing). */
static int
steps_append(struct mirror *m, const struct buf *data)
{
	int fd = openat(m->dirfd, "steps",
	                O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
	                0600);
	size_t off = 0;

	if (fd < 0)
		return -1;
	while (off < data->len) {
		ssize_t n = write(fd, data->data + off, data->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	return off == data->len ? 0 : -1;
}

/*
 * One pass.  `steps` is read first and appended last: a record there
 * points at bytes of the other files written before it, which are then
 * copied already when the follower sees the record, as it is locally.
 */
static void
mirror_pass(struct mirror *m, bool *warned)
{
	char rel[160];
	struct stat st;
	struct err e = {0};
	struct buf steps;
	bool eof, have;
	off_t have_steps = 0;

	buf_init(&steps, MIRROR_PASS_MAX + 1);
	snprintf(rel, sizeof(rel), ".sandboxd/tasks/%s/steps", m->task_id);
	if (fstatat(m->dirfd, "steps", &st, AT_SYMLINK_NOFOLLOW) == 0)
		have_steps = st.st_size;
	have = have_steps < MIRROR_FILE_MAX &&
	       wsnode_read(m->wn, &m->sb, rel, have_steps, MIRROR_PASS_MAX,
	                   &steps, &eof, &e) == 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct err fe = {0};
		if (fstatat(m->dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW) ==
		        0 &&
		    st.st_size >= MIRROR_FILE_MAX)
			continue;
		snprintf(rel, sizeof(rel), ".sandboxd/tasks/%s/%s", m->task_id,
		         names[i]);
		if (wsnode_mirror(m->wn, &m->sb, rel, m->dirfd, names[i],
		                  MIRROR_PASS_MAX, &fe) < 0 &&
		    fe.status != 404 && !*warned) {
			log_warn("task %s: its files on node %s: %s",
			         m->task_id, m->sb.node, fe.msg);
			*warned = true;
		}
	}
	if (have)
		steps_append(m, &steps);
	buf_release(&steps);
}

/* The copy's task directory, made once the node's is there (as the
 * supervisor makes it when the task starts). */
static int
open_dir(struct mirror *m)
{
	char rel[96], type[8];
	int64_t size, mtime;
	struct err e = {0};

	snprintf(rel, sizeof(rel), ".sandboxd/tasks/%s", m->task_id);
	if (wsnode_stat(m->wn, &m->sb, rel, type, &size, &mtime, &e) < 0 ||
	    strcmp(type, "dir") != 0)
		return -1;
	if (mkdir(m->dir, 0700) < 0 && errno != EEXIST)
		return -1;
	m->dirfd =
	    open(m->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return m->dirfd;
}

static void *
mirror_main(void *arg)
{
	struct mirror *m = arg;
	bool warned = false;

	while (!atomic_load(&m->stop)) {
		if (m->dirfd >= 0 || open_dir(m) >= 0)
			mirror_pass(m, &warned);
		for (int t = 0;
		     t < MIRROR_TICK_MS / 50 && !atomic_load(&m->stop); t++)
			usleep(50 * 1000);
	}
	if (m->dirfd >= 0)
		close(m->dirfd);
	nftw(m->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(m);
	pthread_mutex_lock(&mirrors_mu);
	nthreads--;
	pthread_cond_broadcast(&mirrors_cv);
	pthread_mutex_unlock(&mirrors_mu);
	return NULL;
}

/* mkdir -p of the copy's tasks directory under root; dir the task's. */
static int
make_dir(const char *root, const char *task_id, char *dir, size_t len)
{
	char path[WORKSPACE_PATH_MAX + 96];
	const char *steps[] = {"", "/.sandboxd", "/.sandboxd/tasks"};

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", root, steps[i]);
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			return -1;
	}
	snprintf(dir, len, "%s/.sandboxd/tasks/%s", root, task_id);
	return 0;
}

static int
spawn(struct mirror *m)
{
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_mutex_lock(&mirrors_mu);
	rc = pthread_create(&t, &attr, mirror_main, m);
	if (rc == 0) {
		nthreads++;
		m->next = mirrors;
		mirrors = m;
	}
	pthread_mutex_unlock(&mirrors_mu);
	pthread_attr_destroy(&attr);
	return rc == 0 ? 0 : -1;
}

int
task_mirror_start(struct core *c, const struct task *row, char *ws, size_t len)
{
	char root[WORKSPACE_PATH_MAX], base[WORKSPACE_PATH_MAX];
	struct mirror *m;

	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return -1;
	if (store_sandbox_get(c->store, row->sandbox_id, &m->sb) != 0 ||
	    !wsnode_remote(&m->sb)) {
		free(m);
		return 0;
	}
	snprintf(base, sizeof(base), "%s/state/taskmirror", c->cfg->data_dir);
	snprintf(root, sizeof(root), "%s/%s", base, row->sandbox_id);
	m->dirfd = -1;
	if ((mkdir(base, 0700) < 0 && errno != EEXIST) ||
	    make_dir(root, row->id, m->dir, sizeof(m->dir)) < 0) {
		log_error("task %s: cannot make its mirror: %s", row->id,
		          strerror(errno));
		free(m);
		return -1;
	}
	snprintf(m->task_id, sizeof(m->task_id), "%s", row->id);
	m->wn = c->wn;
	atomic_init(&m->stop, false);
	if (spawn(m) < 0) {
		free(m);
		return -1;
	}
	snprintf(ws, len, "%s", root);
	return 1;
}

void
task_mirror_stop(const char *task_id)
{
	pthread_mutex_lock(&mirrors_mu);
	for (struct mirror **pp = &mirrors; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->task_id, task_id) == 0) {
			struct mirror *m = *pp;
			*pp = m->next;
			atomic_store(&m->stop, true);
			break;
		}
	pthread_mutex_unlock(&mirrors_mu);
}

void
task_mirror_wait(void)
{
	pthread_mutex_lock(&mirrors_mu);
	for (struct mirror *m = mirrors; m; m = m->next)
		atomic_store(&m->stop, true);
	mirrors = NULL;
	while (nthreads > 0)
		pthread_cond_wait(&mirrors_cv, &mirrors_mu);
	pthread_mutex_unlock(&mirrors_mu);
}
