/* publish/domain.h: a custom domain's host checks, the DNS verdict and
 * its reasons, the Traefik routers of the verified hosts. */
#include <stdlib.h>
#include <sys/stat.h>

#include "publish/domain.h"
#include "publish/publish.h"
#include "store_fixture.h"
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

/* A DNS answer built by hand: the header, one question, answer RRs. */
struct pkt {
	unsigned char b[1024];
	int n;
};

static void
put(struct pkt *p, const void *d, int n)
{
	memcpy(p->b + p->n, d, (size_t)n);
	p->n += n;
}

static void
put16(struct pkt *p, int v)
{
	unsigned char x[2] = {(unsigned char)(v >> 8), (unsigned char)v};
	put(p, x, 2);
}

static void
put_name(struct pkt *p, const char *name)
{
	while (*name) {
		const char *dot = strchr(name, '.');
		int n = dot ? (int)(dot - name) : (int)strlen(name);
		unsigned char len = (unsigned char)n;
		put(p, &len, 1);
		put(p, name, n);
		name += n + (dot ? 1 : 0);
	}
	put(p, "", 1);
}

static void
pkt_start(struct pkt *p, const char *qname, int qtype, int ancount)
{
	p->n = 0;
	put16(p, 0x1234);
	put16(p, 0x8580);
	put16(p, 1);
	put16(p, ancount);
	put16(p, 0);
	put16(p, 0);
	put_name(p, qname);
	put16(p, qtype);
	put16(p, 1);
}

/* An RR: name, type, then rdata of len bytes. */
static void
pkt_rr(struct pkt *p, const char *name, int type, const void *rd, int len)
{
	put_name(p, name);
	put16(p, type);
	put16(p, 1);
	put16(p, 0);
	put16(p, 30);
	put16(p, len);
	put(p, rd, len);
}

static void
pkt_a(struct pkt *p, const char *name, int a, int b, int c, int d)
{
	unsigned char rd[4] = {(unsigned char)a, (unsigned char)b,
	                       (unsigned char)c, (unsigned char)d};
	pkt_rr(p, name, 1, rd, 4);
}

static void
pkt_cname(struct pkt *p, const char *name, const char *target)
{
	struct pkt t = {.n = 0};

	put_name(&t, target);
	pkt_rr(p, name, 5, t.b, t.n);
}

static int
parse(const struct pkt *p, const char *qname, char *name, struct domain_dns *d)
{
	memset(d, 0, sizeof(*d));
	snprintf(name, DOMAIN_HOST_MAX + 1, "%s", qname);
	return domain_dns_parse(p->b, p->n, 1, name, DOMAIN_HOST_MAX + 1, d);
}

static void
dns_answers_are_parsed(void)
{
	char name[DOMAIN_HOST_MAX + 1];
	struct domain_dns d;
	struct pkt p;

	/* Two addresses, one repeated; one of another name left out. */
	pkt_start(&p, "shop.example.org", 1, 4);
	pkt_a(&p, "shop.example.org", 203, 0, 113, 7);
	pkt_a(&p, "SHOP.example.org", 203, 0, 113, 8);
	pkt_a(&p, "shop.example.org", 203, 0, 113, 7);
	pkt_a(&p, "evil.example.net", 198, 51, 100, 1);
	CHECK(parse(&p, "shop.example.org", name, &d) == 3);
	CHECK(d.naddrs == 2);
	CHECK_STR(d.addrs[0], "203.0.113.7");
	CHECK_STR(d.addrs[1], "203.0.113.8");

	/* A chain, its records in any order. */
	pkt_start(&p, "www.example.org", 1, 3);
	pkt_a(&p, "lb.example.net", 203, 0, 113, 9);
	pkt_cname(&p, "edge.example.net", "lb.example.net");
	pkt_cname(&p, "www.example.org", "edge.example.net");
	CHECK(parse(&p, "www.example.org", name, &d) == 1);
	CHECK_STR(d.addrs[0], "203.0.113.9");
	CHECK_STR(name, "lb.example.net");

	/* A CNAME alone: the name moves on, nothing found. */
	pkt_start(&p, "www.example.org", 1, 1);
	pkt_cname(&p, "www.example.org", "shop.apps.example.com");
	CHECK(parse(&p, "www.example.org", name, &d) == 0);
	CHECK_STR(name, "shop.apps.example.com");
}

static void
hostile_dns_answers_are_bounded(void)
{
	char name[DOMAIN_HOST_MAX + 1];
	unsigned char five[5] = {1, 2, 3, 4, 5};
	struct domain_dns d;
	struct pkt p;

	/* An A record of 5 bytes is no address. */
	pkt_start(&p, "shop.example.org", 1, 1);
	pkt_rr(&p, "shop.example.org", 1, five, 5);
	CHECK(parse(&p, "shop.example.org", name, &d) == 0 && d.naddrs == 0);
	/* Truncated anywhere: nothing read past the end. */
	pkt_start(&p, "shop.example.org", 1, 2);
	pkt_a(&p, "shop.example.org", 203, 0, 113, 7);
	pkt_a(&p, "shop.example.org", 203, 0, 113, 8);
	for (int cut = 0; cut < p.n; cut++) {
		struct pkt q = p;
		q.n = cut;
		CHECK(parse(&q, "shop.example.org", name, &d) <= 2);
		CHECK(d.naddrs <= 2);
	}
	/* Many addresses: the first DOMAIN_ADDRS_MAX are kept. */
	pkt_start(&p, "shop.example.org", 1, 20);
	for (int i = 0; i < 20; i++)
		pkt_a(&p, "shop.example.org", 203, 0, 113, i + 1);
	parse(&p, "shop.example.org", name, &d);
	CHECK(d.naddrs == DOMAIN_ADDRS_MAX);
	/* A CNAME loop ends. */
	pkt_start(&p, "a.example.org", 1, 2);
	pkt_cname(&p, "a.example.org", "b.example.org");
	pkt_cname(&p, "b.example.org", "a.example.org");
	CHECK(parse(&p, "a.example.org", name, &d) == 0);
	/* Answer counts that lie. */
	pkt_start(&p, "shop.example.org", 1, 9);
	pkt_a(&p, "shop.example.org", 203, 0, 113, 7);
	CHECK(parse(&p, "shop.example.org", name, &d) <= 1);
}

static void
add_row(struct store *s, const char *host, const char *app, const char *st)
{
	struct domain d = {0};

	snprintf(d.host, sizeof(d.host), "%s", host);
	snprintf(d.owner, sizeof(d.owner), "t1");
	snprintf(d.app_id, sizeof(d.app_id), "%s", app);
	snprintf(d.token, sizeof(d.token), "0123456789abcdef0123456789abcdef");
	CHECK(store_domain_insert(s, &d) == 0);
	snprintf(d.status, sizeof(d.status), "%s", st);
	CHECK(store_domain_update(s, &d) == 0);
}

static bool
routes(struct core *c, const char *host, const char *want)
{
	char id[ULID_LEN + 1] = "";
	bool ok = publish_domain_app(c, host, strlen(host), id);

	return want ? ok && strcmp(id, want) == 0 : !ok;
}

static bool
answers(struct core *c, const char *host, const char *tok)
{
	char out[64];

	return publish_verify_token(c, host, strlen(host), tok, strlen(tok),
	                            out, sizeof(out)) &&
	       strcmp(out, tok) == 0;
}

/* The edge's table and Traefik's file, from the rows of a real store. */
static void
the_edge_table_and_traefik_file(void)
{
	const char *a1 = "01J0000000000000000000APP1",
	           *a2 = "01J0000000000000000000APP2";
	const char *tok = "0123456789abcdef0123456789abcdef";
	struct config cfg = {.preview_tls = true};
	struct store *s = store_fixture_open();
	struct core c = {.cfg = &cfg, .store = s};
	char dir[128], path[160], text[4096] = "";
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/dyn", store_fixture_dir);
	CHECK(mkdir(dir, 0755) == 0);
	snprintf(cfg.traefik_dynamic_dir, sizeof(cfg.traefik_dynamic_dir), "%s",
	         dir);
	snprintf(cfg.traefik_http_resolver, sizeof(cfg.traefik_http_resolver),
	         "le-http");
	snprintf(cfg.edge_addr, sizeof(cfg.edge_addr), "0.0.0.0");
	cfg.edge_port = 8480;
	add_row(s, "shop.example.org", a1, "verified");
	add_row(s, "www.example.net", a2, "pending");
	publish_domain_recover(&c);

	CHECK(routes(&c, "shop.example.org", a1));
	CHECK(routes(&c, "SHOP.Example.ORG:8080", a1));
	CHECK(routes(&c, "shop.example.org.", a1));
	CHECK(routes(&c, "www.example.net", NULL)); /* pending */
	CHECK(routes(&c, "example.org", NULL));
	CHECK(routes(&c, "xshop.example.org", NULL));
	CHECK(answers(&c, "www.example.net", tok));
	CHECK(answers(&c, "shop.example.org:80", tok));
	CHECK(!answers(&c, "www.example.net",
	               "0123456789abcdef0123456789abcde0"));
	CHECK(!answers(&c, "www.example.net", "0123"));
	CHECK(!answers(&c, "other.example.net", tok));

	snprintf(path, sizeof(path), "%s/sandboxd-domains.yml", dir);
	f = fopen(path, "r");
	CHECK(f != NULL);
	if (f) {
		size_t n = fread(text, 1, sizeof(text) - 1, f);
		text[n] = '\0';
		fclose(f);
	}
	CHECK(strstr(text, "Host(`shop.example.org`)") != NULL);
	CHECK(strstr(text, "www.example.net") == NULL);
	CHECK(strstr(text, "- url: \"http://127.0.0.1:8480\"") != NULL);

	publish_domain_app_gone(&c, a1);
	CHECK(routes(&c, "shop.example.org", NULL));
	f = fopen(path, "r");
	if (f) {
		size_t n = fread(text, 1, sizeof(text) - 1, f);
		text[n] = '\0';
		fclose(f);
	}
	CHECK(strstr(text, "shop.example.org") == NULL);
	CHECK(unlink(path) == 0 && rmdir(dir) == 0); /* no temporary left */
	publish_domain_stop(&c);
	CHECK(routes(&c, "www.example.net", NULL));
	store_fixture_close(s);
}

static const struct unit_test tests[] = {
    {"the edge's table and Traefik's file, from the rows",
     the_edge_table_and_traefik_file},
    {"DNS answers: addresses, chains in any order, a CNAME alone",
     dns_answers_are_parsed},
    {"hostile DNS answers: bad lengths, truncation, floods, loops",
     hostile_dns_answers_are_bounded},
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
