/*
 * The edge's connection counts per client address (edge.c's cap of
 * EDGE_MAX_CLIENT_CONNECTIONS each): a hash of the addresses with
 * connections open, taken at accept (edge.c) and given back when a
 * connection closes (conn.c).  Each entry also counts what the
 * address holds of the API through the console host (console.c admits,
 * io.c and conn.c give back): connections to it, and requests without
 * credentials in flight.  Loopback peers behind the TLS proxy are not
 * counted.  Not a lib/idtab: keyed by address, not id, and an
 * address leaves the table with its last connection.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "edge/internal.h"
#include "lib/hash.h"

/*
 * The key a client is counted under: IPv4 (also v4-mapped) as ::ffff:a.b.c.d,
 * IPv6 by its /64.  False for loopback when the TLS proxy is exempt.
 */
bool
edge_client_key(const struct edge *e, const struct sockaddr_storage *peer,
                unsigned char key[16])
{
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)peer;
	const struct sockaddr_in *in4 = (const struct sockaddr_in *)peer;
	bool loop = false;

	memset(key, 0, 16);
	if (peer->ss_family == AF_INET) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &in4->sin_addr, 4);
	} else if (peer->ss_family == AF_INET6) {
		memcpy(key, &in6->sin6_addr, 16);
		loop = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
		if (!IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
			memset(key + 8, 0, 8);
	} else {
		return false;
	}
	loop = loop || (key[10] == 0xff && key[11] == 0xff && key[12] == 127);
	return !(e->tls_proxy_exempt && loop);
}

static unsigned
client_bucket(const unsigned char key[16])
{
	return hash_fnv1a_bytes((const char *)key, 16) % EDGE_CLIENT_BUCKETS;
}

/* The count of key's connections, made if new; NULL: out of memory. */
struct edge_client *
edge_client_get(struct edge *e, const unsigned char key[16])
{
	unsigned b = client_bucket(key);
	struct edge_client *cl;

	for (cl = e->clients[b]; cl; cl = cl->next)
		if (memcmp(cl->addr, key, 16) == 0)
			return cl;
	if ((cl = calloc(1, sizeof(*cl))) == NULL)
		return NULL;
	memcpy(cl->addr, key, 16);
	cl->next = e->clients[b];
	e->clients[b] = cl;
	return cl;
}

void
edge_client_put(struct edge *e, struct edge_client *cl)
{
	struct edge_client **p;

	if (cl == NULL || --cl->n > 0)
		return;
	for (p = &e->clients[client_bucket(cl->addr)]; *p; p = &(*p)->next)
		if (*p == cl) {
			*p = cl->next;
			free(cl);
			return;
		}
}
