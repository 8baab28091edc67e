/*
 * The subcommands main() hands over to: the daemon (serve.c) and the
 * operations subcommands (backup.c, doctor.c, gc.c), which take main()'s
 * argc and argv.  Each returns the exit status.
 */
#ifndef CLI_CLI_H
#define CLI_CLI_H

/* `sandboxd serve`: runs until SIGINT or SIGTERM. */
int serve(void);
int cmd_backup(int argc, char **argv);
int cmd_restore(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_gc(int argc, char **argv);
/* `sandboxd node join|run` (node.c): the node agent. */
int cmd_node(int argc, char **argv);

#endif
