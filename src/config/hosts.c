/*
 * Console host names.  Exact: "console." then the configured domain,
 * then nothing or a port; "console.evil.<domain>" or a suffix trick
 * ("console.<domain>.evil") is no console host.
 */
#include "config/hosts.h"

#include <string.h>
#include <strings.h>

bool
console_host_match(const char *domain, const char *host, size_t len)
{
	size_t dlen = strlen(domain), i;
	long port = 0;

	if (dlen == 0 || len < 8 + dlen || strncasecmp(host, "console.", 8) ||
	    strncasecmp(host + 8, domain, dlen))
		return false;
	i = 8 + dlen;
	if (i == len)
		return true;
	if (host[i++] != ':' || i == len || len - i > 5)
		return false;
	for (; i < len; i++) {
		if (host[i] < '0' || host[i] > '9')
			return false;
		port = port * 10 + (host[i] - '0');
	}
	return port >= 1 && port <= 65535;
}
