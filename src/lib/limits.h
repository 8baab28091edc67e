/*
 * Every input limit of the daemon, in one place.  docs/limits.md lists
 * them with the reason for each value; change both together.
 */
#ifndef LIB_LIMITS_H
#define LIB_LIMITS_H

/* API requests */
#define API_MAX_BODY_BYTES  (1u << 20) /* larger bodies: 413 */
#define API_MAX_JSON_DEPTH  32         /* deeper nesting: 400 */
#define API_MAX_NAME_BYTES  200        /* app name */
#define API_MAX_DESC_BYTES  4096       /* app description */
#define API_MAX_TAGS        32         /* tags per app */
#define API_MAX_TAG_BYTES   64         /* bytes per tag */
#define API_MAX_PORTS       8          /* declared ports per sandbox */
#define API_CONN_TIMEOUT_S  60         /* idle or slow API connection */
#define API_THREADS         8          /* request threads */
#define API_MAX_CONNECTIONS 256        /* concurrent API connections */

/* Docker engine responses */
#define DOCKER_MAX_RESPONSE_BYTES (8u << 20)
#define DOCKER_CONNECT_TIMEOUT_MS 2000
#define DOCKER_CALL_TIMEOUT_S     60
#define DOCKER_STOP_GRACE_S       10 /* SIGTERM to SIGKILL on stop */
#define DOCKER_EVENT_LINE_BYTES   (64u << 10)

/* Configuration */
#define CONFIG_ENV_FILE_BYTES (64u << 10)
#define CONFIG_MAX_TOKENS     64

#endif
