/*
 * libFuzzer target: DNS answers, as a resolver hostile to us sends them
 * (publish/verify.c).  The first byte picks the record type asked (A or
 * AAAA); the rest is the message.  domain_dns_parse must never read out
 * of bounds, keep at most DOMAIN_ADDRS_MAX addresses, each a valid
 * address's text, and leave a NUL-terminated name that fits.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "publish/domain.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[DOMAIN_HOST_MAX + 1] = "shop.example.org";
	unsigned char a[sizeof(struct in6_addr)];
	struct domain_dns d;
	int type;

	if (size < 1 || size > 4096)
		return 0;
	type = (data[0] & 1) ? 28 : 1;
	memset(&d, 0, sizeof(d));
	domain_dns_parse(data + 1, (int)size - 1, type, name, sizeof(name), &d);
	if (d.naddrs < 0 || d.naddrs > DOMAIN_ADDRS_MAX ||
	    memchr(name, '\0', sizeof(name)) == NULL)
		__builtin_trap();
	for (int i = 0; i < d.naddrs; i++)
		if (inet_pton(type == 1 ? AF_INET : AF_INET6, d.addrs[i], a) !=
		    1)
			__builtin_trap();
	return 0;
}
