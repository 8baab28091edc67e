/*
 * Tar archives made by hand, for the tests that send the tar reader
 * (export/tar.h) what it must refuse: tar_header() is one ustar header
 * block, mode 0644, owned by 1000:1000, its checksum filled in.
 */
#ifndef TAR_FIXTURE_H
#define TAR_FIXTURE_H

#include <stdio.h>
#include <string.h>

/* The header for name (type '0' file, '2' symlink, '1' hard link, '3'
 * char device, '5' directory; link for '1' and '2') with size bytes to
 * follow. */
static inline void
tar_header(unsigned char h[512], const char *name, char type, const char *link,
           size_t size)
{
	unsigned sum = 0;

	memset(h, 0, 512);
	snprintf((char *)h, 100, "%s", name);
	snprintf((char *)h + 100, 8, "%07o", 0644);
	snprintf((char *)h + 108, 8, "%07o", 1000);
	snprintf((char *)h + 116, 8, "%07o", 1000);
	snprintf((char *)h + 124, 12, "%011zo", size);
	snprintf((char *)h + 136, 12, "%011o", 0);
	h[156] = (unsigned char)type;
	if (link)
		snprintf((char *)h + 157, 100, "%s", link);
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

#endif
