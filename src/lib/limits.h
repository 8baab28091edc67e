/*
 * The limits of the API and the edge, and the size of a path buffer;
 * the other modules' limits live beside their code.  docs/limits.md
 * lists every one with the reason for its value; change both together.
 */
#ifndef LIB_LIMITS_H
#define LIB_LIMITS_H

/*
 * A path under a configured directory (the data directory, a workspace,
 * a file of the client's): PATH_MAX and room for the suffixes the code
 * appends.  Buffers that join two such paths add to it.  scripts/lint
 * fails on the bare number as an array size.
 */
#define WORKSPACE_PATH_MAX 4200

/* API requests */
#define API_MAX_BODY_BYTES        (1u << 20)   /* larger bodies: 413 */
#define API_MAX_JSON_DEPTH        32           /* deeper nesting: 400 */
#define API_MAX_NAME_BYTES        200          /* app name */
#define API_MAX_DESC_BYTES        4096         /* app description */
#define API_MAX_TAGS              32           /* tags per app */
#define API_MAX_TAG_BYTES         64           /* bytes per tag */
#define TASK_MAX_MODEL_BYTES      200          /* a task's model name */
#define TASK_MAX_PROMPT_BYTES     (256u << 10) /* a task's prompt */
#define API_MAX_PORTS             8            /* declared ports per sandbox */
#define API_CONN_TIMEOUT_S        60           /* idle or slow API connection */
#define PROXY_MAX_BODY_BYTES      (32u << 20)  /* a request to a provider */
#define PROXY_MAX_HEAD_BYTES      (64u << 10)  /* a provider's response head */
#define PROXY_RING_BYTES          (256u << 10) /* answer bytes held per request */
#define PROXY_ERROR_BODY_MAX      (64u << 10) /* error body kept to classify */
#define PROXY_WRITE_BLOCK         (16u << 10)
#define PROXY_THREADS             4
#define PROXY_CONN_TIMEOUT_S      600 /* a model may think for minutes */
#define PROXY_MAX_CONNECTIONS     1024
#define PROXY_ADDR_MAX_CONNS      16 /* per sandbox address; more: 429 */
#define PROXY_ADDR_MAX_OPEN       24 /* per sandbox address; more: closed */
#define PROXY_ADDR_MAX_BODY_BYTES (64u << 20) /* bodies held per address */
#define PROXY_BACKLOG             128 /* connections waiting for accept */
#define PROXY_RELAY_PENDING       64  /* relayed connections being admitted */
#define PROXY_RELAY_LINE_MAX      160 /* bytes of a relayed one's SBXPEER line */
#define PROXY_RELAY_LINE_MS       2000 /* the time that line may take */
#define PROXY_RELAY_STALE_S       10 /* a relayed fd's node is forgotten after */
#define PROXY_CONNECT_TIMEOUT_MS  10000
#define PROXY_STALL_S             600 /* no byte from the provider for this long */
/* A model call's output reserved when its request names no max_tokens. */
#define PROXY_OUTPUT_DEFAULT_TOKENS 32768
#define API_STREAM_BLOCK            (16u << 10) /* event stream write size */
#define API_PULL_BLOCK              (64u << 10) /* a made body's write size */
#define API_THREADS                 8           /* request threads */
#define API_MAX_CONNECTIONS         256         /* concurrent API connections */

/* Docker engine responses */
#define DOCKER_MAX_RESPONSE_BYTES (8u << 20)
#define DOCKER_CONNECT_TIMEOUT_MS 2000
#define DOCKER_CALL_TIMEOUT_S     60
#define DOCKER_STOP_GRACE_S       10 /* SIGTERM to SIGKILL on stop */
#define DOCKER_EVENT_LINE_BYTES   (64u << 10)

/* Preview edge (src/edge), per client connection unless said otherwise */
#define EDGE_MAX_CONNECTIONS        4096 /* more are closed at accept */
#define EDGE_MAX_CLIENT_CONNECTIONS 128  /* per client address: more get 429 */
#define EDGE_FIRST_BYTE_TIMEOUT_MS  5000 /* a new connection's first byte */
#define EDGE_HEAD_READ_BYTES        4096 /* read at a time while a head is read */
#define EDGE_MEMORY_BUDGET_BYTES    (128u << 20) /* every buffer of the edge */
#define EDGE_SHED_STALL_MS          1000 /* over budget: stalled this long */
#define EDGE_MAX_HEADER_BYTES       (16u << 10) /* request: 431; app: 502 */
#define EDGE_MAX_HEADER_COUNT       128         /* header lines: as above */
#define EDGE_HEADER_TIMEOUT_MS      10000       /* first byte to end of head */
#define EDGE_IDLE_TIMEOUT_MS        60000       /* keep-alive, no request */
#define EDGE_STREAM_IDLE_TIMEOUT_MS 3600000     /* request/tunnel, no bytes */
#define EDGE_CONNECT_TIMEOUT_MS     3000        /* to the app's port */
#define EDGE_LINGER_MS              2000        /* draining a refused request */
#define EDGE_MAX_BUFFERED           (256u << 10) /* per direction */
#define EDGE_ACTIVITY_INTERVAL_MS   1000 /* preview_activity while streaming */
#define EDGE_LISTEN_BACKLOG         1024
/* The console host's /v1 (the API through the edge, console.c) */
#define EDGE_API_MAX_CONNECTIONS    192   /* held to the API, all together */
#define EDGE_API_CLIENT_CONNECTIONS 16    /* per client address: more get 429 */
#define EDGE_API_CLIENT_PREAUTH     4     /* in flight without credentials */
#define EDGE_PREAUTH_TIMEOUT_MS     10000 /* such a request, to its answer */
/* What the edge leaves of the API's connections to its direct clients. */
#define API_DIRECT_RESERVE (API_MAX_CONNECTIONS - EDGE_API_MAX_CONNECTIONS)

/* Trash (trash/trash.c) */
#define TRASH_LIST_MAX 1000 /* entries one listing or purge pass reads */

/* Configuration */
#define CONFIG_ENV_FILE_BYTES (64u << 10)
#define CONFIG_MAX_TOKENS     64

#endif
