/*
 * /proc/meminfo, read for MemAvailable and MemTotal: the figure the
 * kernel's own OOM heuristics start from.  The pressure reaper, preview
 * wakes and task submission all decide on it, so it lives below them.
 */
#include "lib/meminfo.h"

#include <stdio.h>
#include <string.h>

int
meminfo_available_pct(void)
{
	long long total = -1, avail = -1, v;
	char line[256], key[64];
	FILE *f = fopen("/proc/meminfo", "re");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lld", key, &v) == 2) {
			if (strcmp(key, "MemTotal:") == 0)
				total = v;
			else if (strcmp(key, "MemAvailable:") == 0)
				avail = v;
		}
	fclose(f);
	if (total <= 0 || avail < 0)
		return -1;
	return (int)(avail * 100 / total);
}
