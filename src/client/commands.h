/*
 * commands: the client's command table (commands.c) and the commands'
 * entry points (cmd_*.c).  main.c asks cli_handles() whether argv names
 * a client command and hands it to cli_main(); its usage prints
 * cli_usage() after the daemon's own commands.
 */
#ifndef CLIENT_COMMANDS_H
#define CLIENT_COMMANDS_H

#include <stdbool.h>
#include <stdio.h>

#include "client/args.h"
#include "client/client.h"

typedef int (*cli_run_fn)(struct cli *c, const struct cli_args *a);

struct cli_cmd {
	const char *words; /* "sandbox create" */
	const char *synopsis;
	int min_args, max_args; /* positional words after the command */
	cli_run_fn run;
	const struct cli_opt *opts;
	const char *help; /* one line for the usage */
	const char *more; /* more for `help CMD`, or NULL */
};

extern const struct cli_cmd cli_cmds[];

bool cli_handles(int argc, char **argv);
int cli_main(int argc, char **argv);
void cli_usage(FILE *f);
/* The command words of argv[1..] matched against the table, or NULL. */
const struct cli_cmd *cli_cmd_find(int argc, char **argv, int *nwords);

/* cmd_spend.c */
int cmd_spend(struct cli *c, const struct cli_args *a);
int cmd_spend_budget(struct cli *c, const struct cli_args *a);
int cmd_spend_own_calls(struct cli *c, const struct cli_args *a);

/* cmd_apps.c */
int cmd_apps(struct cli *c, const struct cli_args *a);
int cmd_app_create(struct cli *c, const struct cli_args *a);
int cmd_app_show(struct cli *c, const struct cli_args *a);
int cmd_app_export(struct cli *c, const struct cli_args *a);
int cmd_app_delete(struct cli *c, const struct cli_args *a);
int cmd_app_visibility(struct cli *c, const struct cli_args *a);
int cmd_app_link(struct cli *c, const struct cli_args *a);
int cmd_app_unlink(struct cli *c, const struct cli_args *a);
int cmd_app_events(struct cli *c, const struct cli_args *a);
int cmd_trash(struct cli *c, const struct cli_args *a);
int cmd_trash_restore(struct cli *c, const struct cli_args *a);
int cmd_trash_purge(struct cli *c, const struct cli_args *a);
int cmd_snapshot_create(struct cli *c, const struct cli_args *a);
int cmd_snapshot_list(struct cli *c, const struct cli_args *a);
int cmd_snapshot_show(struct cli *c, const struct cli_args *a);
int cmd_snapshot_delete(struct cli *c, const struct cli_args *a);
int cmd_app_restore(struct cli *c, const struct cli_args *a);
int cmd_app_fork(struct cli *c, const struct cli_args *a);
/* cmd_domain.c */
int cmd_domain_add(struct cli *c, const struct cli_args *a);
int cmd_domain_list(struct cli *c, const struct cli_args *a);
int cmd_domain_verify(struct cli *c, const struct cli_args *a);
int cmd_domain_remove(struct cli *c, const struct cli_args *a);
/* cmd_recipes.c */
int cmd_recipes(struct cli *c, const struct cli_args *a);
int cmd_app_inspect(struct cli *c, const struct cli_args *a);
int cmd_app_detect(struct cli *c, const struct cli_args *a);
/*
 * After an imported app's sandbox is made: "Detected <Framework>
 * (<confidence>): <reason>", or what was looked for, or that the app
 * brought its own sandbox.yaml (nothing on --json or -q).  0, or the
 * exit status of the call (its error printed).
 */
int cli_show_detection(struct cli *c, const char *app);
/* cmd_sandbox.c */
int cmd_sb_create(struct cli *c, const struct cli_args *a);
int cmd_sb_show(struct cli *c, const struct cli_args *a);
int cmd_sb_start(struct cli *c, const struct cli_args *a);
int cmd_sb_stop(struct cli *c, const struct cli_args *a);
int cmd_sb_delete(struct cli *c, const struct cli_args *a);
int cmd_sb_logs(struct cli *c, const struct cli_args *a);
int cmd_sb_files(struct cli *c, const struct cli_args *a);
int cmd_sb_cat(struct cli *c, const struct cli_args *a);
int cmd_sb_put(struct cli *c, const struct cli_args *a);
int cmd_sb_url(struct cli *c, const struct cli_args *a);
int cmd_sb_shell(struct cli *c, const struct cli_args *a);
int cmd_sb_exec(struct cli *c, const struct cli_args *a);
/*
 * Polls sandbox sb until its preview is no longer starting (at most
 * CLI_PREVIEW_WAIT_S), with a spinner; its URL into url.  0 ready, -1
 * not ready (error, none, still starting), or an exit status (printed).
 */
int cli_wait_preview(struct cli *c, const char *sb, char *url, size_t len);
/* cmd_task.c */
int cmd_new(struct cli *c, const struct cli_args *a);
int cmd_task_run(struct cli *c, const struct cli_args *a);
int cmd_task_list(struct cli *c, const struct cli_args *a);
int cmd_task_show(struct cli *c, const struct cli_args *a);
int cmd_task_cancel(struct cli *c, const struct cli_args *a);
int cmd_task_revert(struct cli *c, const struct cli_args *a);
int cmd_task_follow(struct cli *c, const struct cli_args *a);
/* cmd_git.c */
int cmd_git_status(struct cli *c, const struct cli_args *a);
int cmd_git_diff(struct cli *c, const struct cli_args *a);
int cmd_git_commit(struct cli *c, const struct cli_args *a);
int cmd_git_push(struct cli *c, const struct cli_args *a);
int cmd_cred_add(struct cli *c, const struct cli_args *a);
int cmd_cred_list(struct cli *c, const struct cli_args *a);
int cmd_cred_delete(struct cli *c, const struct cli_args *a);
/* cmd_agents.c */
int cmd_agents(struct cli *c, const struct cli_args *a);
int cmd_agents_models(struct cli *c, const struct cli_args *a);
int cmd_agent_key(struct cli *c, const struct cli_args *a);
int cmd_agent_login(struct cli *c, const struct cli_args *a);
int cmd_agent_disconnect(struct cli *c, const struct cli_args *a);
int cmd_settings_get(struct cli *c, const struct cli_args *a);
int cmd_settings_set(struct cli *c, const struct cli_args *a);
int cmd_login(struct cli *c, const struct cli_args *a);
/* cmd_node.c */
int cmd_node_ls(struct cli *c, const struct cli_args *a);
int cmd_node_drain(struct cli *c, const struct cli_args *a);
int cmd_node_join_command(struct cli *c, const struct cli_args *a);
/* cmd_publish.c */
int cmd_publish(struct cli *c, const struct cli_args *a);
int cmd_releases(struct cli *c, const struct cli_args *a);
int cmd_rollback(struct cli *c, const struct cli_args *a);
int cmd_unpublish(struct cli *c, const struct cli_args *a);
/* Its pure parts.  bytes as "1.2 MiB" ("-" when negative), seconds as
 * "45s", "3m", "2h", "5d"; a RELEASE argument's number ("3", "#3"), or -1
 * when it is not one (an id); a build log's line with its control bytes
 * as '?', and a newline. */
const char *cli_size_text(long long bytes, char *out, size_t len);
const char *cli_age_text(long long seconds, char *out, size_t len);
long cli_release_number(const char *arg);
void cli_print_log_line(FILE *f, const char *p, size_t n);

#endif
