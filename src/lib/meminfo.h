/*
 * meminfo: the host's memory as the kernel reports it in /proc/meminfo.
 * Any thread may call it; it opens and reads the file each time (a few
 * microseconds), so callers need no cache.
 */
#ifndef LIB_MEMINFO_H
#define LIB_MEMINFO_H

/* MemAvailable as a percentage of MemTotal, or -1 when unknown. */
int meminfo_available_pct(void);

#endif
