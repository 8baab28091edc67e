/*
 * sandboxd: the daemon ("sandboxd serve", serve.c), the maintenance
 * commands (secrets, tokens, the network) and the command-line client
 * (src/client/commands.c, handed argv when it names a client command).
 * `secrets check` may run next to the daemon; `secrets rotate` refuses
 * to (a lock in the data directory).
 * The subcommands are a table, commands[], that main() looks argv up in
 * and the usage is printed from.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/auth.h"
#include "api/session.h"
#include "cli/cli.h"
#include "cli/setup.h"
#include "client/commands.h"
#include "config/config.h"
#include "docker/docker.h"
#include "git/git.h"
#include "lib/log.h"
#include "sbnet/sbnet.h"
#include "store/store.h"
#include "vault/vault.h"

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

	if (cli_lock_secrets(cfg, false) < 0 ||
	    cli_open_vault(cfg, store, true, &v, how, sizeof(how)) < 0)
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
	if (cli_lock_secrets(cfg, true) < 0 ||
	    cli_open_vault(cfg, store, false, &v, how, sizeof(how)) < 0)
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
	if (vault_init() == 0 && cli_open_store(&cfg, &store) == 0)
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
	/* instead of run: given the configuration and the open store */
	int (*with_store)(const struct config *cfg, struct store *store);
	const char *help;
	/* A row with a sub taking more words after it; looked up before
	 * the client's commands, which share its first word ("node"). */
	bool more;
};

static const struct command commands[] = {
    {.name = "serve", .run = serve, .help = "run the daemon in the foreground"},
    {.name = "token",
     .with_store = token_issue,
     .help = "make a new API token (replaces the old one)"},
    {.name = "setup-code",
     .exact = true,
     .with_store = setup_code,
     .help = "print the console's one-time setup code\n"
             "(until a console password is set)"},
    {.name = "secrets",
     .sub = "rotate",
     .with_store = secrets_rotate,
     .help = "re-seal every stored secret with a new master key\n"
             "(the daemon must be stopped)"},
    {.name = "secrets",
     .sub = "check",
     .with_store = secrets_check,
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
    {.name = "node",
     .sub = "join",
     .more = true,
     .run_args = cmd_node,
     .help = "--control HOST:PORT --token TOKEN [--name N] [--addr IP]:\n"
             "enroll this server with a control plane, join its swarm\n"
             "and run the node agent (the command `node join-command`\n"
             "prints)"},
    {.name = "node",
     .sub = "run",
     .run_args = cmd_node,
     .help = "run this server's node agent (once it has joined)"},
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
		if (c->sub && ((c->more ? argc < 3 : argc != 3) ||
		               strcmp(argv[2], c->sub) != 0))
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

	c = command_find(argc, argv);
	if (c && c->sub && strcmp(c->name, "node") == 0)
		return c->run_args(argc, argv);
	if (cli_handles(argc, argv))
		return cli_main(argc, argv);

	if (c == NULL) {
		usage(stderr);
		return 2;
	}
	if (c->with_store)
		return with_store(c->with_store);
	return c->run_args ? c->run_args(argc, argv) : c->run();
}
