/*
 * meminfo: the host's memory as the kernel reports it in /proc/meminfo,
 * and a Docker container's charge in its memory cgroup.  Any thread may
 * call them; they open and read the files each time (a few
 * microseconds), so callers need no cache.
 */
#ifndef LIB_MEMINFO_H
#define LIB_MEMINFO_H

/* MemTotal and MemAvailable in KiB: 0, or -1 when either is unknown
 * (each not found is -1). */
int meminfo_host_kb(long long *total_kb, long long *avail_kb);
/* MemAvailable as a percentage of MemTotal, or -1 when unknown. */
int meminfo_available_pct(void);

/*
 * What the container (its id, or a prefix of 12 or more hex digits)
 * holds in its memory cgroup, in bytes:
 * usage minus the inactive file pages (as `docker stats` shows it), or
 * -1 when its cgroup is not found (not running, or an unknown layout).
 */
long long meminfo_container_bytes(const char *container_id);

#endif
