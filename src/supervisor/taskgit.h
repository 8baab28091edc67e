/*
 * taskgit.h - the git steps of a task (checkpoint, files, revert) as sh
 * scripts, run as `/bin/sh -c <script> sh <id> <arg>` in the app dir
 * (docs/supervisor.md, "Tasks").
 */
#ifndef SUPERVISOR_TASKGIT_H
#define SUPERVISOR_TASKGIT_H

enum taskgit_step {
	TASKGIT_CHECKPOINT, /* arg: how many checkpoint refs to keep; prints
	                       the commit id on stdout */
	TASKGIT_FILES,      /* arg: the checkpoint; prints the changed paths,
	                       each terminated by a NUL, on stdout */
	TASKGIT_REVERT,     /* arg: the checkpoint; prints nothing */
};

/* The script of a step.  Errors go to stderr; the exit status is git's. */
const char *taskgit_script(enum taskgit_step step);

#endif
