/*
 * sandboxd: the daemon ("sandboxd serve") and, in later stages, the
 * command-line client.  serve wires the modules together in dependency
 * order and takes them down in reverse; signals are blocked in every
 * thread and taken synchronously here with sigwait, so no handler ever
 * runs in the middle of anything.
 */
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api/auth.h"
#include "api/server.h"
#include "core/config.h"
#include "core/core.h"
#include "core/reaper.h"
#include "core/runtime.h"
#include "core/task.h"
#include "core/workspace.h"
#include "docker/docker.h"
#include "edge/edge.h"
#include "lib/log.h"
#include "store/store.h"
#include "vault/vault.h"

static void
usage(FILE *f)
{
	fprintf(f,
	        "usage: sandboxd serve      run the daemon in the foreground\n"
	        "       sandboxd token      make a new API token (replaces the "
	        "old one)\n"
	        "       sandboxd version    print the version\n"
	        "Configuration comes from the environment and .env; see "
	        "README.md.\n");
}

static void
wait_for_signal(void)
{
	sigset_t set;
	int sig = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigwait(&set, &sig);
	log_info("received %s; shutting down", strsignal(sig));
}

/*
 * The edge may hold thousands of client and app connections: take the
 * hard limit on open files rather than the usual soft 1024.
 */
static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void
block_signals(void)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static int
open_store(const struct config *cfg, struct store **store)
{
	char path[4200];

	if (workspace_init_dirs(cfg->data_dir) < 0) {
		log_error("SANDBOXD_DATA_DIR: cannot prepare %s",
		          cfg->data_dir);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/state/sandboxd.db", cfg->data_dir);
	if (store_open(store, path) < 0) {
		log_error("cannot open the database %s", path);
		return -1;
	}
	return 0;
}

static int
serve(void)
{
	struct store *store = NULL;
	struct docker *docker = NULL;
	struct api *api = NULL;
	struct edge *edge = NULL;
	struct config cfg;
	struct core core;
	char err[512], msg[DOCKER_MSG_LEN];
	int rc = 1;

	if (config_load(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "sandboxd: configuration error: %s\n", err);
		return 2;
	}
	block_signals();
	raise_nofile();
	if (vault_init() < 0 || open_store(&cfg, &store) < 0 ||
	    docker_new(&docker, cfg.docker_socket) < 0)
		goto out;
	if (cfg.data_dir_legacy)
		log_info("using the legacy data directory %s (it exists and "
		         "/var/lib/sandboxd does not)",
		         cfg.data_dir);
	log_info("sandboxd %s, data in %s", SANDBOXD_VERSION, cfg.data_dir);
	if (core_init(&core, &cfg, store, docker) < 0)
		goto out;
	if (docker_ping(docker, msg) == DOCKER_OK)
		core_reconcile(&core);
	else
		log_warn("%s; sandbox calls answer 503 until it is back", msg);
	if (core_watch_start(&core) < 0 || runtime_start(&core) < 0 ||
	    reaper_start(&core) < 0 || task_init(&core) < 0 ||
	    api_start(&api, &core) < 0)
		goto out_core;
	if (edge_start(&edge, &core) < 0)
		goto out_api;
	printf("sandboxd listening on http://%s\n", cfg.api_addr);
	printf("previews at http://s-<sandbox id>-<port>.preview.%s:%u\n",
	       cfg.preview_domain, cfg.http_port);
	fflush(stdout);
	log_info("listening on http://%s; previews on %s:%u", cfg.api_addr,
	         cfg.edge_addr, cfg.http_port);
	wait_for_signal();
	rc = 0;
	edge_stop(edge);
out_api:
	task_shutdown(&core); /* ends event streams, so the API can stop */
	api_stop(api);
out_core:
	core_release(&core);
out:
	store_close(store);
	docker_free(docker);
	config_release(&cfg);
	return rc;
}

static int
token(void)
{
	struct store *store = NULL;
	struct config cfg;
	char err[512];
	int rc = 1;

	if (config_load(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "sandboxd: configuration error: %s\n", err);
		return 2;
	}
	if (vault_init() == 0 && open_store(&cfg, &store) == 0 &&
	    auth_token_issue(store, "default") == 0)
		rc = 0;
	store_close(store);
	config_release(&cfg);
	return rc;
}

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "token") == 0)
		return token();
	if (argc >= 2 && strcmp(argv[1], "serve") == 0)
		return serve();
	if (argc >= 2 && strcmp(argv[1], "version") == 0) {
		printf("sandboxd %s\n", SANDBOXD_VERSION);
		return 0;
	}
	if (argc >= 2 &&
	    (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0)) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return 2;
}
