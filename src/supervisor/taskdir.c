/*
 * taskdir.c - files in a task's directory.
 *
 * The task directory is in the workspace, which the sandbox user (and so
 * the agent and the app) can change at will, and the control plane reads
 * it from the host.  The supervisor runs as that same user, so a planted
 * symlink cannot make it write where the user could not; it still never
 * follows one (O_NOFOLLOW on every file, the directory opened with
 * O_NOFOLLOW too) and only reads and writes regular files, opened
 * O_NONBLOCK so that a FIFO cannot stall the loop, so what the control
 * plane finds is what the supervisor wrote and nothing it wrote lands
 * elsewhere.
 *
 * The steps file is the control plane's record of a task, read while it
 * grows: each record is one write(2) of a whole line on an O_APPEND fd, so
 * a reader sees whole records, and a record can only be incomplete if
 * that write was (disk full), which the next boot repairs.
 *
 * The boot sweep exists because a task can outlive nothing: a supervisor
 * that was killed (or a container that was stopped) mid-task cannot end
 * it, so the next boot ends every task that started and did not end.  At
 * most one task runs at a time and every boot sweeps, so looking at the
 * newest TASK_SCAN_DIRS ids is plenty; the bound keeps a workspace with
 * years of tasks from slowing the boot.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "taskdir.h"

#define TASKDIR_RECORD_MAX (3 * TASK_TEXT_MAX)
#define TASKDIR_TAIL       4096 /* bytes of a log searched for its last line */

int
taskdir_open(const char *tasks, const char *id)
{
	char path[4096];
	struct stat st;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", tasks, id) >=
	    (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 && errno == ENOTDIR && lstat(path, &st) == 0 &&
	    S_ISLNK(st.st_mode))
		errno = ELOOP;
	return fd;
}

/* fd, or -1 (EINVAL, fd closed) when it is not a regular file. */
static int
taskdir_regular(int fd)
{
	struct stat st;

	if (fd == -1)
		return -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

int
taskdir_create(int dir, const char *name, int flags)
{
	int mode = (flags & O_ACCMODE) == O_RDWR ? 0 : O_WRONLY, fd, fl;

	fd = taskdir_regular(openat(dir, name,
	                            mode | O_APPEND | O_CREAT | O_NOFOLLOW |
	                                O_NONBLOCK | O_CLOEXEC | flags,
	                            0644));
	/* O_NONBLOCK was for the open (a FIFO); the file becomes a child's
	 * stdout, which should look like any other. */
	if (fd != -1 && (fl = fcntl(fd, F_GETFL)) != -1)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

char *
taskdir_read(int dir, const char *name, size_t max, size_t *len)
{
	ssize_t r = 0;
	size_t n = 0;
	char *buf = NULL;
	int fd, saved;

	fd = taskdir_regular(
	    openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
	if (fd == -1)
		return NULL;
	buf = malloc(max + 1);
	if (buf == NULL)
		goto fail;
	while (n <= max && (r = read(fd, buf + n, max + 1 - n)) != 0) {
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			goto fail;
		n += (size_t)r;
	}
	if (n > max) {
		errno = EFBIG;
		goto fail;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	saved = errno;
	free(buf);
	close(fd);
	errno = saved;
	return NULL;
}

const char *
taskdir_why(int err)
{
	switch (err) {
	case ENOENT:
		return "missing";
	case ELOOP:
		return "a symlink";
	case EINVAL:
		return "not a regular file";
	case EFBIG:
		return "too large";
	default:
		return strerror(err);
	}
}

int
taskdir_steps(int dir, struct task_steps *st)
{
	size_t len;
	char *buf = taskdir_read(dir, "steps", TASK_STEPS_MAX, &len);

	if (buf == NULL)
		return -1;
	task_steps_scan(buf, len, st);
	free(buf);
	return 0;
}

static void
taskdir_write(int fd, const char *buf, size_t len, const char *what)
{
	ssize_t n;

	do
		n = write(fd, buf, len);
	while (n == -1 && errno == EINTR);
	if (n != (ssize_t)len)
		log_msg("writing %s: %s", what,
		        n == -1 ? strerror(errno) : "short write");
}

void
taskdir_record(int fd, const char *fmt, ...)
{
	char line[TASKDIR_RECORD_MAX + 2];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) -
		    2; /* cannot happen: fields are capped */
	line[n++] = '\n';
	taskdir_write(fd, line, (size_t)n, "a steps record");
}

int
taskdir_put(int dir, const char *name, const char *buf, size_t len)
{
	char tmp[64];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	if (unlinkat(dir, tmp, 0) == -1 && errno != ENOENT)
		goto fail;
	fd = taskdir_create(dir, tmp, O_EXCL);
	if (fd == -1)
		goto fail;
	taskdir_write(fd, buf, len, name);
	close(fd);
	if (renameat(dir, tmp, dir, name) == -1)
		goto fail;
	return 0;
fail:
	log_msg("cannot write %s: %s", name, strerror(errno));
	return -1;
}

size_t
taskdir_last_line(int fd, off_t since, char *out)
{
	char buf[TASKDIR_TAIL];
	const char *line;
	struct stat st;
	off_t from;
	ssize_t n;
	size_t len;

	out[0] = '\0';
	if (fd == -1 || fstat(fd, &st) == -1 || st.st_size <= since)
		return 0;
	from = st.st_size - since > (off_t)sizeof(buf)
	           ? st.st_size - (off_t)sizeof(buf)
	           : since;
	n = pread(fd, buf, (size_t)(st.st_size - from), from);
	if (n <= 0)
		return 0;
	len = task_last_line(buf, (size_t)n, &line);
	return len > 0 ? task_text(out, line, len) : 0;
}

long long
taskdir_unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --- the boot sweep ------------------------------------------------------ */

/* The newest ids seen so far, at most TASK_SCAN_DIRS of them. */
struct taskdir_ids {
	char (*id)[TASK_ID_LEN + 1];
	size_t n;
	size_t oldest; /* index of the smallest, when n is at the cap */
};

static void
taskdir_keep(struct taskdir_ids *ids, const char *name)
{
	size_t i;

	if (ids->n < TASK_SCAN_DIRS) {
		memcpy(ids->id[ids->n++], name, TASK_ID_LEN + 1);
	} else if (strcmp(name, ids->id[ids->oldest]) > 0) {
		memcpy(ids->id[ids->oldest], name, TASK_ID_LEN + 1);
	} else {
		return;
	}
	if (ids->n < TASK_SCAN_DIRS)
		return;
	for (i = 0; i < ids->n; i++)
		if (strcmp(ids->id[i], ids->id[ids->oldest]) < 0)
			ids->oldest = i;
}

/* Ends the task in dir if it started and did not end.  Returns 1 if so. */
static int
taskdir_end_one(int dir, const char *id)
{
	struct task_steps st;
	size_t len;
	char *buf = taskdir_read(dir, "steps", TASK_STEPS_MAX, &len);
	bool cut;
	int fd;

	if (buf == NULL)
		return 0;
	task_steps_scan(buf, len, &st);
	cut = len > 0 && buf[len - 1] != '\n';
	free(buf);
	if (!st.start || st.end)
		return 0;
	fd = taskdir_create(dir, "steps", 0);
	if (fd == -1) {
		log_msg("task %s: cannot append to steps: %s", id,
		        strerror(errno));
		return 0;
	}
	/* The last record's write was cut short: end that line first. */
	if (cut)
		taskdir_write(fd, "\n", 1, "steps");
	taskdir_record(fd, "end\t%lld\tinterrupted", taskdir_unix_ms());
	close(fd);
	log_msg("task %s: interrupted by the last shutdown; ended", id);
	return 1;
}

unsigned
taskdir_sweep(const char *tasks)
{
	struct taskdir_ids ids = {0};
	struct dirent *de;
	unsigned ended = 0;
	size_t i;
	DIR *d;
	int fd;

	d = opendir(tasks);
	if (d == NULL) {
		if (errno != ENOENT)
			log_msg("cannot read %s: %s", tasks, strerror(errno));
		return 0;
	}
	ids.id = malloc(TASK_SCAN_DIRS * sizeof(*ids.id));
	if (ids.id == NULL) {
		closedir(d);
		log_msg("tasks: out of memory");
		return 0;
	}
	while ((de = readdir(d)) != NULL)
		if (task_id_ok(de->d_name, strlen(de->d_name)))
			taskdir_keep(&ids, de->d_name);
	closedir(d);
	for (i = 0; i < ids.n; i++) {
		fd = taskdir_open(tasks, ids.id[i]);
		if (fd == -1)
			continue;
		ended += (unsigned)taskdir_end_one(fd, ids.id[i]);
		close(fd);
	}
	free(ids.id);
	return ended;
}
