/*
 * The operations subcommands (backup.c, doctor.c, gc.c): each takes
 * main()'s argc and argv and returns the exit status.
 */
#ifndef CLI_CLI_H
#define CLI_CLI_H

int cmd_backup(int argc, char **argv);
int cmd_restore(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_gc(int argc, char **argv);

#endif
