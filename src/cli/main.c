/*
 * sandboxd: the daemon ("sandboxd serve") and the command-line client
 * (src/client/commands.c, handed argv when it names a client command).
 * serve wires the modules together in dependency order and takes them
 * down in reverse; signals are blocked in every
 * thread and taken synchronously here with sigwait, so no handler ever
 * runs in the middle of anything.  The master keys are loaded after the
 * store is open (they are checked against what it holds) and before
 * anything can ask for a secret.  `secrets check` may run next to the
 * daemon; `secrets rotate` refuses to (a lock in the data directory).
 * The subcommands are a table, commands[], that main() looks argv up in
 * and the usage is printed from.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/auth.h"
#include "api/server.h"
#include "api/session.h"
#include "client/commands.h"
#include "cli/cli.h"
#include "config/config.h"
#include "sandbox/core.h"
#include "cred/credentials.h"
#include "disk/dedup.h"
#include "disk/diskuse.h"
#include "preview/preview.h"
#include "preview/pvauth.h"
#include "reaper/reaper.h"
#include "trash/trash.h"
#include "sandbox/runtime.h"
#include "sbnet/sbnet.h"
#include "task/task.h"
#include "ws/workspace.h"
#include "docker/docker.h"
#include "edge/edge.h"
#include "git/git.h"
#include "lib/log.h"
#include "proxy/proxy.h"
#include "store/store.h"
#include "task/task.h"
#include "vault/vault.h"

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

/*
 * The secrets lock: the daemon holds it shared, `secrets rotate`
 * exclusive, for as long as the process lives.
 */
static int
lock_secrets(const struct config *cfg, bool exclusive)
{
	if (vault_lock(cfg->data_dir, exclusive) >= 0)
		return 0;
	if (errno != EWOULDBLOCK)
		log_error("cannot lock %s/%s: %s", cfg->data_dir,
		          VAULT_LOCK_FILE, strerror(errno));
	else if (exclusive)
		log_error("sandboxd is running on %s: stop it first (`secrets "
		          "rotate` never runs next to the daemon)",
		          cfg->data_dir);
	else
		log_error("`sandboxd secrets rotate` is running on %s; start "
		          "again when it has finished",
		          cfg->data_dir);
	return -1;
}

/*
 * The master keys, checked against the key ids of what the store holds
 * (vault_load).  how gets where the sealing key came from.
 */
static int
open_vault(const struct config *cfg, struct store *store, bool read_only,
           struct vault **out, char *how, size_t howlen)
{
	struct vault_source src = {
	    .data_dir = cfg->data_dir,
	    .env_key = cfg->secrets_key,
	    .env_previous = cfg->secrets_key_previous,
	    .read_only = read_only,
	};
	struct vault_usage *use = NULL;
	char err[1024];
	size_t n = 0;
	int rc;

	if (store_secret_usage(store, &use, &n) < 0) {
		log_error("cannot read the stored secrets");
		return -1;
	}
	src.use = use;
	src.nuse = n;
	rc = vault_load(out, &src, how, howlen, err, sizeof(err));
	free(use);
	if (rc < 0) {
		log_error("secrets: %s", err);
		return -1;
	}
	store_set_vault(store, *out);
	return 0;
}

/*
 * Once the keys are loaded their text is not needed: wiped from the
 * configuration and from the environment (which /proc shows).
 */
static void
forget_key_text(struct config *cfg)
{
	static const char *const names[] = {"SANDBOXD_SECRETS_KEY",
	                                    "SANDBOXD_SECRETS_KEY_PREVIOUS"};
	char **fields[] = {&cfg->secrets_key, &cfg->secrets_key_previous};

	for (size_t i = 0; i < 2; i++) {
		char *v = getenv(names[i]);
		if (v) {
			vault_wipe(v, strlen(v));
			unsetenv(names[i]);
		}
		if (*fields[i]) {
			vault_wipe(*fields[i], strlen(*fields[i]));
			free(*fields[i]);
			*fields[i] = NULL;
		}
	}
}

/* What serve() starts, so that stop_all() can take down what did. */
struct daemon {
	struct core core;
	struct api *api;
	struct edge *edge;
	struct proxy *proxy;
	struct cred_refresher *refresher;
	struct trash *trash;
};

/*
 * Every long-lived thread is started here, in dependency order, and
 * stopped by stop_all() in the reverse order (docs/design.md, "Threads").
 * Anything that fails leaves the rest unstarted; stop_all() copes.  The
 * handles of the network, dedup and disk-use modules are made first,
 * before any thread that reads them from the core runs.
 */
static int
start_all(struct daemon *d)
{
	struct core *c = &d->core;

	if ((c->net = sbnet_new(c->cfg, c->docker, c->instance)) == NULL ||
	    (c->dedup = dedup_new(c->cfg)) == NULL ||
	    (c->du = diskuse_new(c->cfg, c->store, c->dedup)) == NULL)
		return -1;
	if (sbnet_start(c->net) < 0 || core_watch_start(c) < 0 ||
	    runtime_start(c) < 0 || reaper_start(c) < 0 ||
	    dedup_start(c->dedup) < 0 || diskuse_start(c->du) < 0 ||
	    task_init(c) < 0 || trash_start(&d->trash, c) < 0 ||
	    core_hook_add(c, CORE_SANDBOX_DELETED, task_forget_sandbox) < 0 ||
	    api_start(&d->api, c) < 0 || proxy_start(&d->proxy, c) < 0 ||
	    cred_refresher_start(&d->refresher, c->store, c->cfg) < 0 ||
	    preview_init(c) < 0 || edge_start(&d->edge, c) < 0)
		return -1;
	return 0;
}

/*
 * The reverse of start_all, each thread joined before the next stops.
 * One exception: the tasks end their event streams before the API
 * stops, since libmicrohttpd waits for the suspended connections.  The
 * first stop sets core.stopping, which every core loop watches.
 * Wake threads (preview.c) are detached and short; the wake table goes
 * last, then the module handles start_all made.
 */
static void
stop_all(struct daemon *d)
{
	struct core *c = &d->core;

	edge_stop(d->edge);
	cred_refresher_stop(d->refresher);
	proxy_stop(d->proxy);
	task_shutdown(c); /* ends event streams, so the API can stop */
	api_stop(d->api);
	trash_stop(d->trash);
	diskuse_stop(c->du);
	dedup_stop(c->dedup);
	reaper_stop(c);
	runtime_stop(c);
	core_watch_stop(c);
	sbnet_stop(c->net);
	task_free(c);
	preview_release(c);
	diskuse_free(c->du);
	dedup_free(c->dedup);
	sbnet_free(c->net);
	c->du = NULL;
	c->dedup = NULL;
	c->net = NULL;
}

static int
serve(void)
{
	struct store *store = NULL;
	struct docker *docker = NULL;
	struct vault *vault = NULL;
	struct daemon d = {0};
	struct config cfg;
	char err[512], msg[DOCKER_MSG_LEN], how[PATH_MAX];
	int rc = 1;

	if (config_load(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "sandboxd: configuration error: %s\n", err);
		return 2;
	}
	block_signals();
	raise_nofile();
	if (vault_init() < 0 || open_store(&cfg, &store) < 0 ||
	    lock_secrets(&cfg, false) < 0 ||
	    open_vault(&cfg, store, false, &vault, how, sizeof(how)) < 0 ||
	    docker_new(&docker, cfg.docker_socket) < 0)
		goto out;
	forget_key_text(&cfg);
	if (cfg.data_dir_legacy)
		log_info("using the legacy data directory %s (it exists and "
		         "/var/lib/sandboxd does not)",
		         cfg.data_dir);
	log_info("sandboxd %s, data in %s", SANDBOXD_VERSION, cfg.data_dir);
	log_info("secrets: sealed with key %s (%s)", vault_key_id(vault, 0),
	         how);
	/* core, then what sits on it: the runtime's handle and private
	 * previews, which forget a deleted app by core's hook. */
	if (core_init(&d.core, &cfg, store, docker) < 0 ||
	    runtime_init(&d.core) < 0 || pvauth_init(&d.core) < 0 ||
	    core_hook_add(&d.core, CORE_APP_DELETED, pvauth_drop) < 0)
		goto out_core;
	/* Interrupted trash moves first: reconcile then sees whole rows. */
	trash_recover(&d.core);
	if (docker_ping(docker, msg) == DOCKER_OK)
		core_reconcile(&d.core);
	else
		log_warn("%s; sandbox calls answer 503 until it is back", msg);
	if (start_all(&d) == 0) {
		printf("sandboxd listening on http://%s\n", cfg.api_addr);
		printf(
		    "previews at http://s-<sandbox id>-<port>.preview.%s:%u\n",
		    cfg.preview_domain, cfg.http_port);
		fflush(stdout);
		log_info("listening on http://%s; previews on %s:%u",
		         cfg.api_addr, cfg.edge_addr, (unsigned)cfg.edge_port);
		wait_for_signal();
		rc = 0;
	}
	stop_all(&d);
out_core:
	pvauth_release(&d.core);
	runtime_free(&d.core);
	core_release(&d.core);
out:
	store_close(store);
	vault_free(vault);
	docker_free(docker);
	config_release(&cfg);
	return rc;
}

/*
 * `secrets check`: opens every stored secret with the keys the daemon
 * would load and prints counts, never a value.  Read-only: it creates,
 * renames and re-seals nothing.  Exit status 1 when a secret does not
 * open.
 */
static int
secrets_check(const struct config *cfg, struct store *store)
{
	struct vault *v = NULL;
	char how[PATH_MAX];
	int64_t ok, bad;
	int rc = 1;

	if (lock_secrets(cfg, false) < 0 ||
	    open_vault(cfg, store, true, &v, how, sizeof(how)) < 0)
		goto out;
	if (store_secret_check(store, &ok, &bad) < 0) {
		log_error("cannot read the stored secrets");
		goto out;
	}
	printf("secrets: %lld stored, %lld open, %lld do not; key %s (%s)\n",
	       (long long)(ok + bad), (long long)ok, (long long)bad,
	       vault_key_id(v, 0) ? vault_key_id(v, 0) : "none yet", how);
	rc = bad ? 1 : 0;
out:
	store_set_vault(store, NULL);
	vault_free(v);
	return rc;
}

/*
 * `secrets rotate`: every stored secret re-sealed with a new master key
 * in one transaction.  With secret.key: the new key goes to
 * secret.key.next first and replaces secret.key last (vault.h, step by
 * step), so a crash anywhere loses nothing.  With SANDBOXD_SECRETS_KEY:
 * the old key is SANDBOXD_SECRETS_KEY_PREVIOUS, the new one
 * SANDBOXD_SECRETS_KEY, and no file is involved.
 */
static int
secrets_rotate(const struct config *cfg, struct store *store)
{
	struct vault *v = NULL;
	char how[PATH_MAX], err[1024], old[VAULT_KEY_ID_LEN + 1];
	int64_t n = 0;
	int rc = 1;

	if (cfg->secrets_key && cfg->secrets_key_previous == NULL) {
		log_error("secrets rotate: with SANDBOXD_SECRETS_KEY set, the "
		          "new key is SANDBOXD_SECRETS_KEY and the old one "
		          "SANDBOXD_SECRETS_KEY_PREVIOUS: set both");
		return 1;
	}
	if (lock_secrets(cfg, true) < 0 ||
	    open_vault(cfg, store, false, &v, how, sizeof(how)) < 0)
		goto out;
	snprintf(old, sizeof(old), "%s", vault_key_id(v, 0));
	if (cfg->secrets_key == NULL &&
	    vault_rotate_begin(v, cfg->data_dir, err, sizeof(err)) < 0) {
		log_error("secrets rotate: %s", err);
		goto out;
	}
	if (store_secret_reseal(store, &n) < 0) {
		log_error("secrets rotate: nothing was changed; every secret "
		          "is still under key %s",
		          old);
		goto out;
	}
	if (cfg->secrets_key == NULL &&
	    vault_rotate_finish(cfg->data_dir, err, sizeof(err)) < 0) {
		log_error("secrets rotate: the secrets are under the new key "
		          "in %s/%s, which the daemon will use: %s",
		          cfg->data_dir, VAULT_NEXT_FILE, err);
		goto out;
	}
	printf("secrets: %lld re-sealed with key %s (was %s); %s\n",
	       (long long)n, vault_key_id(v, 0), old,
	       cfg->secrets_key ? "SANDBOXD_SECRETS_KEY_PREVIOUS is no longer "
	                          "needed"
	                        : "back up secret.key with the data directory");
	rc = 0;
out:
	store_set_vault(store, NULL);
	vault_free(v);
	return rc;
}

/*
 * The configuration and the store opened for fn, which gives the exit
 * status; 2 on a configuration error, 1 when the store does not open.
 */
static int
with_store(int (*fn)(const struct config *, struct store *))
{
	struct store *store = NULL;
	struct config cfg;
	char err[512];
	int rc = 1;

	if (config_load(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "sandboxd: configuration error: %s\n", err);
		return 2;
	}
	if (vault_init() == 0 && open_store(&cfg, &store) == 0)
		rc = fn(&cfg, store);
	store_close(store);
	config_release(&cfg);
	return rc;
}

static int
token_issue(const struct config *cfg, struct store *store)
{
	(void)cfg;
	return auth_token_issue(store, "default") == 0 ? 0 : 1;
}

static int
setup_code(const struct config *cfg, struct store *store)
{
	return session_code_print(store, cfg->data_dir);
}

/*
 * `network remove` (for uninstalling and for tests) and `network show`
 * (the ruleset for the configured policy, with placeholder addresses
 * when the network is not up).
 */
static int
network(bool show)
{
	struct docker *docker = NULL;
	struct config cfg;
	char err[512];
	int rc = 1;

	if (config_load(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "sandboxd: configuration error: %s\n", err);
		return 2;
	}
	if (show) {
		rc = sbnet_show(&cfg, stdout) < 0;
	} else if (docker_new(&docker, cfg.docker_socket) == 0) {
		rc = sbnet_remove(&cfg, docker, err, sizeof(err)) < 0;
		if (rc)
			fprintf(stderr, "sandboxd: %s\n", err);
	}
	docker_free(docker);
	config_release(&cfg);
	return rc;
}

static int
cmd_token(void)
{
	return with_store(token_issue);
}

static int
cmd_setup_code(void)
{
	return with_store(setup_code);
}

static int
cmd_secrets_rotate(void)
{
	return with_store(secrets_rotate);
}

static int
cmd_secrets_check(void)
{
	return with_store(secrets_check);
}

static int
cmd_network_show(void)
{
	return network(true);
}

static int
cmd_network_remove(void)
{
	return network(false);
}

static int
cmd_version(void)
{
	printf("sandboxd %s\n", SANDBOXD_VERSION);
	return 0;
}

static void usage(FILE *f);

static int
cmd_help(void)
{
	usage(stdout);
	return 0;
}

/*
 * The subcommands.  argv[1] is name; a row with a sub takes argv[2] ==
 * sub and nothing after it, an exact row nothing after name, any other
 * row ignores further words.  help is the usage text (a line per '\n'),
 * NULL for a row the usage does not list.  No match: the usage on
 * stderr, exit status 2.
 */
struct command {
	const char *name;
	const char *sub;
	bool exact;
	int (*run)(void);
	int (*run_args)(int argc, char **argv); /* instead of run */
	const char *help;
};

static const struct command commands[] = {
    {.name = "serve", .run = serve, .help = "run the daemon in the foreground"},
    {.name = "token",
     .run = cmd_token,
     .help = "make a new API token (replaces the old one)"},
    {.name = "setup-code",
     .exact = true,
     .run = cmd_setup_code,
     .help = "print the console's one-time setup code\n"
             "(until a console password is set)"},
    {.name = "secrets",
     .sub = "rotate",
     .run = cmd_secrets_rotate,
     .help = "re-seal every stored secret with a new master key\n"
             "(the daemon must be stopped)"},
    {.name = "secrets",
     .sub = "check",
     .run = cmd_secrets_check,
     .help = "open every stored secret; print only counts"},
    {.name = "network",
     .sub = "show",
     .run = cmd_network_show,
     .help = "print the nftables rules the egress policy installs"},
    {.name = "network",
     .sub = "remove",
     .run = cmd_network_remove,
     .help = "remove the egress rules and the sandbox network\n"
             "(when sandboxd made it and no sandbox is on it)"},
    {.name = "backup",
     .run_args = cmd_backup,
     .help = "DIR [--workspaces]: a consistent backup, also while\n"
             "the daemon runs (docs/operations.md)"},
    {.name = "restore",
     .run_args = cmd_restore,
     .help = "DIR [--force]: restore a backup (the daemon stopped)"},
    {.name = "doctor",
     .run_args = cmd_doctor,
     .help = "[--json]: check the host and name a fix for each problem"},
    {.name = "gc",
     .run_args = cmd_gc,
     .help = "[--yes]: list (with --yes remove) unused images and trash"},
    /* internal: the daemon runs it for pushes and imports */
    {.name = "git-helper", .exact = true, .run = gitws_helper_main},
    {.name = "version", .run = cmd_version, .help = "print the version"},
    {.name = "help", .run = cmd_help},
    {.name = "--help", .run = cmd_help},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))
/* The column where a command's help starts. */
#define HELP_COL 27

/*
 * "usage: sandboxd serve      run ...": a synopsis too long for the
 * help column gets a line of its own, and each line of the help starts
 * at the column.
 */
static void
usage(FILE *f)
{
	const char *lead = "usage: ";

	for (size_t i = 0; i < NCOMMANDS; i++) {
		const struct command *c = &commands[i];
		const char *h, *nl;
		int n;

		if (c->help == NULL)
			continue;
		n = fprintf(f, "%ssandboxd %s%s%s", lead, c->name,
		            c->sub ? " " : "", c->sub ? c->sub : "");
		if (n + 2 > HELP_COL)
			fprintf(f, "\n%*s", HELP_COL, "");
		else
			fprintf(f, "%*s", HELP_COL - n, "");
		for (h = c->help; (nl = strchr(h, '\n')) != NULL; h = nl + 1)
			fprintf(f, "%.*s\n%*s", (int)(nl - h), h, HELP_COL, "");
		fprintf(f, "%s\n", h);
		lead = "       ";
	}
	fprintf(f, "Configuration comes from the environment and .env; see "
	           "README.md.\n");
	cli_usage(f);
}

static const struct command *
command_find(int argc, char **argv)
{
	for (size_t i = 0; argc >= 2 && i < NCOMMANDS; i++) {
		const struct command *c = &commands[i];

		if (strcmp(argv[1], c->name) != 0)
			continue;
		if (c->sub && (argc != 3 || strcmp(argv[2], c->sub) != 0))
			continue;
		if (c->exact && argc != 2)
			continue;
		return c;
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	const struct command *c;

	if (cli_handles(argc, argv))
		return cli_main(argc, argv);
	c = command_find(argc, argv);

	if (c == NULL) {
		usage(stderr);
		return 2;
	}
	return c->run_args ? c->run_args(argc, argv) : c->run();
}
