/*
 * wsnode's remote paths against a real node agent in this process, for
 * the tests of what a sandbox on another node does (test_wsnode_remote,
 * _git, _fetchuse, _restore): agent_fixture.h's control plane and
 * enrolled agent "n1" (mutual TLS on loopback, the agent's own op table
 * serving its own data directory agcfg, root/n1), the control plane's
 * data directory (cpcfg, root/cp), a real store (root/cp.db) holding the
 * node's row, and wn, a wsnode handle over the control plane's nodelink.
 */
#ifndef WSNODE_FIXTURE_H
#define WSNODE_FIXTURE_H

#include "agent_fixture.h"
#include "wsnode/wsnode.h"

static struct config cpcfg; /* the control plane's */
static struct store *store;
static struct wsnode *wn;

/* The store's row of node n1, with status. */
static inline void
node_row(const char *status)
{
	struct node_row n = {0};

	snprintf(n.name, sizeof(n.name), "n1");
	snprintf(n.addr, sizeof(n.addr), "%s", ag_addr);
	snprintf(n.status, sizeof(n.status), "%s", status);
	snprintf(n.data_dir, sizeof(n.data_dir), "%s", agcfg.data_dir);
	if (store_node_put(store, &n) != 0)
		abort();
}

/* The control plane and node n1, ready, under a root made from tmpl. */
static inline void
wsnode_fixture_setup(const char *tmpl)
{
	char p[256];

	fixture_enroll(tmpl, "n1");
	snprintf(cpcfg.data_dir, sizeof(cpcfg.data_dir), "%s/cp", root);
	if (workspace_init_dirs(cpcfg.data_dir) < 0)
		abort();
	fixture_serve();
	snprintf(p, sizeof(p), "%s/cp.db", root);
	if (store_open(&store, p) != 0 || wsnode_new(&wn, &cpcfg, store) < 0)
		abort();
	wsnode_set_nodelink(wn, cp);
	node_row("ready");
}

static inline void
wsnode_fixture_teardown(void)
{
	fixture_stop();
	wsnode_free(wn);
	store_close(store);
	nl_free(cp);
	nl_free(node);
	fixture_remove();
}

/* A sandbox id on node n1. */
static inline struct sandbox
remote_sb(const char *id)
{
	struct sandbox sb = {0};

	snprintf(sb.id, sizeof(sb.id), "%s", id);
	snprintf(sb.node, sizeof(sb.node), "n1");
	return sb;
}

/* Whether dir/rel exists (a link is not followed). */
static inline bool
exists(const char *dir, const char *rel)
{
	char p[1024];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	return lstat(p, &st) == 0;
}

#endif
