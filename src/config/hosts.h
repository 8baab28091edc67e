/*
 * The console's address: the host "console.<PREVIEW_DOMAIN>" with any
 * port, which the edge serves and the API's checks (the Host guard, the
 * CSRF Origin check) recognise.  Pure functions of their bytes.
 */
#ifndef CONFIG_HOSTS_H
#define CONFIG_HOSTS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Whether host (len bytes, from a Host header) is "console.<domain>"
 * (any case) with no port or ":1".."65535" in decimal.
 */
bool console_host_match(const char *domain, const char *host, size_t len);

#endif
