/*
 * The `swarm` check of `sandboxd doctor` (SANDBOXD_ORCHESTRATOR=swarm
 * only): this engine is an active swarm manager; the manager's node
 * carries the labels the daemon sets at its start; every node that
 * joined through sandboxd is ready in Swarm's eyes, labelled, and its
 * agent answers over the node channel with an engine of API 1.41 or
 * later; a swarm node that joined by hand (no sandboxd.node label) is
 * named; the control plane's own certificate has 14 days or more.  The worst of
 * these is the check's level; the message names the first problem, and how many
 * there were.
 *
 * Read-only but for the nodes' facts asked over nodelink with the
 * control plane's own credentials (<data>/state/nodeca).
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "docker/swarm.h"
#include "nodelink/nodelink.h"
#include "ops/doctor.h"
#include "store/store.h"

#define DOCTOR_FACTS_MS    3000 /* an agent's answer to doctor's facts */
#define DOCTOR_CERT_WARN_S (14 * 86400) /* the CP's certificate's end */

struct sw {
	struct doctor_check *c;
	int problems;
	int nodes;
	struct store *store;
	struct nodelink *nl;
};

/* Keeps the first problem's text; the worst level. */
static void problem(struct sw *s, enum doctor_level lvl, const char *fix,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
problem(struct sw *s, enum doctor_level lvl, const char *fix, const char *fmt,
        ...)
{
	va_list ap;

	if (s->problems++ == 0) {
		va_start(ap, fmt);
		vsnprintf(s->c->msg, sizeof(s->c->msg), fmt, ap);
		va_end(ap);
		snprintf(s->c->fix, sizeof(s->c->fix), "%s", fix);
	}
	if (lvl > s->c->level)
		s->c->level = lvl;
}

static int
api_num(const char *v)
{
	int major = 0, minor = 0;

	if (v == NULL || sscanf(v, "%d.%d", &major, &minor) != 2)
		return 0;
	return major * 1000 + minor;
}

/* The agent of a node that joined through sandboxd answers facts. */
static void
agent_check(struct sw *s, const struct swarm_node *n)
{
	struct node_row row;
	struct jv *req, *f = NULL;
	struct err e = {0};

	if (s->store == NULL || s->nl == NULL ||
	    store_node_get(s->store, n->name, &row) != 0) {
		problem(s, DOCTOR_WARN,
		        "enroll it with the command `sandboxd node "
		        "join-command` prints",
		        "node %s is labelled but has no enrollment", n->name);
		return;
	}
	req = jv_obj();
	jv_set_str(req, "op", "facts");
	if (nl_call(s->nl, row.addr, NL_ROLE_NODE, req, &f, DOCTOR_FACTS_MS,
	            &e) < 0)
		problem(s, DOCTOR_FAIL,
		        "start its agent (`sandboxd node run`, or its systemd "
		        "unit) and open its SANDBOXD_NODE_PORT to the manager",
		        "node %s: its agent does not answer (%s)", n->name,
		        e.msg);
	else if (api_num(jv_str(jv_get(f, "engine_api"))) < 1041)
		problem(s, DOCTOR_FAIL,
		        "upgrade Docker on that node to 20.10 "
		        "or later",
		        "node %s: its engine's API %s is older than 1.41",
		        n->name, jv_str(jv_get(f, "engine_api")) ?: "?");
	jv_free(req);
	jv_free(f);
}

static void
node_one(const struct swarm_node *n, void *arg)
{
	struct sw *s = arg;
	bool mgr = strcmp(n->role, "manager") == 0;

	s->nodes++;
	if (n->name[0] == '\0') {
		problem(
		    s, DOCTOR_WARN,
		    mgr ? "start the daemon with SANDBOXD_ORCHESTRATOR=swarm: "
		          "it labels its node"
		        : "remove it (docker node rm) and join it with "
		          "`sandboxd node join`",
		    "swarm node %s has no sandboxd.node label%s", n->hostname,
		    mgr ? " (the manager)" : ": it joined by hand");
		return;
	}
	if (strcmp(n->state, "ready") != 0)
		problem(s, DOCTOR_FAIL,
		        "start its engine, or drain it (`sandboxd node drain`) "
		        "and remove it",
		        "node %s is %s in Swarm", n->name, n->state);
	else if (!n->agent && n->availability[0] &&
	         strcmp(n->availability, "drain") != 0)
		problem(
		    s, DOCTOR_WARN,
		    "its join has not finished: `sandboxd node ls` shows why",
		    "node %s has no sandboxd.agent label", n->name);
	if (!mgr && n->agent)
		agent_check(s, n);
}

void
doctor_swarm(const struct config *cfg, struct doctor_check *c)
{
	struct sw s = {.c = c};
	struct docker *d = NULL;
	struct swarm_info si;
	struct err e = {0};
	char msg[DOCKER_MSG_LEN], path[PATH_MAX + 32];

	if (docker_new(&d, cfg->docker_socket) < 0 ||
	    docker_ping(d, msg) != DOCKER_OK ||
	    swarm_info(d, &si, msg) != DOCKER_OK) {
		c->level = DOCTOR_FAIL;
		snprintf(c->msg, sizeof(c->msg), "cannot ask the engine: %s",
		         d ? msg : "no client");
		goto out;
	}
	if (strcmp(si.state, "active") != 0 || !si.manager) {
		c->level = DOCTOR_FAIL;
		snprintf(c->msg, sizeof(c->msg),
		         "SANDBOXD_ORCHESTRATOR=swarm but this engine is %s",
		         si.manager ? "not in an active swarm"
		                    : "no swarm manager");
		snprintf(c->fix, sizeof(c->fix),
		         "docker swarm init --advertise-addr <this host's "
		         "address> --task-history-limit 2 (docs/deploy.md)");
		goto out;
	}
	snprintf(path, sizeof(path), "%s/state/sandboxd.db", cfg->data_dir);
	if (store_open(&s.store, path) < 0)
		s.store = NULL;
	snprintf(path, sizeof(path), "%s/state/nodeca", cfg->data_dir);
	if (nl_open(&s.nl, path, &e) < 0)
		s.nl = NULL;
	if (s.nl && nl_cert_expires(s.nl) < time(NULL) + DOCTOR_CERT_WARN_S)
		problem(&s, DOCTOR_WARN,
		        "restart the daemon: it makes its certificate again "
		        "when 30 days are left",
		        "the control plane's node certificate ends in under "
		        "%d days",
		        DOCTOR_CERT_WARN_S / 86400);
	if (swarm_nodes(d, node_one, &s, msg) != DOCKER_OK)
		problem(&s, DOCTOR_FAIL, "", "cannot list the nodes: %s", msg);
	if (s.problems == 0)
		snprintf(c->msg, sizeof(c->msg),
		         "swarm manager; %d node(s) ready, labelled and their "
		         "agents answering",
		         s.nodes);
	else if (s.problems > 1)
		snprintf(c->msg + strlen(c->msg),
		         sizeof(c->msg) - strlen(c->msg),
		         " (and %d more problem(s): sandboxd node ls)",
		         s.problems - 1);
	nl_free(s.nl);
	store_close(s.store);
out:
	docker_free(d);
}
