/*
 * `sandboxd node join` and `sandboxd node run`: the node agent's
 * commands (src/nodeagent/), run on a server that is to hold sandboxes
 * for a control plane elsewhere.  The other `node` commands (ls, drain,
 * join-command) are the client's and speak to the control plane's API.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "config/config.h"
#include "nodeagent/nodeagent.h"

static const char node_usage[] =
    "usage: sandboxd node join --control HOST:PORT --token TOKEN "
    "[--name NAME] [--addr IP]\n"
    "       sandboxd node run\n";

/* The value after flag argv[i], or NULL (the usage then). */
static const char *
flag_value(int argc, char **argv, int *i)
{
	return *i + 1 < argc ? argv[++*i] : NULL;
}

static int
node_join(const struct config *cfg, int argc, char **argv)
{
	const char *control = NULL, *token = NULL, *name = "", *addr = "";

	for (int i = 3; i < argc; i++) {
		const char **to = strcmp(argv[i], "--control") == 0 ? &control
		                  : strcmp(argv[i], "--token") == 0 ? &token
		                  : strcmp(argv[i], "--name") == 0  ? &name
		                  : strcmp(argv[i], "--addr") == 0  ? &addr
		                                                    : NULL;
		if (to == NULL || (*to = flag_value(argc, argv, &i)) == NULL) {
			fputs(node_usage, stderr);
			return 2;
		}
	}
	if (control == NULL || token == NULL) {
		fputs(node_usage, stderr);
		return 2;
	}
	if (nodeagent_join(cfg, control, token, name, addr) < 0)
		return 1;
	return nodeagent_run(cfg);
}

int
cmd_node(int argc, char **argv)
{
	struct config cfg;
	char err[512];
	int rc;

	if (argc < 3 || (strcmp(argv[2], "join") != 0 &&
	                 (strcmp(argv[2], "run") != 0 || argc != 3))) {
		fputs(node_usage, stderr);
		return 2;
	}
	if (config_load(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "sandboxd: %s\n", err);
		return 1;
	}
	rc = strcmp(argv[2], "join") == 0 ? node_join(&cfg, argc, argv)
	                                  : nodeagent_run(&cfg);
	config_release(&cfg);
	return rc;
}
