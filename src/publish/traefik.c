/*
 * traefik: the routers Traefik reads for the verified custom domains
 * (domain.h), in <SANDBOXD_TRAEFIK_DYNAMIC_DIR>/sandboxd-domains.yml,
 * the directory Traefik's file provider watches beside the installer's
 * own routers (scripts/traefik-config).
 *
 * One router per host: rule Host(`host`), with PREVIEW_TLS the websecure
 * entrypoint and a certificate from the HTTP-01 resolver
 * (SANDBOXD_TRAEFIK_HTTP_RESOLVER: a custom domain's owner controls its
 * A record, not our DNS provider, so DNS-01 cannot serve it), without it
 * PREVIEW_ENTRYPOINT and plain HTTP, as the installer's routers; and the
 * service sandboxd-domains-edge to the daemon's edge.  The service has a name
 * of its own: two files of one provider directory may not define one service
 * twice.
 *
 * The file is written whole to a temporary name, synced and renamed, so
 * Traefik never reads half of it; with no verified domain it holds an
 * empty http block (Traefik drops the routers of a deleted file, but a
 * file that stays is simpler to reason about).  Hosts were checked by
 * domain_host_check: [a-z0-9.-] only, so nothing in them needs quoting
 * in YAML or in the rule's backquotes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "lib/log.h"
#include "publish/domain.h"

#define TRAEFIK_FILE     "sandboxd-domains.yml"
#define TRAEFIK_SERVICE  "sandboxd-domains-edge"
#define TRAEFIK_FILE_MAX (4u << 20)

int
domain_traefik_render(struct buf *b, const char *const *hosts, int n,
                      const struct domain_traefik *t)
{
	int rc = buf_appendf(b, "# Written by sandboxd: the verified custom "
	                        "domains (docs/publish.md).\n"
	                        "# Changes are overwritten.\nhttp:\n");

	if (n == 0)
		return rc < 0 ? -1 : buf_appendf(b, "  routers: {}\n");
	rc |= buf_appendf(b, "  routers:\n");
	for (int i = 0; i < n; i++) {
		rc |= buf_appendf(b,
		                  "    sandboxd-domain-%d:\n"
		                  "      rule: 'Host(`%s`)'\n"
		                  "      entryPoints: [%s]\n"
		                  "      service: " TRAEFIK_SERVICE "\n",
		                  i + 1, hosts[i], t->entrypoint);
		if (t->resolver)
			rc |= buf_appendf(b,
			                  "      tls:\n"
			                  "        certResolver: %s\n",
			                  t->resolver);
	}
	rc |= buf_appendf(b,
	                  "  services:\n"
	                  "    " TRAEFIK_SERVICE ":\n"
	                  "      loadBalancer:\n"
	                  "        passHostHeader: true\n"
	                  "        servers:\n"
	                  "          - url: \"%s\"\n",
	                  t->edge_url);
	return rc < 0 ? -1 : 0;
}

/* The edge as Traefik reaches it: SANDBOXD_EDGE_ADDR (0.0.0.0 is any
 * address: loopback then) and its port. */
static void
edge_url(const struct config *cfg, char *out, size_t len)
{
	const char *a = cfg->edge_addr;

	if (a[0] == '\0' || strcmp(a, "0.0.0.0") == 0)
		a = "127.0.0.1";
	snprintf(out, len, "http://%s:%lld", a, (long long)cfg->edge_port);
}

static int
write_atomic(const char *dir, const struct buf *b)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/" TRAEFIK_FILE, dir);
	snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, TRAEFIK_FILE);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fileio_write_all(fd, b->data, b->len) < 0 || fchmod(fd, 0644) < 0 ||
	    fsync(fd) < 0) {
		close(fd);
		unlink(tmp);
		return -1;
	}
	close(fd);
	if (rename(tmp, path) < 0) {
		unlink(tmp);
		return -1;
	}
	return fileio_sync_dir(dir);
}

int
domain_traefik_write(const struct config *cfg, const char *const *hosts, int n)
{
	char url[128];
	struct domain_traefik t = {
	    .entrypoint =
	        cfg->preview_tls ? "websecure" : cfg->preview_entrypoint,
	    .resolver = cfg->preview_tls ? cfg->traefik_http_resolver : NULL,
	    .edge_url = url};
	struct buf b;
	int rc;

	if (cfg->traefik_dynamic_dir[0] == '\0')
		return 0;
	edge_url(cfg, url, sizeof(url));
	buf_init(&b, TRAEFIK_FILE_MAX);
	rc = domain_traefik_render(&b, hosts, n, &t);
	if (rc == 0)
		rc = write_atomic(cfg->traefik_dynamic_dir, &b);
	if (rc < 0)
		log_error("traefik: cannot write %s/" TRAEFIK_FILE ": %s",
		          cfg->traefik_dynamic_dir, strerror(errno));
	buf_release(&b);
	return rc;
}
