/* publish/domain.h: a custom domain's host checks, the DNS verdict and
 * its reasons, the Traefik routers of the verified hosts. */
#include <stdlib.h>

#include "publish/domain.h"
#include "unit.h"

static const struct domain_names names = {
    .preview_domain = "example.com",
    .publish_domain = "apps.example.com",
};

/* The host as the check leaves it, or "" refused (code in code). */
static const char *
checked(const char *in, char *code)
{
	static char out[DOMAIN_HOST_MAX + 1];
	struct err e = {0};

	code[0] = '\0';
	if (domain_host_check(&names, in, out, &e) < 0) {
		snprintf(code, 32, "%d %s", e.status, e.code);
		return "";
	}
	return out;
}

static void
hosts_are_normalized(void)
{
	char code[32];

	CHECK_STR(checked("Shop.Example.ORG", code), "shop.example.org");
	CHECK_STR(checked("shop.example.org.", code), "shop.example.org");
	CHECK_STR(checked("a-b.c1.io", code), "a-b.c1.io");
	CHECK_STR(checked("example.com", code), "example.com");
	CHECK_STR(checked("www.example.com", code), "www.example.com");
	CHECK_STR(checked("xn--bcher-kva.example", code),
	          "xn--bcher-kva.example");
}

static void
bad_names_are_400(void)
{
	char code[32], big[300];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	const char *bad[] = {
	    "", ".", "shop", "-shop.example.org", "shop-.example.org",
	    "sh op.example.org", "shop..example.org", "shop_1.example.org",
	    "xn--\xc3\xbc.example.org",
	    "a.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	    "bbbbbbbbbbbbbbbbbbbbbbbbbb.org",
	    big,
	    /* IP literals */
	    "203.0.113.7", "::1", "2001:db8::1", "10.0.0.300",
	    /* this machine and the instance's own names */
	    "localhost", "app.localhost", "console.example.com",
	    "preview.example.com",
	    "s-01hx5v3k9q8r7t6y5w4e3d2c1b-3000.preview.example.com",
	    "apps.example.com", "shop.apps.example.com",
	    "CONSOLE.example.com."};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_STR(checked(bad[i], code), "");
		if (strcmp(code, "400 invalid_request") != 0)
			fprintf(stderr, "  %s: %s\n", bad[i], code);
		CHECK_STR(code, "400 invalid_request");
	}
	/* Near the instance's names, but not theirs. */
	CHECK_STR(checked("console.example.com.evil.org", code),
	          "console.example.com.evil.org");
	CHECK_STR(checked("myapps.example.com", code), "myapps.example.com");
	CHECK_STR(checked("notpreview.example.com", code),
	          "notpreview.example.com");
}

static void
messages_say_why(void)
{
	char out[DOMAIN_HOST_MAX + 1];
	struct err e = {0};

	domain_host_check(&names, "203.0.113.7", out, &e);
	CHECK(strstr(e.msg, "IP address") != NULL);
	domain_host_check(&names, "shop.apps.example.com", out, &e);
	CHECK(strstr(e.msg, "publish domain") != NULL);
	domain_host_check(&names, "a.preview.example.com", out, &e);
	CHECK(strstr(e.msg, "preview") != NULL);
}

static const char ours[2][46] = {"203.0.113.7", "2001:db8::7"};

static struct domain_dns
answer(enum domain_dns_status st, const char *a, const char *b,
       const char *cname)
{
	struct domain_dns d = {.status = st};

	if (a)
		snprintf(d.addrs[d.naddrs++], 46, "%s", a);
	if (b)
		snprintf(d.addrs[d.naddrs++], 46, "%s", b);
	snprintf(d.cname, sizeof(d.cname), "%s", cname ? cname : "");
	snprintf(d.err, sizeof(d.err), "no answer (timeout or SERVFAIL)");
	return d;
}

static bool
verdict(const struct domain_dns *d, char *reason, int nours)
{
	return domain_dns_verdict("shop.example.org", d, ours, nours,
	                          "shop.apps.example.com", reason, 256);
}

static void
verdicts_and_reasons(void)
{
	char r[256];
	struct domain_dns d;

	d = answer(DOMAIN_DNS_OK, "203.0.113.7", NULL, NULL);
	CHECK(verdict(&d, r, 2));
	d = answer(DOMAIN_DNS_OK, "203.0.113.7", "2001:db8::7", NULL);
	CHECK(verdict(&d, r, 2));
	d = answer(DOMAIN_DNS_OK, "198.51.100.1", NULL,
	           "shop.apps.example.com");
	CHECK(verdict(&d, r, 2));

	d = answer(DOMAIN_DNS_NXDOMAIN, NULL, NULL, NULL);
	CHECK(!verdict(&d, r, 2));
	CHECK_STR(r, "shop.example.org does not resolve (NXDOMAIN): create an "
	             "A record shop.example.org \u2192 203.0.113.7");
	d = answer(DOMAIN_DNS_OK, "198.51.100.1", NULL, NULL);
	CHECK(!verdict(&d, r, 2));
	CHECK_STR(r, "shop.example.org resolves to 198.51.100.1, not to this "
	             "server (203.0.113.7, 2001:db8::7)");
	/* One address elsewhere is enough to miss some visitors. */
	d = answer(DOMAIN_DNS_OK, "203.0.113.7", "198.51.100.1", NULL);
	CHECK(!verdict(&d, r, 1));
	CHECK_STR(r, "shop.example.org resolves to 203.0.113.7, 198.51.100.1, "
	             "not to this server (203.0.113.7)");
	d = answer(DOMAIN_DNS_NODATA, NULL, NULL, NULL);
	CHECK(!verdict(&d, r, 2));
	CHECK(strstr(r, "has no A or AAAA record") != NULL);
	d = answer(DOMAIN_DNS_FAIL, NULL, NULL, NULL);
	CHECK(!verdict(&d, r, 2));
	CHECK(strstr(r, "could not be resolved (no answer") != NULL);
	/* No address known: the CNAME is the way. */
	d = answer(DOMAIN_DNS_NXDOMAIN, NULL, NULL, NULL);
	CHECK(!verdict(&d, r, 0));
	CHECK(strstr(r, "CNAME record shop.example.org \u2192 "
	                "shop.apps.example.com") != NULL);
	/* Nothing is ours when nothing resolved. */
	d = answer(DOMAIN_DNS_OK, NULL, NULL, NULL);
	CHECK(!verdict(&d, r, 2));
}

static void
traefik_routers(void)
{
	const char *hosts[] = {"shop.example.org", "www.example.net"};
	struct domain_traefik tls = {.entrypoint = "websecure",
	                             .resolver = "le-http",
	                             .edge_url = "http://127.0.0.1:8480"};
	struct domain_traefik plain = {.entrypoint = "web",
	                               .edge_url = "http://127.0.0.1:8480"};
	struct buf b;

	buf_init(&b, 1 << 20);
	CHECK(domain_traefik_render(&b, hosts, 2, &tls) == 0);
	CHECK(strstr(b.data, "    sandboxd-domain-1:\n"
	                     "      rule: 'Host(`shop.example.org`)'\n"
	                     "      entryPoints: [websecure]\n"
	                     "      service: sandboxd-domains-edge\n"
	                     "      tls:\n"
	                     "        certResolver: le-http\n") != NULL);
	CHECK(strstr(b.data, "Host(`www.example.net`)") != NULL);
	CHECK(strstr(b.data, "- url: \"http://127.0.0.1:8480\"") != NULL);
	buf_reset(&b);
	CHECK(domain_traefik_render(&b, hosts, 1, &plain) == 0);
	CHECK(strstr(b.data, "      entryPoints: [web]\n"
	                     "      service: sandboxd-domains-edge\n"
	                     "  services:\n") != NULL);
	CHECK(strstr(b.data, "tls") == NULL);
	buf_reset(&b);
	CHECK(domain_traefik_render(&b, hosts, 0, &tls) == 0);
	CHECK(strstr(b.data, "routers: {}") != NULL);
	CHECK(strstr(b.data, "Host(") == NULL);
	buf_release(&b);
	/* Past the cap: an error, not half a file. */
	buf_init(&b, 64);
	CHECK(domain_traefik_render(&b, hosts, 2, &tls) < 0);
	buf_release(&b);
}

static const struct unit_test tests[] = {
    {"hosts are lower-cased, the trailing dot dropped", hosts_are_normalized},
    {"bad names, IP literals and the instance's names are 400",
     bad_names_are_400},
    {"the messages say why", messages_say_why},
    {"the DNS verdict and the reasons that say what is missing",
     verdicts_and_reasons},
    {"Traefik's routers for the verified hosts", traefik_routers},
};

int
main(void)
{
	return UNIT_RUN("domain", tests);
}
