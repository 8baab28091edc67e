/*
 * limits.h - every limit and timing constant of sandboxd-init, in one place.
 * docs/supervisor.md ("Limits") lists them with the reasons; change both
 * together.
 */
#ifndef SUPERVISOR_LIMITS_H
#define SUPERVISOR_LIMITS_H

/* run.conf */
#define CONF_MAX_RECORDS   16          /* web + workers + build */
#define CONF_LINE_MAX      4096        /* bytes per line, without '\n' */
#define CONF_FILE_MAX      (128 << 10) /* the whole file */
#define CONF_NAME_MAX      32          /* worker names */
#define CONF_PATH_MAX      1024        /* health path */
#define CONF_BUILD_MAX_S   86400       /* build timeout */
#define CONF_INSTALL_MAX_S 86400       /* install timeout */
#define CONF_KEY_LEN       64          /* install key: hex SHA-256 */

/* control socket */
#define CTL_LINE_MAX    4096        /* request line, without '\n' */
#define CTL_ANSWER_MAX  (64 << 10)  /* answer, with '\n' */
#define CTL_CLIENTS     8           /* served at once; more wait */
#define CTL_DEADLINE_MS 2000        /* per connection, read + write */
#define CTL_BODY_MAX    (512 << 10) /* a request's body (env), after its line */

/* the app's environment (env) */
#define APPENV_MAX      256 /* variables */
#define APPENV_NAME_MAX 128 /* bytes of a name */

/* process table and restarts */
#define PROCS_MAX          48    /* entries, including stopping ones */
#define PROCS_BACKOFF_MS   1000  /* first restart delay */
#define PROCS_BACKOFF_CAP  60000 /* longest restart delay */
#define PROCS_CRASH_RUNS   6     /* short runs in a row: crashloop */
#define PROCS_SHORT_RUN_MS 30000 /* a run shorter than this is short */
#define PROCS_WORKER_UP_MS 1000  /* worker starting -> running */
#define PROCS_STOP_MS      5000  /* SIGTERM to SIGKILL */

/* logs */
#define LOGS_FILE_MAX     (1 << 20) /* then rotated to .1 */
#define LOGS_CHUNK        4096      /* bytes per read(2) */
#define LOGS_READS_PER_FD 16        /* reads per pipe per loop turn */

/* health check */
#define HEALTH_TIMEOUT_MS  2000 /* connect + answer */
#define HEALTH_FIRST_MS    5    /* first check after a spawn; doubles */
#define HEALTH_STARTING_MS 50   /* longest interval until first ready */
#define HEALTH_READY_MS    5000 /* interval once ready */
#define HEALTH_FAILS       3    /* failures in a row: error */
#define HEALTH_LINE_MAX    256  /* status line bytes read */

/* tasks */
#define TASK_ARGV_MAX           64          /* arguments in argv */
#define TASK_ARGV_BYTES         (512 << 10) /* the argv file */
#define TASK_ENV_MAX            64          /* entries in env */
#define TASK_ENV_BYTES          (64 << 10)  /* the env file */
#define TASK_TIMEOUT_MAX_S      86400       /* task start's timeout */
#define TASK_TEXT_MAX           1024        /* a text field of a steps record */
#define TASK_STEPS_MAX          (64 << 10)  /* a steps file we read */
#define TASK_SHA_OUT_MAX        4096        /* the checkpoint's stdout */
#define TASK_NAME_MAX           4096        /* a path listed in files */
#define TASK_GIT_MS             120000      /* checkpoint, files, revert */
#define TASK_HEALTH_RESTART_MS  90000       /* wait for a restarted web */
#define TASK_HEALTH_STARTING_MS 30000       /* wait for a starting web */
#define TASK_CHECKPOINTS_KEPT   100         /* refs/sandboxd/checkpoints/ */
#define TASK_SCAN_DIRS          1000        /* task dirs looked at at boot */

/* shutdown */
#define INIT_GRACE_MS     5000 /* SIGTERM to SIGKILL */
#define INIT_KILL_WAIT_MS 1000 /* SIGKILL to giving up */

#endif
