/* Workspace disk usage and free space (see usage.h). */
#include "ws/usage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/ulid.h"

#define WS_USAGE_DEPTH 64 /* open directories at once */

struct walk {
	int64_t bytes;
	int64_t shared;
	const struct ws_inoset *store;
	int64_t entries;
	int64_t deadline_ms;
	dev_t dev;
	bool partial;
};

static bool
over_budget(struct walk *w)
{
	if (w->entries >= WS_USAGE_MAX_ENTRIES ||
	    ((w->entries & 1023) == 0 && clock_now_ms() > w->deadline_ms))
		w->partial = true;
	return w->partial;
}

/* dfd is owned here. */
static void
walk_dir(struct walk *w, int dfd, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (d == NULL) {
		close(dfd);
		return;
	}
	while (!over_budget(w) && (de = readdir(d)) != NULL) {
		struct stat st;
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		w->entries++;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		w->bytes += (int64_t)st.st_blocks * 512;
		if (S_ISREG(st.st_mode) && st.st_nlink > 1 &&
		    ws_inoset_has(w->store, st.st_dev, st.st_ino))
			w->shared += (int64_t)st.st_blocks * 512;
		if (!S_ISDIR(st.st_mode) || st.st_dev != w->dev)
			continue;
		if (depth >= WS_USAGE_DEPTH) {
			w->partial = true;
			continue;
		}
		int sub = openat(dirfd(d), de->d_name,
		                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		                     O_CLOEXEC | O_NONBLOCK);
		if (sub >= 0)
			walk_dir(w, sub, depth + 1);
	}
	closedir(d);
}

int64_t
ws_usage_walk(const char *path, bool *partial)
{
	return ws_usage_walk_shared(path, NULL, NULL, partial);
}

int64_t
ws_usage_walk_shared(const char *path, const struct ws_inoset *store,
                     int64_t *shared, bool *partial)
{
	struct walk w = {.deadline_ms = clock_now_ms() + WS_USAGE_MAX_MS,
	                 .store = store};
	struct stat st;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	w.dev = st.st_dev;
	w.bytes = (int64_t)st.st_blocks * 512;
	walk_dir(&w, fd, 0);
	if (partial)
		*partial = w.partial;
	if (shared)
		*shared = w.shared;
	return w.bytes;
}

static int
ino_cmp(const void *a, const void *b)
{
	ino_t x = *(const ino_t *)a, y = *(const ino_t *)b;

	return x < y ? -1 : x > y;
}

int
ws_inoset_load(const char *dir, struct ws_inoset *s)
{
	size_t cap = 0;
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(dir);

	*s = (struct ws_inoset){0};
	if (d == NULL || fstat(dirfd(d), &st) < 0) {
		if (d)
			closedir(d);
		return -1;
	}
	s->dev = st.st_dev;
	while ((de = readdir(d)) != NULL && s->n < WS_INOSET_MAX) {
		if (de->d_name[0] == '.' ||
		    (de->d_type != DT_REG && de->d_type != DT_UNKNOWN))
			continue;
		if (s->n == cap) {
			size_t ncap = cap ? cap * 2 : 1024;
			ino_t *v = realloc(s->v, ncap * sizeof(*v));
			if (v == NULL)
				break;
			s->v = v;
			cap = ncap;
		}
		s->v[s->n++] = de->d_ino;
	}
	closedir(d);
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), ino_cmp);
	return 0;
}

bool
ws_inoset_has(const struct ws_inoset *s, dev_t dev, ino_t ino)
{
	size_t lo = 0, hi;

	if (s == NULL || s->n == 0 || dev != s->dev)
		return false;
	hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->v[mid] == ino)
			return true;
		if (s->v[mid] < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

void
ws_inoset_release(struct ws_inoset *s)
{
	free(s->v);
	*s = (struct ws_inoset){0};
}

/* Not a lib/idtab: direct-mapped (a colliding id replaces the other,
 * no probe) and ws_usage_forget() removes entries. */
static struct {
	pthread_mutex_t mu;
	struct {
		char id[ULID_LEN + 1];
		int64_t bytes;
		int64_t at_ms;
	} e[WS_USAGE_SLOTS];
} cache = {.mu = PTHREAD_MUTEX_INITIALIZER};

int64_t
ws_usage(const char *id, const char *path)
{
	size_t i = hash_fnv1a(id) % WS_USAGE_SLOTS;
	int64_t now = clock_now_ms(), bytes = -1;

	pthread_mutex_lock(&cache.mu);
	if (strcmp(cache.e[i].id, id) == 0 &&
	    now - cache.e[i].at_ms < WS_USAGE_CACHE_S * 1000)
		bytes = cache.e[i].bytes;
	pthread_mutex_unlock(&cache.mu);
	if (bytes >= 0)
		return bytes;
	bytes = ws_usage_walk(path, NULL);
	if (bytes < 0)
		return -1;
	pthread_mutex_lock(&cache.mu);
	snprintf(cache.e[i].id, sizeof(cache.e[i].id), "%s", id);
	cache.e[i].bytes = bytes;
	cache.e[i].at_ms = clock_now_ms();
	pthread_mutex_unlock(&cache.mu);
	return bytes;
}

void
ws_usage_forget(const char *id)
{
	size_t i = hash_fnv1a(id) % WS_USAGE_SLOTS;

	pthread_mutex_lock(&cache.mu);
	if (strcmp(cache.e[i].id, id) == 0)
		cache.e[i].id[0] = '\0';
	pthread_mutex_unlock(&cache.mu);
}

int64_t
ws_free_bytes(const char *path)
{
	struct statvfs sv;

	if (statvfs(path, &sv) < 0)
		return -1;
	return (int64_t)sv.f_bavail * (int64_t)sv.f_frsize;
}
