/*
 * Unit tests of the egress policy's pure parts: the allow-list syntax,
 * the table name, the nft script each mode produces, and how the sandbox
 * network's subnet is chosen around what the host already uses.  The
 * rules themselves are exercised against the real packet filter by
 * tests/integration/49-egress.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbnet/sbnet.h"
#include "egress/egress.h"
#include "unit.h"

static void
allow_list_syntax(void)
{
	struct egress_allow a[8];
	char err[200];
	size_t n;

	CHECK(egress_allow_parse("10.1.2.3, 192.168.1.0/24:5432,"
	                         "172.16.0.9/12:8000-8100 [fd00::1]:53 "
	                         "fd00:ec2::/32",
	                         a, 8, &n, err, sizeof(err)) == 0);
	CHECK(n == 5);
	CHECK_STR(a[0].cidr, "10.1.2.3/32");
	CHECK(a[0].port_lo == 0 && !a[0].v6);
	CHECK_STR(a[1].cidr, "192.168.1.0/24");
	CHECK(a[1].port_lo == 5432 && a[1].port_hi == 5432);
	CHECK_STR(a[2].cidr, "172.16.0.0/12"); /* host bits cleared */
	CHECK(a[2].port_lo == 8000 && a[2].port_hi == 8100);
	CHECK_STR(a[3].cidr, "fd00::1/128");
	CHECK(a[3].v6 && a[3].port_lo == 53);
	CHECK_STR(a[4].cidr, "fd00:ec2::/32");
	CHECK(egress_allow_parse("", a, 8, &n, err, sizeof(err)) == 0 &&
	      n == 0);
}

static void
allow_list_refuses_nonsense(void)
{
	static const char *const bad[] = {
	    "10.0.0.300",   "10.0.0.0/33", "10.0.0.1:0", "10.0.0.1:65536",
	    "10.0.0.1:9-8", "example.com", "10.0.0.1:x", "[fd00::1",
	    "[fd00::1]x",   "fd00::/129",  "10.0.0.1/",  "10.0.0.1:80;drop",
	};
	struct egress_allow a[4];
	char err[200];
	size_t n;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (egress_allow_parse(bad[i], a, 4, &n, err, sizeof(err)) !=
		        -1 ||
		    strstr(err, "is not") == NULL) {
			fprintf(stderr, "  accepted or unexplained: %s (%s)\n",
			        bad[i], err);
			unit_failed = 1;
		}
	}
	CHECK(egress_allow_parse("1.1.1.1,2.2.2.2,3.3.3.3", a, 2, &n, err,
	                         sizeof(err)) == -1);
	CHECK(strstr(err, "more than 2") != NULL);
}

static void
modes_and_table_names(void)
{
	char t1[EGRESS_TABLE_LEN], t2[EGRESS_TABLE_LEN];

	CHECK(egress_mode_parse("public") == EGRESS_PUBLIC);
	CHECK(egress_mode_parse("none") == EGRESS_NONE);
	CHECK(egress_mode_parse("open") == EGRESS_OPEN);
	CHECK(egress_mode_parse("Public") == -1);
	CHECK_STR(egress_mode_name(EGRESS_NONE), "none");
	egress_table_name("sandboxd", t1);
	egress_table_name("sandboxd-2", t2);
	CHECK(strncmp(t1, "sandboxd_", 9) == 0 && strlen(t1) == 17);
	CHECK(strcmp(t1, t2) != 0);
}

static char *
script_as(enum egress_mode mode, const struct egress_allow *allow, size_t n,
          bool fresh)
{
	struct egress_policy p = {
	    .mode = mode,
	    .table = "sandboxd_0000abcd",
	    .bridge = "sbx-0000abcd",
	    .proxy_addr = "10.213.0.1",
	    .proxy_port = 9097,
	    .allow = allow,
	    .nallow = n,
	    .dns = {"10.255.255.53", NULL},
	};
	struct buf b;
	char *s;

	buf_init(&b, 1u << 16);
	CHECK(egress_ruleset(&p, fresh, &b) == 0);
	s = strdup(b.data ? b.data : "");
	buf_release(&b);
	return s;
}

static char *
script(enum egress_mode mode, const struct egress_allow *allow, size_t n)
{
	return script_as(mode, allow, n, false);
}

static void
reapplying_keeps_only_the_counters(void)
{
	char *keep = script(EGRESS_PUBLIC, NULL, 0);
	char *fresh = script_as(EGRESS_PUBLIC, NULL, 0, true);

	CHECK(strstr(keep, "delete table") == NULL);
	CHECK(strstr(keep, "flush table inet sandboxd_0000abcd") != NULL);
	CHECK(strstr(keep, "flush set inet sandboxd_0000abcd blocked4") !=
	      NULL);
	CHECK(strstr(keep, "flush set inet sandboxd_0000abcd refused") == NULL);
	CHECK(strstr(fresh, "delete table inet sandboxd_0000abcd") != NULL);
	free(keep);
	free(fresh);
}

static void
public_refuses_private_ranges_host_and_neighbours(void)
{
	char *s = script(EGRESS_PUBLIC, NULL, 0);

	/* Replaced in one transaction, only for the bridge's packets. */
	CHECK(strstr(s, "iifname \"sbx-0000abcd\" jump from_sandbox") != NULL);
	CHECK(strstr(s, "iifname \"sbx-0000abcd\" jump to_host") != NULL);
	CHECK(strstr(s, "10.0.0.0/8") && strstr(s, "169.254.0.0/16") &&
	      strstr(s, "100.64.0.0/10") && strstr(s, "172.16.0.0/12") &&
	      strstr(s, "192.168.0.0/16") && strstr(s, "fc00::/7") &&
	      strstr(s, "fe80::/10"));
	CHECK(strstr(s, "oifname \"sbx-0000abcd\" goto refuse") != NULL);
	CHECK(strstr(s, "ip daddr 10.213.0.1 tcp dport 9097 return") != NULL);
	CHECK(strstr(s, "ip daddr 10.255.255.53 meta l4proto { tcp, udp } th "
	                "dport 53 return") != NULL);
	/* Refused fast, and counted per source address. */
	CHECK(strstr(s, "reject with tcp reset") != NULL);
	CHECK(strstr(s, "update @refused { ip saddr counter }") != NULL);
	free(s);
}

static void
none_refuses_all_but_the_proxy(void)
{
	char *s = script(EGRESS_NONE, NULL, 0);
	const char *from = strstr(s, "chain from_sandbox");

	CHECK(from != NULL);
	CHECK(strstr(s, "th dport 53") == NULL); /* no DNS either */
	CHECK(from && strstr(from, "\t\tgoto refuse\n") != NULL);
	CHECK(strstr(s, "@blocked4 goto") == NULL);
	CHECK(strstr(s, "tcp dport 9097 return") != NULL);
	free(s);
}

static void
open_only_removes_the_table(void)
{
	char *s = script(EGRESS_OPEN, NULL, 0);

	CHECK_STR(s, "table inet sandboxd_0000abcd { }\n"
	             "delete table inet sandboxd_0000abcd\n");
	free(s);
}

static void
allow_list_comes_before_the_refusals(void)
{
	struct egress_allow a[2];
	char err[100], *s;
	size_t n;

	CHECK(egress_allow_parse("10.0.0.5:5432,fd00::/8", a, 2, &n, err,
	                         sizeof(err)) == 0);
	s = script(EGRESS_PUBLIC, a, n);
	const char *allow = strstr(s, "ip daddr 10.0.0.5/32 meta l4proto "
	                              "{ tcp, udp } th dport 5432 return");
	const char *refuse = strstr(s, "ip daddr @blocked4 goto refuse");
	CHECK(allow && refuse && allow < refuse);
	CHECK(strstr(s, "ip6 daddr fd00::/8 return") != NULL);
	/* also towards the host itself */
	const char *host = strstr(s, "chain to_host");
	CHECK(host && strstr(host, "ip daddr 10.0.0.5/32") != NULL);
	free(s);
}

static struct sbnet_cidr
cidr(const char *s)
{
	struct sbnet_cidr c = {0};

	CHECK(sbnet_cidr_parse(s, &c) == 0);
	return c;
}

static void
subnet_avoids_routes_and_networks(void)
{
	struct sbnet_cidr taken[40] = {{0, 0}};
	char out[64];
	size_t n = 0;

	CHECK(sbnet_pick_subnet(taken, 0, out, sizeof(out)) == 0);
	CHECK_STR(out, "10.213.0.0/20");
	taken[n++] = cidr("10.213.0.0/20");
	taken[n++] = cidr("10.213.17.5/32"); /* a host address */
	CHECK(sbnet_pick_subnet(taken, n, out, sizeof(out)) == 0);
	CHECK_STR(out, "10.213.32.0/20");
	/* A LAN that routes all of 10/8 pushes it to 172.29. */
	taken[n++] = cidr("10.0.0.0/8");
	CHECK(sbnet_pick_subnet(taken, n, out, sizeof(out)) == 0);
	CHECK_STR(out, "172.29.0.0/20");
	taken[n++] = cidr("172.16.0.0/12");
	CHECK(sbnet_pick_subnet(taken, n, out, sizeof(out)) == 0);
	CHECK_STR(out, "192.168.213.0/24");
	taken[n++] = cidr("192.168.0.0/16");
	CHECK(sbnet_pick_subnet(taken, n, out, sizeof(out)) == -1);
	CHECK(sbnet_cidr_parse("10.0.0.0", &taken[0]) == -1);
	CHECK(sbnet_cidr_parse("10.0.0.0/40", &taken[0]) == -1);
}

static const struct unit_test tests[] = {
    {"the allow-list's syntax", allow_list_syntax},
    {"the allow-list refuses nonsense, naming it", allow_list_refuses_nonsense},
    {"modes and table names", modes_and_table_names},
    {"public refuses private ranges, the host and other sandboxes",
     public_refuses_private_ranges_host_and_neighbours},
    {"none refuses everything but the proxy", none_refuses_all_but_the_proxy},
    {"open only removes the table", open_only_removes_the_table},
    {"applying again keeps only the refusal counters",
     reapplying_keeps_only_the_counters},
    {"the allow-list comes before the refusals",
     allow_list_comes_before_the_refusals},
    {"the subnet avoids the host's routes and Docker's networks",
     subnet_avoids_routes_and_networks},
};

int
main(void)
{
	return UNIT_RUN("egress", tests);
}
