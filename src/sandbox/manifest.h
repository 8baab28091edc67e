/*
 * sandbox.yaml: the app's declaration of what runs in its sandbox.  The
 * only module that includes yaml.h.  manifest_parse() is a pure function
 * of the text; errors name the field ("web.port: …").  The supervisor
 * never sees YAML: manifest_runconf() renders the tab-separated run.conf
 * it reads (docs/supervisor.md).
 */
#ifndef SANDBOX_MANIFEST_H
#define SANDBOX_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"

#define MANIFEST_MAX_BYTES               (64u << 10)
#define MANIFEST_MAX_WORKERS             15
#define MANIFEST_MAX_COMMAND             4000
#define MANIFEST_NAME_LEN                32
#define MANIFEST_MAX_INPUTS              8
#define MANIFEST_INPUT_LEN               255
#define MANIFEST_INSTALL_TIMEOUT_DEFAULT 900
#define MANIFEST_OUTPUT_LEN              255

struct manifest_proc {
	char name[MANIFEST_NAME_LEN + 1];
	char command[MANIFEST_MAX_COMMAND + 1];
	int port;              /* web only */
	char health_path[256]; /* web only */
	bool restart_after_task;
};

/*
 * publish: how the app is built for production and how its release is
 * served (docs/publish.md).  output set: a static release (the files of
 * that directory, "." the app's files as they are); else command: a
 * server release.  port and health_path default to web's; timeout_s 0
 * means the daemon's setting.
 */
struct manifest_publish {
	char build[MANIFEST_MAX_COMMAND + 1]; /* "" none */
	char output[MANIFEST_OUTPUT_LEN + 1];
	bool spa;
	char command[MANIFEST_MAX_COMMAND + 1];
	int port; /* 0: none (a server without a web process) */
	char health_path[256];
	int timeout_s;
};

struct manifest {
	bool has_web;
	struct manifest_proc web;
	struct manifest_proc workers[MANIFEST_MAX_WORKERS];
	int nworkers;
	bool has_build;
	char build_command[MANIFEST_MAX_COMMAND + 1];
	int build_timeout_s;
	/* install: {command, inputs, timeout_seconds}: run by the supervisor
	 * before the processes whenever the install key changes. */
	bool has_install;
	char install_command[MANIFEST_MAX_COMMAND + 1];
	char install_inputs[MANIFEST_MAX_INPUTS][MANIFEST_INPUT_LEN + 1];
	int ninstall_inputs;
	bool install_inputs_set; /* inputs: given (else the defaults apply) */
	int install_timeout_s;
	/* Filled by the control plane (runtime_install_key) before
	 * manifest_runconf; an install record is rendered only with it. */
	char install_key[65];
	bool has_publish;
	struct manifest_publish publish;
};

/* 0, or -1 with a message naming the field in err. */
int manifest_parse(const char *text, size_t len, struct manifest *m, char *err,
                   size_t errlen);
/*
 * The default when an app has no sandbox.yaml: "npm run dev" when it has
 * a package.json, else a static file server, on port.
 */
void manifest_default(struct manifest *m, int port, bool has_package_json);
int manifest_runconf(const struct manifest *m, struct buf *out);

#endif
