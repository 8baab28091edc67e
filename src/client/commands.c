/*
 * The client's command table and dispatch.  A row's words ("sandbox
 * create") are matched against argv[1..]; the row with the most
 * matching words wins, so "git credential add" and "git status" live
 * side by side.  What follows the words is parsed with the row's
 * option table and the global one (args.h) and checked against the
 * row's count of positional words.  The same table prints the usage,
 * `help CMD` and the shell completion, so they cannot drift apart.
 */
#include "client/commands.h"

#include <stdlib.h>
#include <string.h>

#include "client/table.h"
#include "net/http.h"

static const struct cli_opt no_opts[] = {{0}};
static const struct cli_opt yes_opts[] = {
    {.name = "yes", .short_name = 'y', .help = "do not ask"},
    {0},
};
static const struct cli_opt restore_opts[] = {
    {.name = "name",
     .value = true,
     .help = "N: restore under this name (a newer app has its name)"},
    {0},
};
static const struct cli_opt drain_opts[] = {
    {.name = "to", .value = true, .help = "NODE: move the sandboxes there"},
    {.name = "wait", .help = "wait until every sandbox is moved"},
    {0},
};
static const struct cli_opt snap_opts[] = {
    {.name = "name", .value = true, .help = "N: the snapshot's name"},
    {0},
};
static const struct cli_opt fork_opts[] = {
    {.name = "snapshot",
     .value = true,
     .help = "S: from this snapshot (default: a new one of now)"},
    {.name = "name", .value = true, .help = "N: the new app's name"},
    {.name = "copy-config", .help = "copy the app's config, secrets too"},
    {.name = "copy-budget", .help = "copy the app's spend budgets"},
    {0},
};
static const struct cli_opt new_opts[] = {
    {.name = "preset",
     .value = true,
     .help = "P: the runtime preset (react-vite)"},
    {.name = "name", .value = true, .help = "N: the app's name"},
    {.name = "agent", .value = true, .help = "A: opencode or claude-code"},
    {.name = "model", .value = true, .help = "M: the model"},
    {.name = "timeout", .value = true, .help = "S: the task's timeout"},
    {0},
};
static const struct cli_opt app_create_opts[] = {
    {.name = "preset",
     .value = true,
     .help = "P: react-vite, fastapi, node-express, static, nextjs, worker"},
    {.name = "git", .value = true, .help = "URL: import this https repository"},
    {.name = "branch", .value = true, .help = "B: the import branch"},
    {.name = "credential", .value = true, .help = "C: a git credential's id"},
    {.name = "no-import",
     .help = "with --git: make the app only (sandbox create imports it)"},
    {.name = "description", .value = true, .help = "D: a description"},
    {.name = "visibility",
     .value = true,
     .help = "V: the preview, public or private (default: the server's)"},
    {0},
};
static const struct cli_opt detect_opts[] = {
    {.name = "recipe",
     .value = true,
     .help = "ID: this recipe (sandboxd recipes lists them)"},
    {.name = "force", .help = "replace a sandbox.yaml sandboxd did not write"},
    {0},
};
static const struct cli_opt export_opts[] = {
    {.name = "output",
     .short_name = 'o',
     .value = true,
     .help = "FILE: write here (- for stdout; default NAME.zip)"},
    {.name = "git", .help = "include the app's .git directory"},
    {0},
};
static const struct cli_opt events_opts[] = {
    {.name = "limit", .value = true, .help = "N: the last N events (20)"},
    {.name = "type",
     .value = true,
     .help = "T: only events whose type starts with T (task.)"},
    {.name = "follow", .short_name = 'f', .help = "go on with new events"},
    {0},
};
static const struct cli_opt link_opts[] = {
    {.name = "ttl",
     .value = true,
     .help = "S: seconds the link and its cookie last (86400)"},
    {.name = "path", .value = true, .help = "P: where it lands (/)"},
    {0},
};
static const struct cli_opt exec_opts[] = {
    {.name = "tty", .short_name = 't', .help = "with a terminal (a PTY)"},
    {0},
};
static const struct cli_opt wait_opts[] = {
    {.name = "wait", .help = "until the preview answers (at most 90 s)"},
    {0},
};
static const struct cli_opt sb_create_opts[] = {
    {.name = "wait", .help = "until the preview answers (at most 90 s)"},
    {.name = "port",
     .short_name = 'p',
     .value = true,
     .help = "N: a port (repeat; the first is the preview's)"},
    {0},
};
static const struct cli_opt logs_opts[] = {
    {.name = "follow", .short_name = 'f', .help = "keep printing new lines"},
    {.name = "tail",
     .short_name = 'n',
     .value = true,
     .help = "N: the last N lines (200)"},
    {0},
};
static const struct cli_opt files_opts[] = {
    {.name = "recursive", .short_name = 'r', .help = "the whole tree"},
    {0},
};
static const struct cli_opt task_run_opts[] = {
    {.name = "agent", .value = true, .help = "A: opencode or claude-code"},
    {.name = "model", .value = true, .help = "M: the model"},
    {.name = "continue", .help = "continue the agent's previous session"},
    {.name = "no-continue", .help = "start a new session"},
    {.name = "timeout", .value = true, .help = "S: seconds (0: the default)"},
    {.name = "follow", .short_name = 'f', .help = "follow the task to its end"},
    {.name = "image",
     .value = true,
     .help = "FILE: attach a PNG, JPEG, GIF or WebP (repeat, at most 4)"},
    {0},
};
static const struct cli_opt follow_opts[] = {
    {.name = "since", .value = true, .help = "N: only events after N"},
    {0},
};
static const struct cli_opt commit_opts[] = {
    {.name = "message",
     .short_name = 'm',
     .value = true,
     .help = "MSG: the commit message"},
    {0},
};
static const struct cli_opt push_opts[] = {
    {.name = "branch", .value = true, .help = "B: the new remote branch"},
    {0},
};
static const struct cli_opt cred_opts[] = {
    {.name = "host", .value = true, .help = "H: the git server (host[:port])"},
    {.name = "username", .value = true, .help = "U: the user name"},
    {0},
};
static const struct cli_opt scope_opts[] = {
    {.name = "instance", .help = "the instance-wide default (operators)"},
    {0},
};

static const struct cli_opt budget_opts[] = {
    {.name = "tokens", .value = true, .help = "N: at most N tokens"},
    {.name = "usd", .value = true, .help = "X: at most X US dollars"},
    {.name = "none", .help = "no budget of its own"},
    {0},
};
static const struct cli_opt publish_opts[] = {
    {.name = "commit", .value = true, .help = "C: build this commit"},
    {.name = "snapshot", .value = true, .help = "S: build this snapshot"},
    {.name = "label", .value = true, .help = "L: the host's first label"},
    {.name = "follow", .short_name = 'f', .help = "stream the build's log"},
    {0},
};

const struct cli_cmd cli_cmds[] = {
    {"new", "\"PROMPT\" [--preset P] [--name N] [--agent A] [--model M]", 1, 1,
     cmd_new, new_opts,
     "an app, its sandbox and a task, followed live; the preview URL",
     "Does the whole quickstart: makes an app (preset react-vite unless\n"
     "--preset), its sandbox, runs the prompt as a task, follows it to its\n"
     "end and prints the preview URL once the preview is ready.  The exit\n"
     "status is the task's (see `sandboxd help task follow`).  With -q it\n"
     "prints the app, sandbox and task ids, one a line."},
    {"apps", "", 0, 0, cmd_apps, no_opts, "list the apps", NULL},
    {"app create",
     "NAME [--preset P | --git URL [--branch B] [--credential C] "
     "[--no-import]] [--visibility V]",
     1, 1, cmd_app_create, app_create_opts, "make an app", NULL},
    {"app show", "APP", 1, 1, cmd_app_show, no_opts, "show an app", NULL},
    {"app inspect", "APP", 1, 1, cmd_app_inspect, no_opts,
     "the app's sandbox.yaml and the framework detected in its files", NULL},
    {"app detect", "APP [--recipe ID] [--force]", 1, 1, cmd_app_detect,
     detect_opts, "write the detected (or chosen) recipe's sandbox.yaml",
     "Detection runs again on the app's files (or --recipe picks the\n"
     "recipe), its sandbox.yaml is written, committed, and the running\n"
     "sandbox restarts its processes.  A sandbox.yaml sandboxd did not\n"
     "write is refused (manifest_is_users) unless --force."},
    {"recipes", "", 0, 0, cmd_recipes, no_opts,
     "the frameworks sandboxd detects, and how it runs each", NULL},
    {"app export", "APP [-o FILE] [--git]", 1, 1, cmd_app_export, export_opts,
     "download the app's files as a zip",
     "Writes NAME.zip (the app's name) in the current directory, or FILE\n"
     "(-o; - for stdout), through FILE.part, renamed once whole: a broken\n"
     "download leaves nothing behind.  Dependency folders, build caches\n"
     "and symbolic links are left out; .git only with --git (docs/api.md,\n"
     "\"Export\")."},
    {"spend", "", 0, 0, cmd_spend, no_opts,
     "what the tenant and each app spent on models, and their budgets",
     "Tokens and dollars the credential proxy counted from the providers'\n"
     "usage fields, for the tenant and each app, with the budgets that\n"
     "stop model calls when reached (docs/api.md, Spend)."},
    {"spend budget", "APP (--tokens N | --usd X)… | APP --none", 1, 1,
     cmd_spend_budget, budget_opts, "set an app's spend budget", NULL},
    {"spend own-calls", "APP (--tokens N | --usd X)… | APP --none", 1, 1,
     cmd_spend_own_calls, budget_opts,
     "let an app make model calls of its own, with their own budget",
     "A sandbox's proxy token works only while one of its tasks runs.\n"
     "With a budget here the app itself (its running code) may call the\n"
     "models between tasks too, counted against this budget (and the\n"
     "app's and tenant's); --none takes the permission back."},
    {"app delete", "APP [--yes]", 1, 1, cmd_app_delete, yes_opts,
     "delete an app and its sandbox (into the trash: restorable)",
     "The app goes to the trash for the daemon's retention\n"
     "(SANDBOXD_TRASH_RETENTION_SECONDS, default 72 hours) and the command\n"
     "prints how to restore it (`sandboxd trash restore ID`).  With a\n"
     "retention of 0 it is gone at once, and the workspace is the only\n"
     "copy of the app's files unless they were pushed.  It asks first,\n"
     "unless --yes.  Without a terminal to ask on, --yes is required."},
    {"app visibility", "APP public|private|default", 2, 2, cmd_app_visibility,
     no_opts, "who may see the app's preview",
     "private: only a browser signed in to the console, or one that opened\n"
     "a link of `sandboxd app link`, sees the preview; anyone else gets the\n"
     "page of an unknown address.  default: the server's\n"
     "SANDBOXD_PREVIEW_VISIBILITY.  A change revokes the links and cookies\n"
     "given before."},
    {"app link", "APP [--ttl S] [--path P]", 1, 1, cmd_app_link, link_opts,
     "a one-time link to the app's private preview, for one person",
     "The link opens once, in one browser, which then sees the preview\n"
     "until the link's time is up (--ttl, 10 to 604800 seconds, default a\n"
     "day).  A restart of the server voids links not opened yet.  -q prints\n"
     "the URL only."},
    {"app unlink", "APP", 1, 1, cmd_app_unlink, no_opts,
     "revoke every preview link and cookie of the app", NULL},
    {"app events", "APP [--limit N] [--type T] [--follow]", 1, 1,
     cmd_app_events, events_opts, "what happened to the app, and who did it",
     "The app's activity timeline, oldest of the last N first: time, type,\n"
     "who (a token's name, console, system) and what.  --follow goes on\n"
     "with each new event as it happens, resuming when the connection\n"
     "drops, until Ctrl-C.  --json prints each event's object, -q its id."},
    {"trash", "", 0, 0, cmd_trash, no_opts,
     "list deleted apps that can be restored", NULL},
    {"trash restore", "ID [--name N]", 1, 1, cmd_trash_restore, restore_opts,
     "bring a deleted app back, with a new sandbox from its workspace", NULL},
    {"trash purge", "ID [--yes]", 1, 1, cmd_trash_purge, yes_opts,
     "remove a deleted app for good now", NULL},
    {"snapshot create", "APP [--name N]", 1, 1, cmd_snapshot_create, snap_opts,
     "snapshot an app's files (a running app is paused briefly)",
     "The app's files and its git repository, dependencies by reference\n"
     "to the store; not its processes (docs/snapshots.md).  -q prints the\n"
     "snapshot's id."},
    {"snapshot list", "[APP]", 0, 1, cmd_snapshot_list, no_opts,
     "the snapshots of an app, or of every app", NULL},
    {"snapshot show", "SNAP", 1, 1, cmd_snapshot_show, no_opts,
     "show a snapshot (size, method, pause, task, commit)", NULL},
    {"snapshot delete", "SNAP [--yes]", 1, 1, cmd_snapshot_delete, yes_opts,
     "delete a snapshot", NULL},
    {"app restore", "APP SNAP", 2, 2, cmd_app_restore, no_opts,
     "put an app back on a snapshot's files (undoable)",
     "A snapshot of the app as it is comes first; the command prints how\n"
     "to restore to it (the undo).  Refused while a task runs."},
    {"app fork",
     "APP [--snapshot S] [--name N] [--copy-config] "
     "[--copy-budget]",
     1, 1, cmd_app_fork, fork_opts,
     "a new app from a snapshot of this one, with its own sandbox",
     "The source keeps serving.  Its config (secrets) and budgets are\n"
     "copied only with --copy-config and --copy-budget.  -q prints the\n"
     "new app's id."},
    {"node ls", "", 0, 0, cmd_node_ls, no_opts,
     "the cluster's nodes: status, sandboxes, memory, disk",
     "More than one server (SANDBOXD_ORCHESTRATOR=swarm): the manager\n"
     "first.  SANDBOXES is running/total; MEMORY what is available of the\n"
     "total at the last heartbeat; RESERVED the running sandboxes'\n"
     "reservations; SEEN the last answered heartbeat.  -q prints names."},
    {"node drain", "NODE [--to NODE] [--wait]", 1, 1, cmd_node_drain,
     drain_opts, "move every sandbox off a node, then retire it",
     "Each sandbox is stopped if it ran, its workspace copied, its\n"
     "service re-pinned and started again: its preview URL does not\n"
     "change.  Without --to, each goes to the ready node with the most\n"
     "memory available.  --wait prints the progress until the end."},
    {"node join-command", "", 0, 0, cmd_node_join_command, no_opts,
     "print the command that joins a new node (works once, for an hour)",
     "Run the printed `sandboxd node join …` on the new server, as root,\n"
     "with its Docker engine running.  `sandboxd node run` then runs an\n"
     "enrolled node's agent (docs/deploy.md)."},
    {"domain add", "APP HOST", 2, 2, cmd_domain_add, no_opts,
     "give a published app a custom domain (checked at once)",
     "HOST is a DNS name whose A record points at this server (or a CNAME\n"
     "to the app's <label>.<PUBLISH_DOMAIN>).  A domain that does not yet\n"
     "point here stays pending: the command prints what is missing and the\n"
     "records to create; the server checks it again every few minutes."},
    {"domain list", "APP", 1, 1, cmd_domain_list, no_opts,
     "an app's custom domains and their verification", NULL},
    {"domain verify", "APP HOST", 2, 2, cmd_domain_verify, no_opts,
     "check a custom domain now (DNS, else the HTTP check)", NULL},
    {"domain remove", "APP HOST", 2, 2, cmd_domain_remove, no_opts,
     "stop serving an app at a custom domain", NULL},
    {"sandbox create", "APP [--port N]… [--wait]", 1, 1, cmd_sb_create,
     sb_create_opts, "make and start the app's sandbox", NULL},
    {"sandbox show", "SB", 1, 1, cmd_sb_show, no_opts, "show a sandbox", NULL},
    {"sandbox start", "SB [--wait]", 1, 1, cmd_sb_start, wait_opts,
     "start a stopped sandbox", NULL},
    {"sandbox stop", "SB", 1, 1, cmd_sb_stop, no_opts,
     "stop a sandbox (frees RAM, keeps files)", NULL},
    {"sandbox delete", "SB [--yes]", 1, 1, cmd_sb_delete, yes_opts,
     "delete a sandbox and its workspace", NULL},
    {"sandbox logs", "SB [PROCESS] [--follow] [--tail N]", 1, 2, cmd_sb_logs,
     logs_opts, "a process's log (default: web)",
     "--follow asks again every second and prints the lines that came\n"
     "since; Ctrl-C ends it."},
    {"sandbox files", "SB [PATH] [--recursive]", 1, 2, cmd_sb_files, files_opts,
     "list the app's files", NULL},
    {"sandbox cat", "SB PATH", 2, 2, cmd_sb_cat, no_opts, "print a file", NULL},
    {"sandbox put", "SB PATH < FILE", 2, 2, cmd_sb_put, no_opts,
     "write a file from stdin (at most 16 MiB)", NULL},
    {"sandbox url", "SB", 1, 1, cmd_sb_url, no_opts, "print the preview URL",
     NULL},
    {"sandbox shell", "SB", 1, 1, cmd_sb_shell, no_opts,
     "a shell in the sandbox, as the sandbox user, in the app directory",
     "An interactive login shell (bash, else sh) with a terminal: raw mode,\n"
     "the window's size followed.  The exit status is the shell's."},
    {"sandbox exec", "SB [-t] -- CMD [ARG]…", 2, CLI_MAX_WORDS, cmd_sb_exec,
     exec_opts, "run a command in the sandbox",
     "stdin is passed to it (closed at its end), its stdout and stderr\n"
     "come apart, and its exit status is ours.  No terminal unless -t.\n"
     "At most 15 words of command."},
    {"task run",
     "SB \"PROMPT\" [--agent A] [--model M] [--continue] [--timeout S] "
     "[--image FILE]… [--follow]",
     2, 2, cmd_task_run, task_run_opts, "give a prompt to the sandbox's agent",
     NULL},
    {"task list", "SB", 1, 1, cmd_task_list, no_opts,
     "the sandbox's tasks, newest first", NULL},
    {"task show", "SB TASK", 2, 2, cmd_task_show, no_opts, "show a task", NULL},
    {"task cancel", "SB TASK", 2, 2, cmd_task_cancel, no_opts,
     "cancel a running task", NULL},
    {"task revert", "SB TASK", 2, 2, cmd_task_revert, no_opts,
     "restore the files to before the task", NULL},
    {"task follow", "SB TASK [--since N]", 2, 2, cmd_task_follow, follow_opts,
     "follow a task's events live to its end",
     "Prints the phases, the agent's text, its tool calls and the files\n"
     "they touch, the build's result and the token use as they come; a\n"
     "dropped connection is resumed where it stopped (Last-Event-ID).\n"
     "Exit status: 0 succeeded, 10 failed, 11 cancelled, 12 timed out,\n"
     "13 the stream could not be resumed, 130 Ctrl-C (the task runs on).\n"
     "--json prints each event's data, one JSON object a line."},
    {"git status", "APP", 1, 1, cmd_git_status, no_opts,
     "the app repository's changes", NULL},
    {"git diff", "APP", 1, 1, cmd_git_diff, no_opts, "the diff against HEAD",
     NULL},
    {"git commit", "APP -m MESSAGE", 1, 1, cmd_git_commit, commit_opts,
     "commit every change", NULL},
    {"git push", "APP [--branch B]", 1, 1, cmd_git_push, push_opts,
     "push HEAD to a new branch of the app's remote", NULL},
    {"git credential add", "NAME --host H [--username U] < TOKEN", 1, 1,
     cmd_cred_add, cred_opts,
     "store a token for https remotes (from stdin or a prompt)", NULL},
    {"git credential list", "", 0, 0, cmd_cred_list, no_opts,
     "the stored git credentials", NULL},
    {"git credential delete", "ID", 1, 1, cmd_cred_delete, no_opts,
     "delete a git credential", NULL},
    {"agents", "[--instance]", 0, 0, cmd_agents, scope_opts,
     "the coding agents and their credentials", NULL},
    {"agents models", "[AGENT]", 0, 1, cmd_agents_models, no_opts,
     "the models an agent offers, and which are usable now",
     "The models the price table knows for the providers the agent\n"
     "reaches, with its default and free models.  USABLE: a credential\n"
     "for it is stored (or it is the free model).  A task may still name\n"
     "any other model (--model)."},
    {"agent key", "AGENT [--instance] < KEY", 1, 1, cmd_agent_key, scope_opts,
     "store an agent's API key (from stdin or a prompt, never argv)", NULL},
    {"agent login", "claude-code [--instance]", 1, 1, cmd_agent_login,
     scope_opts,
     "sign in with a Claude subscription (prints a URL, reads the code)", NULL},
    {"agent disconnect", "AGENT [--instance]", 1, 1, cmd_agent_disconnect,
     scope_opts, "remove an agent's key or sign-in", NULL},
    {"settings", "", 0, 0, cmd_settings_get, no_opts, "show the settings",
     NULL},
    {"settings get", "[KEY]", 0, 1, cmd_settings_get, no_opts,
     "show the settings (or one)", NULL},
    {"settings set", "KEY VALUE [--instance]", 2, 2, cmd_settings_set,
     scope_opts,
     "change a setting (a dotted key: agents.default_models.opencode)", NULL},
    {"publish", "APP [--commit C] [--snapshot S] [--label L] [--follow]", 1, 1,
     cmd_publish, publish_opts,
     "build a release of the app and serve it at its own address",
     "The build runs in a container of its own (the preview goes on); a\n"
     "failed build leaves the release before it serving.  --follow streams\n"
     "the build's log and exits 0 with the URL once the release is ready,\n"
     "1 with the error when it failed, 130 on Ctrl-C (the build goes on).\n"
     "-q prints the release's id (with --follow, the URL)."},
    {"releases", "APP", 1, 1, cmd_releases, no_opts,
     "the app's releases, newest first; * marks the one served", NULL},
    {"rollback", "APP RELEASE", 2, 2, cmd_rollback, no_opts,
     "serve a kept release again, at once (no build)",
     "RELEASE is a release's id or its number (3 or #3)."},
    {"unpublish", "APP [--yes]", 1, 1, cmd_unpublish, yes_opts,
     "stop serving the app (its releases are kept)", NULL},
    {"login", "[--api URL]", 0, 0, cmd_login, no_opts,
     "store the API's URL and a token in the client's config file", NULL},
    {"completion", "bash|zsh", 1, 1, NULL, no_opts,
     "print the shell completion script", NULL},
    {NULL},
};

/* How many words of row's words match argv[1..]; 0 unless all do. */
static int
match(const char *words, int argc, char **argv)
{
	char buf[64], *save = NULL, *w;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", words);
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (1 + n >= argc || strcmp(argv[1 + n], w) != 0)
			return 0;
		n++;
	}
	return n;
}

const struct cli_cmd *
cli_cmd_find(int argc, char **argv, int *nwords)
{
	const struct cli_cmd *best = NULL;
	int most = 0;

	for (const struct cli_cmd *c = cli_cmds; c->words; c++) {
		int n = match(c->words, argc, argv);
		if (n > most) {
			most = n;
			best = c;
		}
	}
	*nwords = most;
	return best;
}

static bool cli_handles_words(int argc, char **argv);

/* Whether word is the first word of a row. */
static bool
is_first_word(const char *word)
{
	size_t n = strlen(word);

	for (const struct cli_cmd *c = cli_cmds; c->words; c++)
		if (strncmp(c->words, word, n) == 0 &&
		    (c->words[n] == ' ' || c->words[n] == '\0'))
			return true;
	return false;
}

/*
 * Global options may come before the command (`sandboxd --json apps`):
 * they are moved after its words, into moved (argc + 1 slots).  The
 * number of words argv then has.
 */
static int
leading_opts(int argc, char **argv, char **moved)
{
	int i = 1, n = 1;

	while (i < argc && argv[i][0] == '-' && argv[i][1] != '\0') {
		const struct cli_opt *o = cli_global_opts;
		const char *w = argv[i] + (argv[i][1] == '-' ? 2 : 1);

		for (; o->name; o++)
			if (argv[i][1] == '-'
			        ? strncmp(w, o->name, strlen(o->name)) == 0 &&
			              (w[strlen(o->name)] == '\0' ||
			               w[strlen(o->name)] == '=')
			        : (w[0] == o->short_name && w[1] == '\0'))
				break;
		if (o->name == NULL)
			break;
		i += o->value && strchr(w, '=') == NULL ? 2 : 1;
	}
	if (i > argc)
		i = argc;
	moved[0] = argv[0];
	for (int k = i; k < argc; k++)
		moved[n++] = argv[k];
	for (int k = 1; k < i; k++)
		moved[n++] = argv[k];
	moved[n] = NULL;
	return i;
}

bool
cli_handles(int argc, char **argv)
{
	char **moved = calloc((size_t)argc + 1, sizeof(*moved));
	bool yes;

	if (moved == NULL)
		return false;
	if (leading_opts(argc, argv, moved) > 1) {
		yes = cli_handles_words(argc, moved);
		free(moved);
		return yes;
	}
	free(moved);
	return cli_handles_words(argc, argv);
}

/*
 * Commands under a client word that are the daemon's (main.c's table):
 * `node join` and `node run` run the node agent, not an API call.
 */
static const char *const agent_words[][2] = {
    {"node", "join"},
    {"node", "run"},
};

static bool
cli_handles_words(int argc, char **argv)
{
	if (argc < 2)
		return false;
	for (size_t i = 0;
	     argc >= 3 && i < sizeof(agent_words) / sizeof(agent_words[0]); i++)
		if (strcmp(argv[1], agent_words[i][0]) == 0 &&
		    strcmp(argv[2], agent_words[i][1]) == 0)
			return false;
	if (strcmp(argv[1], "help") == 0)
		return argc >= 3 && is_first_word(argv[2]);
	return is_first_word(argv[1]);
}

#define SYN_COL 38

static void
usage_row(FILE *f, const struct cli_cmd *c)
{
	int n = fprintf(f, "       sandboxd %s", c->words);

	if (n + 2 > SYN_COL)
		fprintf(f, "\n%*s", SYN_COL, "");
	else
		fprintf(f, "%*s", SYN_COL - n, "");
	fprintf(f, "%s\n", c->help);
}

void
cli_usage(FILE *f)
{
	fprintf(f, "client commands (talk to the API; `sandboxd help CMD` for "
	           "more):\n");
	for (const struct cli_cmd *c = cli_cmds; c->words; c++)
		usage_row(f, c);
	fprintf(f, "client options: --api URL, --token TOKEN, --json, -q, "
	           "--no-color; exit codes in docs/cli.md\n");
}

static void
print_opts(FILE *f, const struct cli_opt *o, const char *title)
{
	if (o == NULL || o->name == NULL)
		return;
	fprintf(f, "%s:\n", title);
	for (; o->name; o++) {
		char lead[64];
		int n;
		const char *h = o->help ? o->help : "";
		const char *colon = o->value ? strstr(h, ": ") : NULL;

		n = snprintf(lead, sizeof(lead),
		             o->short_name ? "-%c, " : "%c   ",
		             o->short_name ? o->short_name : ' ');
		snprintf(lead + n, sizeof(lead) - (size_t)n, "--%s%s%.*s",
		         o->name, colon ? " " : "",
		         colon ? (int)(colon - h) : 0, h);
		fprintf(f, "  %-26s %s\n", lead, colon ? colon + 2 : h);
	}
}

/* `help CMD…` or `CMD --help`: one row, or every row of a group. */
static int
help(FILE *f, int argc, char **argv)
{
	int nw = 0;
	const struct cli_cmd *c = cli_cmd_find(argc, argv, &nw);
	size_t glen = strlen(argv[1]);

	if (c) {
		fprintf(f, "usage: sandboxd %s %s\n%s\n", c->words, c->synopsis,
		        c->help);
		if (c->more)
			fprintf(f, "\n%s\n", c->more);
		print_opts(f, c->opts, "\noptions");
		print_opts(f, cli_global_opts, "\nclient options");
		return 0;
	}
	fprintf(f, "usage:\n");
	for (c = cli_cmds; c->words; c++)
		if (strncmp(c->words, argv[1], glen) == 0 &&
		    c->words[glen] == ' ')
			fprintf(f, "  sandboxd %s %s\n      %s\n", c->words,
			        c->synopsis, c->help);
	return 0;
}

/* --- completion ----------------------------------------------------------- */

static void
words_after(FILE *f, const char *prefix)
{
	size_t plen = strlen(prefix);
	const char *seen[64];
	int nseen = 0;

	for (const struct cli_cmd *c = cli_cmds; c->words; c++) {
		const char *w = c->words, *end;
		char word[32];
		bool dup = false;

		if (plen && (strncmp(w, prefix, plen) != 0 || w[plen] != ' '))
			continue;
		w += plen ? plen + 1 : 0;
		end = strchr(w, ' ');
		snprintf(word, sizeof(word), "%.*s",
		         (int)(end ? (size_t)(end - w) : strlen(w)), w);
		for (int i = 0; i < nseen; i++)
			dup = dup || strncmp(seen[i], w, strlen(word)) == 0;
		if (dup || nseen >= 64)
			continue;
		seen[nseen++] = w;
		fprintf(f, " %s", word);
	}
}

static int
completion(const char *shell)
{
	static const char *const daemon_words =
	    "serve token secrets network version help";

	if (strcmp(shell, "bash") != 0 && strcmp(shell, "zsh") != 0)
		return cli_fail(CLI_EUSAGE, "usage",
		                "completion: bash or zsh, not %s", shell);
	if (strcmp(shell, "zsh") == 0)
		printf(
		    "# zsh: sandboxd completion zsh > ~/.zsh/_sandboxd-bash; "
		    "source it from .zshrc\nautoload -U +X bashcompinit && "
		    "bashcompinit\n");
	printf("# bash completion for sandboxd (sandboxd completion bash)\n"
	       "_sandboxd() {\n"
	       "\tlocal cur=${COMP_WORDS[COMP_CWORD]} words\n"
	       "\tlocal path=\"${COMP_WORDS[*]:1:COMP_CWORD-1}\"\n"
	       "\tcase $path in\n");
	printf("\t\"\") words=\"%s", daemon_words);
	words_after(stdout, "");
	printf("\" ;;\n");
	/* Every group of rows: its next words, then each row's options. */
	for (const struct cli_cmd *c = cli_cmds; c->words; c++) {
		const char *sp = strchr(c->words, ' ');
		const char *sp2 = sp ? strchr(sp + 1, ' ') : NULL;

		if (sp && (c == cli_cmds ||
		           strncmp(c[-1].words, c->words,
		                   (size_t)(sp - c->words) + 1) != 0)) {
			char g[32];
			snprintf(g, sizeof(g), "%.*s", (int)(sp - c->words),
			         c->words);
			printf("\t%s) words=\"", g);
			words_after(stdout, g);
			printf("\" ;;\n");
		}
		if (sp2 && strncmp(c[-1].words, c->words,
		                   (size_t)(sp2 - c->words) + 1) != 0) {
			char g[48];
			snprintf(g, sizeof(g), "%.*s", (int)(sp2 - c->words),
			         c->words);
			printf("\t\"%s\") words=\"", g);
			words_after(stdout, g);
			printf("\" ;;\n");
		}
	}
	for (const struct cli_cmd *c = cli_cmds; c->words; c++) {
		printf("\t\"%s\"*) words=\"", c->words);
		for (const struct cli_opt *o = c->opts; o && o->name; o++)
			printf("--%s ", o->name);
		for (const struct cli_opt *o = cli_global_opts; o->name; o++)
			printf("--%s ", o->name);
		printf("\" ;;\n");
	}
	printf("\tsecrets) words=\"rotate check\" ;;\n"
	       "\tnetwork) words=\"show remove\" ;;\n"
	       "\thelp) words=\"");
	words_after(stdout, "");
	printf("\" ;;\n\tesac\n"
	       "\tCOMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
	       "}\n"
	       "complete -o default -F _sandboxd sandboxd\n");
	return 0;
}

static int cli_run(int argc, char **argv);

int
cli_main(int argc, char **argv)
{
	char **moved = calloc((size_t)argc + 1, sizeof(*moved));
	int rc;

	if (moved == NULL)
		return cli_fail(CLI_EFAIL, "internal", "out of memory");
	leading_opts(argc, argv, moved);
	rc = cli_run(argc, moved);
	free(moved);
	return rc;
}

static int
cli_run(int argc, char **argv)
{
	const struct cli_cmd *cmd;
	struct cli_args a;
	struct cli c;
	char err[256];
	int nw = 0, rc;

	if (strcmp(argv[1], "help") == 0)
		return help(stdout, argc - 1, argv + 1);
	cmd = cli_cmd_find(argc, argv, &nw);
	if (cmd == NULL || nw == 0) {
		/* A group's word alone or with an unknown verb. */
		if (argc >= 3 && (strcmp(argv[argc - 1], "--help") == 0 ||
		                  strcmp(argv[argc - 1], "-h") == 0))
			return help(stdout, 2, argv);
		if (argc >= 3)
			return cli_fail(CLI_EUSAGE, "usage",
			                "%s %s: no such command; see `sandboxd "
			                "help %s`",
			                argv[1], argv[2], argv[1]);
		return cli_fail(CLI_EUSAGE, "usage",
		                "%s: what to do? see `sandboxd help %s`",
		                argv[1], argv[1]);
	}
	if (cli_args_parse(cmd->opts, cli_global_opts, argc - 1 - nw,
	                   argv + 1 + nw, &a, err, sizeof(err)) < 0)
		return cli_fail(CLI_EUSAGE, "usage",
		                "%s; usage: sandboxd %s %s", err, cmd->words,
		                cmd->synopsis);
	if (cli_args_has(&a, "help"))
		return help(stdout, 1 + nw, argv);
	if (a.npos < cmd->min_args || a.npos > cmd->max_args)
		return cli_fail(CLI_EUSAGE, "usage",
		                "%s arguments; usage: sandboxd %s %s",
		                a.npos < cmd->min_args ? "missing" : "too many",
		                cmd->words, cmd->synopsis);
	if (cmd->run == NULL)
		return completion(a.pos[0]);
	rc = cli_setup(&c, &a);
	if (rc != 0)
		return rc;
	if (http_global_init() < 0)
		return cli_fail(CLI_EFAIL, "internal", "cannot start libcurl");
	rc = cmd->run(&c, &a);
	explicit_bzero(c.token, sizeof(c.token));
	http_global_cleanup();
	fflush(stdout);
	return rc;
}
