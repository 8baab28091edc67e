/*
 * The nodes of a cluster (SANDBOXD_ORCHESTRATOR=swarm): node ls, node
 * drain, node join-command.  `node join` and `node run` are not the
 * client's: they run the node agent (src/cli/node.c), and main() hands
 * them there because this table has no row for them.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/calls.h"
#include "client/commands.h"
#include "client/table.h"

#define NODE_WAIT_POLL_MS 1000 /* node drain --wait: how often it asks */

/* "3s" since an RFC 3339 time, or "-". */
static const char *
age_of(const char *at, long long now, char *out, size_t len)
{
	struct tm tm = {0};

	snprintf(out, len, "-");
	if (at && strptime(at, "%Y-%m-%dT%H:%M:%S", &tm))
		cli_age_text(now - (long long)timegm(&tm), out, len);
	return out;
}

static const char *
size_or_dash(const struct jv *v, char *out, size_t len)
{
	if (jv_type(v) != JV_INT) {
		snprintf(out, len, "-");
		return out;
	}
	return cli_size_text(jv_int(v), out, len);
}

/* One node as a row: NAME STATUS SWARM SANDBOXES MEMORY RESERVED DISK SEEN. */
static int
node_row(struct table *t, const struct jv *o, long long now)
{
	const struct jv *sw = jv_get(o, "swarm"), *m = jv_get(o, "memory");
	const struct jv *k = jv_get(o, "sandboxes"), *job = jv_get(o, "job");
	char name[96], status[64], swarm[48], sbs[32], mem[64], avail[24],
	    total[24], res[24], disk[24], seen[24];
	const char *cells[8];

	snprintf(name, sizeof(name), "%s%s", jv_str(jv_get(o, "name")) ?: "-",
	         jv_is_true(jv_get(o, "manager")) ? " (manager)" : "");
	snprintf(status, sizeof(status), "%s",
	         jv_str(jv_get(o, "status")) ?: "-");
	if (jv_str(jv_get(job, "state")) &&
	    strcmp(jv_str(jv_get(job, "state")), "running") == 0)
		snprintf(status, sizeof(status), "%s %lld/%lld",
		         jv_str(jv_get(o, "status")) ?: "-",
		         (long long)jv_int(jv_get(job, "moved")),
		         (long long)jv_int(jv_get(job, "total")));
	snprintf(swarm, sizeof(swarm), "%s/%s",
	         jv_str(jv_get(sw, "state")) ?: "-",
	         jv_str(jv_get(sw, "availability")) ?: "-");
	snprintf(sbs, sizeof(sbs), "%lld/%lld",
	         (long long)jv_int(jv_get(k, "running")),
	         (long long)jv_int(jv_get(k, "total")));
	snprintf(mem, sizeof(mem), "%s of %s",
	         size_or_dash(jv_get(m, "available"), avail, sizeof(avail)),
	         size_or_dash(jv_get(m, "total"), total, sizeof(total)));
	cells[0] = name;
	cells[1] = status;
	cells[2] = swarm;
	cells[3] = sbs;
	cells[4] = mem;
	cells[5] = size_or_dash(jv_get(m, "reserved"), res, sizeof(res));
	cells[6] = size_or_dash(jv_get(o, "disk_free"), disk, sizeof(disk));
	cells[7] =
	    age_of(jv_str(jv_get(o, "last_seen")), now, seen, sizeof(seen));
	return table_add(t, cells);
}

int
cmd_node_ls(struct cli *c, const struct cli_args *a)
{
	static const char *const head[] = {
	    "NAME",     "STATUS",    "SWARM", "SANDBOXES", "MEMORY",
	    "RESERVED", "DISK FREE", "SEEN",  NULL,
	};
	const struct jv *nodes;
	struct cli_resp r;
	struct table t;
	long long now = (long long)time(NULL);
	int rc;

	(void)a;
	if ((rc = cli_call(c, "GET", "/v1/nodes", NULL, &r)) != 0) {
		cli_resp_release(&r);
		return rc;
	}
	nodes = jv_get(r.json, "nodes");
	if (c->json) {
		cli_print_raw(&r);
	} else if (c->quiet) {
		for (size_t i = 0; i < jv_len(nodes); i++)
			printf("%s\n", jv_str(jv_get(jv_at(nodes, i), "name")));
	} else {
		table_init(&t, head);
		for (size_t i = 0; i < jv_len(nodes); i++)
			node_row(&t, jv_at(nodes, i), now);
		cli_print_table(c, &t);
		table_release(&t);
	}
	cli_resp_release(&r);
	return CLI_OK;
}

int
cmd_node_join_command(struct cli *c, const struct cli_args *a)
{
	struct cli_resp r;
	char at[64];
	int rc;

	(void)a;
	rc = cli_call(c, "POST", "/v1/nodes/join-command", NULL, &r);
	if (rc == 0) {
		if (c->json) {
			cli_print_raw(&r);
		} else {
			printf("%s\n", jv_str(jv_get(r.json, "command")) ?: "");
			if (!c->quiet)
				fprintf(
				    stderr,
				    "Run it on the new node (Docker installed, "
				    "this sandboxd binary on it). It works "
				    "once, until %s.\n",
				    cli_short_time(
				        jv_str(jv_get(r.json, "expires_at")),
				        at, sizeof(at)));
		}
	}
	cli_resp_release(&r);
	return rc;
}

/* The node's job until it is no longer running; its exit status. */
static int
drain_wait(struct cli *c, const char *name)
{
	char path[256], last[64] = "";
	int rc = CLI_OK;

	if (cli_pathf(path, sizeof(path), "/v1/nodes") < 0)
		return CLI_EUSAGE;
	for (;;) {
		struct cli_resp r;
		const struct jv *nodes, *job = NULL, *n;
		char now[64];
		const char *state;

		if ((rc = cli_call(c, "GET", path, NULL, &r)) != 0) {
			cli_resp_release(&r);
			return rc;
		}
		nodes = jv_get(r.json, "nodes");
		for (size_t i = 0; i < jv_len(nodes); i++) {
			n = jv_at(nodes, i);
			if (strcmp(jv_str(jv_get(n, "name")) ?: "", name) == 0)
				job = jv_get(n, "job");
		}
		state = jv_str(jv_get(job, "state")) ?: "failed";
		snprintf(now, sizeof(now), "%lld/%lld",
		         (long long)jv_int(jv_get(job, "moved")),
		         (long long)jv_int(jv_get(job, "total")));
		if (!c->quiet && !c->json && strcmp(now, last) != 0) {
			printf("moved %s\n", now);
			fflush(stdout);
			snprintf(last, sizeof(last), "%s", now);
		}
		if (strcmp(state, "running") != 0) {
			if (strcmp(state, "done") == 0) {
				if (!c->quiet && !c->json)
					printf("node %s drained\n", name);
			} else {
				rc = cli_fail(
				    CLI_EFAIL, "drain_failed",
				    "node %s: %lld sandbox(es) not "
				    "moved: %s",
				    name,
				    (long long)jv_int(jv_get(job, "failed")),
				    jv_str(jv_get(job, "error")) ?: "");
			}
			cli_resp_release(&r);
			return rc;
		}
		cli_resp_release(&r);
		usleep(NODE_WAIT_POLL_MS * 1000);
	}
}

int
cmd_node_drain(struct cli *c, const struct cli_args *a)
{
	struct jv *body = jv_obj();
	const char *to = cli_args_get(a, "to");
	struct cli_resp r;
	char path[256];
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/nodes/%s/drain", a->pos[0]) <
	    0) {
		jv_free(body);
		return cli_fail(CLI_EUSAGE, "usage", "the name is too long");
	}
	if (to)
		jv_set_str(body, "to", to);
	rc = cli_call(c, "POST", path, body, &r);
	jv_free(body);
	if (rc == 0)
		cli_done(c, &r,
		         "draining node %s: %lld sandbox(es) to move%s%s\n",
		         a->pos[0],
		         (long long)jv_int(
		             jv_get(jv_get(r.json, "sandboxes"), "total")),
		         to ? " to " : "", to ? to : "");
	cli_resp_release(&r);
	if (rc == 0 && cli_args_has(a, "wait"))
		rc = drain_wait(c, a->pos[0]);
	return rc;
}
