/*
 * The custom domain commands: domain add|list|verify|remove APP HOST
 * (docs/publish.md "Host names and custom domains").  A pending domain
 * is printed with what is missing and the DNS records to create, so
 * `domain add` alone tells the user what to do next.
 */
#include <stdio.h>
#include <string.h>

#include "client/calls.h"
#include "client/commands.h"

static const struct cli_col domain_cols[] = {
    {.head = "HOST", .field = "host"},
    {.head = "STATUS", .field = "status"},
    {.head = "METHOD", .field = "method"},
    {.head = "CHECKED", .field = "checked_at", .kind = CLI_COL_TIME},
    {.head = "REASON", .field = "reason", .kind = CLI_COL_LINE},
};

/* "HOST: verified (dns)", or pending with the reason and the records. */
static void
print_domain(struct cli *c, const struct jv *d)
{
	char tmp[64];
	const char *host = cli_field(d, "host", tmp, sizeof(tmp));
	const char *status = cli_field(d, "status", tmp, sizeof(tmp));
	const struct jv *recs = jv_get(d, "records");

	if (strcmp(status, "verified") == 0) {
		printf("%s: %sverified%s (%s)\n", host, cli_sgr(c, "32"),
		       CLI_RESET(c), cli_field(d, "method", tmp, sizeof(tmp)));
		return;
	}
	printf("%s: %s%s%s\n  %s\n", host, cli_sgr(c, "33"), status,
	       CLI_RESET(c), cli_field(d, "reason", tmp, sizeof(tmp)));
	if (recs == NULL || jv_type(recs) != JV_ARRAY || jv_len(recs) == 0)
		return;
	printf("  create one of these DNS records, then: sandboxd domain "
	       "verify APP %s\n",
	       host);
	for (size_t i = 0; i < jv_len(recs); i++) {
		const struct jv *r = jv_at(recs, i);
		printf("    %-5s %s -> %s\n", cli_field(r, "type", tmp, 8),
		       cli_field(r, "name", tmp, sizeof(tmp)),
		       cli_field(r, "value", tmp, sizeof(tmp)));
	}
}

/* POST path (body: {"host"} or none) and print the domain. */
static int
post_domain(struct cli *c, const char *path, const char *host)
{
	struct jv *body = NULL;
	struct cli_resp r;
	int rc;

	if (host) {
		body = jv_obj();
		jv_set_str(body, "host", host);
	}
	rc = cli_call(c, "POST", path, body, &r);
	jv_free(body);
	if (rc == 0) {
		if (c->json)
			cli_print_raw(&r);
		else if (!c->quiet)
			print_domain(c, r.json);
	}
	cli_resp_release(&r);
	return rc;
}

int
cmd_domain_add(struct cli *c, const struct cli_args *a)
{
	char path[512];

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/domains", a->pos[0]) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	return post_domain(c, path, a->pos[1]);
}

int
cmd_domain_verify(struct cli *c, const struct cli_args *a)
{
	char path[1024];

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/domains/%s/verify",
	              a->pos[0], a->pos[1]) < 0)
		return cli_fail(CLI_EUSAGE, "usage",
		                "the id or host is too long");
	return post_domain(c, path, NULL);
}

int
cmd_domain_list(struct cli *c, const struct cli_args *a)
{
	struct cli_resp r;
	char path[512];
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/domains", a->pos[0]) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	rc = cli_get_list(c, path, "domains", domain_cols,
	                  sizeof(domain_cols) / sizeof(domain_cols[0]), 0, &r);
	cli_resp_release(&r);
	return rc;
}

int
cmd_domain_remove(struct cli *c, const struct cli_args *a)
{
	struct cli_resp r;
	char path[1024];
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/domains/%s", a->pos[0],
	              a->pos[1]) < 0)
		return cli_fail(CLI_EUSAGE, "usage",
		                "the id or host is too long");
	rc = cli_call(c, "DELETE", path, NULL, &r);
	if (rc == 0 && !c->json && !c->quiet)
		printf("removed %s from app %s\n", a->pos[1], a->pos[0]);
	cli_resp_release(&r);
	return rc;
}
