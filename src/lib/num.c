/*
 * num (num.h): strtol with every check it leaves to the caller.  Leading white
 * space is refused, unlike strtol's, so that a value is a number exactly as
 * written; a wrapper per width (int, unsigned) was rejected until a
 * caller needs one.
 */
#include "lib/num.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

long
num_long(const char *s, long def)
{
	char *end;
	long n;

	if (s == NULL ||
	    !(isdigit((unsigned char)*s) || *s == '-' || *s == '+'))
		return def;
	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || end == s || *end != '\0' ||
	    !isdigit((unsigned char)end[-1]))
		return def;
	return n;
}
