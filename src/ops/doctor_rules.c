/*
 * The pure parts of `sandboxd doctor` (doctor.h): the /proc/net/tcp line
 * reader, the disk and memory thresholds, the path walk's permission
 * rule, the engine's time and compose's version parsers.  They touch
 * nothing outside their arguments, so the unit tests call them directly;
 * doctor.c runs the checks that use them.
 */
#include "ops/doctor.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
bool
doctor_tcp_listen_line(const char *line, unsigned *port, unsigned long *inode)
{
	unsigned lport, st;
	unsigned long ino;
	char local[64];

	/* "sl local rem st tx:rx tr:when retr uid timeout inode" */
	if (sscanf(line, " %*u: %63s %*s %x %*s %*s %*s %*u %*u %lu", local,
	           &st, &ino) != 3)
		return false;
	const char *colon = strrchr(local, ':');
	if (colon == NULL || sscanf(colon + 1, "%x", &lport) != 1 || st != 0x0A)
		return false;
	*port = lport;
	*inode = ino;
	return true;
}

enum doctor_level
doctor_disk_level(uint64_t free_bytes, uint64_t total_bytes)
{
	const uint64_t gib = 1ull << 30;

	if (total_bytes == 0)
		return DOCTOR_WARN;
	if (free_bytes < gib || free_bytes * 50 < total_bytes)
		return DOCTOR_FAIL;
	if (free_bytes < 5 * gib || free_bytes * 10 < total_bytes)
		return DOCTOR_WARN;
	return DOCTOR_OK;
}

enum doctor_level
doctor_mem_level(int64_t avail_mb, int64_t total_mb, int64_t memory_mb,
                 int64_t headroom_pct)
{
	if (avail_mb * 4 < memory_mb)
		return DOCTOR_FAIL;
	if (avail_mb < memory_mb || avail_mb * 100 < total_mb * headroom_pct)
		return DOCTOR_WARN;
	return DOCTOR_OK;
}

bool
doctor_can_traverse(mode_t mode, uid_t owner, gid_t group, uid_t uid, gid_t gid)
{
	if (uid == 0)
		return true;
	if (owner == uid)
		return (mode & S_IXUSR) != 0;
	if (group == gid)
		return (mode & S_IXGRP) != 0;
	return (mode & S_IXOTH) != 0;
}

int64_t
doctor_parse_time(const char *s)
{
	struct tm tm = {0};
	const char *p;
	int off = 0, hh, mm;

	if (s == NULL)
		return -1;
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (p == NULL)
		return -1;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			;
	if (*p == 'Z' && p[1] == '\0')
		off = 0;
	else if ((*p == '+' || *p == '-') &&
	         sscanf(p + 1, "%2d:%2d", &hh, &mm) == 2 && strlen(p) == 6)
		off = (*p == '+' ? 1 : -1) * (hh * 3600 + mm * 60);
	else
		return -1;
	return (int64_t)timegm(&tm) - off;
}

int
doctor_compose_major(const char *v)
{
	int major = 0;

	while (*v == ' ' || *v == 'v')
		v++;
	if (!isdigit((unsigned char)*v) || sscanf(v, "%d.", &major) != 1)
		return 0;
	return major;
}

const char *
doctor_level_name(enum doctor_level l)
{
	return l == DOCTOR_OK ? "ok" : l == DOCTOR_WARN ? "warn" : "fail";
}

enum doctor_level
doctor_worst(const struct doctor_report *r)
{
	enum doctor_level w = DOCTOR_OK;

	for (size_t i = 0; i < r->n; i++)
		if (r->c[i].level > w)
			w = r->c[i].level;
	return w;
}
