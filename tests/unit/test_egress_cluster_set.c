/*
 * The egress table's cluster sets (egress/egress.h, cluster): the
 * addresses of the control plane and of every node, which a sandbox may
 * never reach whatever the policy.  The script puts their refusal before
 * the allow-list in both chains, keeps it in "open", changes nothing on
 * one server (no cluster list), and refuses an address that is not one;
 * then, in a network namespace of the test's own, the table is applied
 * to the real packet filter and egress_cluster_set() replaces the set's
 * elements in place.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "egress/egress.h"
#include "lib/buf.h"
#include "unit.h"

static const char *const nodes[] = {"10.0.0.5", "fd00::7", "192.168.1.0/24",
                                    NULL};

static char *
script(enum egress_mode mode, const struct egress_allow *allow, size_t n,
       const char *const *cluster)
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
	    .cluster = cluster,
	};
	struct buf b;

	buf_init(&b, 1u << 16);
	if (egress_ruleset(&p, false, &b) < 0) {
		buf_release(&b);
		return NULL;
	}
	return b.data;
}

static void
refused_before_the_allow_list(void)
{
	struct egress_allow a[1];
	char err[100];
	size_t n;

	CHECK(egress_allow_parse("10.0.0.0/8", a, 1, &n, err, sizeof(err)) ==
	      0);
	char *s = script(EGRESS_PUBLIC, a, n, nodes);
	CHECK(s != NULL);
	if (s == NULL)
		return;
	CHECK(strstr(s, "elements = { 10.0.0.5/32, 192.168.1.0/24 }") != NULL);
	CHECK(strstr(s, "elements = { fd00::7/128 }") != NULL);
	const char *from = strstr(s, "chain from_sandbox");
	const char *host = strstr(s, "chain to_host");
	CHECK(from && host);
	if (from && host) {
		const char *c1 = strstr(from, "ip daddr @cluster4 goto refuse");
		const char *a1 = strstr(from, "ip daddr 10.0.0.0/8 return");
		CHECK(c1 && a1 && c1 < a1);
		CHECK(strstr(from, "ip6 daddr @cluster6 goto refuse") != NULL);
		const char *c2 = strstr(host, "ip daddr @cluster4 goto refuse");
		const char *a2 = strstr(host, "ip daddr 10.0.0.0/8 return");
		CHECK(c2 && a2 && c2 < a2);
	}
	/* a re-apply empties the sets before filling them again */
	CHECK(strstr(s, "flush set inet sandboxd_0000abcd cluster4") != NULL);
	free(s);
}

static void
kept_in_open_mode(void)
{
	char *s = script(EGRESS_OPEN, NULL, 0, nodes);

	CHECK(s != NULL);
	if (s == NULL)
		return;
	CHECK(strstr(s, "delete table") == NULL);
	CHECK(strstr(s, "ip daddr @cluster4 goto refuse") != NULL);
	CHECK(strstr(s, "oifname") == NULL); /* open: nothing else refused */
	CHECK(strstr(s, "@blocked4 goto") == NULL);
	free(s);
}

static void
one_server_unchanged(void)
{
	char *s = script(EGRESS_PUBLIC, NULL, 0, NULL);
	char *o = script(EGRESS_OPEN, NULL, 0, NULL);

	CHECK(s && strstr(s, "cluster") == NULL);
	CHECK_STR(o, "table inet sandboxd_0000abcd { }\n"
	             "delete table inet sandboxd_0000abcd\n");
	free(s);
	free(o);
}

static void
empty_list_makes_empty_sets(void)
{
	static const char *const none[] = {NULL};
	char *s = script(EGRESS_NONE, NULL, 0, none);

	CHECK(s && strstr(s, "set cluster4") && strstr(s, "set cluster6"));
	CHECK(s &&
	      strstr(s, "elements") == strstr(s, "elements = { 0.0.0.0/8"));
	free(s);
}

static void
bad_address_refused(void)
{
	static const char *const bad[] = {"10.0.0.1 } drop; {", NULL};
	char err[128] = "";

	CHECK(script(EGRESS_PUBLIC, NULL, 0, bad) == NULL);
	CHECK(egress_cluster_set("sandboxd_0000abcd", bad, err, sizeof(err)) ==
	      -1);
	CHECK(strstr(err, "not an address") != NULL);
}

/* `nft list set inet T NAME` in this namespace, into out. */
static int
nft_list(const char *table, const char *set, char *out, size_t len)
{
	int p[2];
	pid_t pid;
	size_t n = 0;
	ssize_t k;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		execlp("nft", "nft", "list", "set", "inet", table, set,
		       (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while (n + 1 < len && (k = read(p[0], out + n, len - 1 - n)) > 0)
		n += (size_t)k;
	out[n] = '\0';
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* In a child of its own network namespace: the real packet filter. */
static int
in_netns(void)
{
	static const char *const first[] = {"10.9.9.9", NULL};
	static const char *const later[] = {"10.1.1.1", "10.2.0.0/16",
	                                    "fd00::9", NULL};
	struct egress_policy p = {
	    .mode = EGRESS_PUBLIC,
	    .table = "sandboxd_0000abcd",
	    .bridge = "sbx-0000abcd",
	    .proxy_addr = "10.213.0.1",
	    .proxy_port = 9097,
	    .cluster = first,
	};
	char err[256], out[4096];

	if (unshare(CLONE_NEWNET) < 0)
		return 2;
	if (egress_apply(&p, err, sizeof(err)) < 0) {
		fprintf(stderr, "  apply: %s\n", err);
		return 1;
	}
	if (nft_list(p.table, "cluster4", out, sizeof(out)) < 0 ||
	    strstr(out, "10.9.9.9") == NULL)
		return 1;
	if (egress_cluster_set(p.table, later, err, sizeof(err)) < 0) {
		fprintf(stderr, "  set: %s\n", err);
		return 1;
	}
	if (nft_list(p.table, "cluster4", out, sizeof(out)) < 0 ||
	    strstr(out, "10.9.9.9") || !strstr(out, "10.1.1.1") ||
	    !strstr(out, "10.2.0.0/16"))
		return 1;
	if (nft_list(p.table, "cluster6", out, sizeof(out)) < 0 ||
	    !strstr(out, "fd00::9"))
		return 1;
	/* a second apply (a restart) keeps working over the sets */
	if (egress_apply(&p, err, sizeof(err)) < 0 ||
	    nft_list(p.table, "cluster4", out, sizeof(out)) < 0 ||
	    strstr(out, "10.1.1.1") || !strstr(out, "10.9.9.9"))
		return 1;
	return 0;
}

static void
real_packet_filter(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		_exit(in_netns());
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 2) {
		printf("# skipped: no network namespace (not root)\n");
		return;
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static const struct unit_test tests[] = {
    {"cluster refused before the allow-list", refused_before_the_allow_list},
    {"cluster refused in open mode too", kept_in_open_mode},
    {"one server: no cluster sets", one_server_unchanged},
    {"an empty list makes empty sets", empty_list_makes_empty_sets},
    {"a bad address refused", bad_address_refused},
    {"applied and replaced in a netns", real_packet_filter},
};

int
main(void)
{
	return UNIT_RUN("egress_cluster_set", tests);
}
