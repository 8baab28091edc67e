/*
 * nodeagent: `sandboxd node`, the process that runs on every node of a
 * swarm but the manager's, doing what only the node can (see agent.c):
 * the sandbox network and its egress rules there, the credential
 * proxy's door on that network, and the ops of nodelink.h's table that
 * the control plane calls (containers, exec, the supervisor's socket,
 * previews, files, tar streams, images, events).
 *
 * Its state is <data>/state/node/: the nodelink credentials (ca.pem,
 * cert.pem, key.pem), node.json ({"control": "host:port", "name"}) and
 * network.json (the enroll answer's network object).
 */
#ifndef NODEAGENT_NODEAGENT_H
#define NODEAGENT_NODEAGENT_H

#include "config/config.h"

#define NODEAGENT_DIR "state/node" /* under the data dir */

/* `sandboxd node run`: serves until SIGTERM or SIGINT; the exit status. */
int nodeagent_run(const struct config *cfg);

/*
 * `sandboxd node join`: enrolls with the control plane at control
 * ("host:port") with token, joins this engine to the swarm with the
 * answer's worker token, saves the state above.  name "" is the
 * configured name (or the hostname), addr "" the configured
 * SANDBOXD_NODE_ADDR.  0, or -1 with the reason printed.
 */
int nodeagent_join(const struct config *cfg, const char *control,
                   const char *token, const char *name, const char *addr);

#endif
