/*
 * /proc/meminfo, read for MemAvailable and MemTotal: the figure the
 * kernel's own OOM heuristics start from.  The pressure reaper, preview
 * wakes and task submission all decide on it, so it lives below them.
 *
 * Also a container's charge in its memory cgroup, for a memory budget of
 * the daemon's own (sandbox/membudget.c): usage minus the inactive file
 * pages, the figure `docker stats` shows.  The cgroup is found by the
 * container id under the four layouts Docker uses (cgroup v2 or v1, the
 * cgroupfs or the systemd driver); a rootless engine's are not looked
 * for.  A page shared by several containers (a hard-linked file in the
 * page cache) is charged to the cgroup that first touched it, so a sum
 * over containers counts it once.
 */
#include "lib/meminfo.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

int
meminfo_host_kb(long long *total_kb, long long *avail_kb)
{
	long long v;
	char line[256], key[64];
	FILE *f = fopen("/proc/meminfo", "re");

	*total_kb = *avail_kb = -1;
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lld", key, &v) == 2) {
			if (strcmp(key, "MemTotal:") == 0)
				*total_kb = v;
			else if (strcmp(key, "MemAvailable:") == 0)
				*avail_kb = v;
		}
	fclose(f);
	return *total_kb < 0 || *avail_kb < 0 ? -1 : 0;
}

int
meminfo_available_pct(void)
{
	long long total, avail;

	meminfo_host_kb(&total, &avail);
	if (total <= 0 || avail < 0)
		return -1;
	return (int)(avail * 100 / total);
}

/* The first number in a file, or -1. */
static long long
read_number(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "re");

	if (f == NULL)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* The value of key in a memory.stat file, or 0. */
static long long
stat_value(const char *path, const char *want)
{
	long long v, found = 0;
	char line[256], key[64];
	FILE *f = fopen(path, "re");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lld", key, &v) == 2 &&
		    strcmp(key, want) == 0) {
			found = v;
			break;
		}
	fclose(f);
	return found;
}

/*
 * The cgroup directory under parent whose name is pre<id…>post, where
 * id may be a prefix of the full id (the store keeps Docker's 12-digit
 * short form).  0 and the path in out, or -1.
 */
static int
find_cgroup(const char *parent, const char *pre, const char *post,
            const char *id, char *out, size_t n)
{
	size_t lpre = strlen(pre), lid = strlen(id), lpost = strlen(post);
	struct dirent *de;
	DIR *d = opendir(parent);
	int rc = -1;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		if (l < lpre + lid + lpost ||
		    strncmp(de->d_name, pre, lpre) != 0 ||
		    strncmp(de->d_name + lpre, id, lid) != 0 ||
		    strcmp(de->d_name + l - lpost, post) != 0)
			continue;
		snprintf(out, n, "%s/%s", parent, de->d_name);
		rc = 0;
		break;
	}
	closedir(d);
	return rc;
}

long long
meminfo_container_bytes(const char *container_id)
{
	static const struct layout {
		const char *parent;
		const char *pre, *post; /* the cgroup's name: pre<id>post */
		const char *usage;      /* the file with the usage in bytes */
		const char *inactive;   /* the key in memory.stat */
	} layouts[] = {
	    {"/sys/fs/cgroup/system.slice", "docker-", ".scope",
	     "memory.current", "inactive_file"},
	    {"/sys/fs/cgroup/docker", "", "", "memory.current",
	     "inactive_file"},
	    {"/sys/fs/cgroup/memory/docker", "", "", "memory.usage_in_bytes",
	     "total_inactive_file"},
	    {"/sys/fs/cgroup/memory/system.slice", "docker-", ".scope",
	     "memory.usage_in_bytes", "total_inactive_file"},
	};
	char dir[512], path[600];
	long long usage, inactive;
	size_t i, n;

	if (container_id == NULL)
		return -1;
	n = strlen(container_id);
	/* Hex digits only, at least Docker's short form. */
	if (n < 12 || n > 64 || strspn(container_id, "0123456789abcdef") != n)
		return -1;
	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		if (find_cgroup(layouts[i].parent, layouts[i].pre,
		                layouts[i].post, container_id, dir,
		                sizeof(dir)) < 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, layouts[i].usage);
		usage = read_number(path);
		if (usage < 0)
			continue;
		snprintf(path, sizeof(path), "%s/memory.stat", dir);
		inactive = stat_value(path, layouts[i].inactive);
		return inactive < usage ? usage - inactive : 0;
	}
	return -1;
}
