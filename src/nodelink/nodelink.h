/*
 * nodelink: the channel between the control plane (CP) and node agents:
 * mutual TLS (GnuTLS; this module is the only one to include it) with a
 * CA the control plane owns, one request per connection.
 *
 * Frame: the client sends a u32 big-endian length and a JSON header of
 * at most NL_HDR_MAX bytes, {"op": "...", ...}.  The server answers with
 * a u32 length and a JSON answer of at most NL_ANS_MAX bytes:
 * {"ok": true, ...} or {"ok": false, "status": 409, "code": "...",
 * "message": "..."}.  A unary op then closes.  A stream op, after an ok
 * answer, carries raw bytes both ways until each side has closed its
 * half (TLS close_notify); "tar_in" and "image_load" end with the
 * server's trailer, one JSON line {"ok":…,"bytes":N,…}\n, after the
 * client's half-close.
 *
 * Roles are in the certificate's OU: "sandboxd-control" (the CP) or
 * "sandboxd-node" (an agent); CN is the node's name.  A peer with no
 * certificate has role NL_ROLE_NONE (only the CP's "enroll" takes it).
 *
 * The op table (the contract between the CP and agents):
 *
 *   agent (port SANDBOXD_NODE_PORT), from NL_ROLE_CONTROL only:
 *     facts {}                     -> {name, swarm_id, data_dir, engine_api,
 *                                      mem_total, mem_available, disk_free,
 *                                      disk_total, default_runtime, version,
 *                                      subnet, gateway}
 *     sb_inspect {name}            -> {exists, id, running, paused,
 *                                      oom_killed, exit_code, status, ip,
 *                                      image_id}   (the local container)
 *     sb_pause {name, pause}       -> {}
 *     sb_postart {name, memory}    -> {} after MemorySwap=Memory is set and
 *                                      NoNewPrivs 1 / CapEff 0 are checked
 *     sb_logs_tail {name, lines}   -> {text}
 *     exec_create {container, cmd[], env[], user, workdir, tty} -> {id}
 *     exec_start  {id, tty}        stream: the exec's raw stream
 *     exec_resize {id, cols, rows} -> {}
 *     exec_inspect {id}            -> {running, exit_code}
 *     sup {sandbox}                stream: <ws>/.sandboxd/sock
 *     preview {sandbox, port}      stream: the sandbox's port (the agent
 *                                  finds its IP itself; never an address
 *                                  from the wire)
 *     ws_stat {sandbox, path}      -> {type, size, mode, mtime}
 *     ws_read {sandbox, path, off, max<=NL_WS_CHUNK}
 *                                  -> {data (base64), eof, size}
 *     ws_write {sandbox, path, data (base64), off, mode, truncate} -> {}
 *     ws_list {sandbox, path}      -> {entries: [{name, type, size, mtime}]}
 *     ws_delete {sandbox, path}    -> {}
 *     ws_mkdir {sandbox, path}     -> {}
 *     ws_usage {sandbox}           -> {bytes}
 *     ws_trash {sandbox}           -> {}   (the workspace to the node's trash)
 *     ws_rename {sandbox, dir, from, to} -> {} wsfs_move beneath dir
 *     tar_out {sandbox, exclude_deps} stream: a tar of the workspace, then EOF
 *     tar_in {sandbox, bytes_max}  stream: client sends a tar and half-closes;
 *                                  trailer {"ok", "bytes", "message"}.
 *                                  Written to <id>.incoming, fsynced, renamed.
 *     git {sandbox}                stream: frames of git/helper.c (a u32
 *                                  length, network order, and JSON) to a
 *                                  git helper the agent starts for its
 *                                  workspace of sandbox; status, diff and
 *                                  commit requests only (git/relay.c)
 *     app_in {sandbox, bytes_max}  stream: as tar_in, into the workspace's
 *                                  workspace/app.new (a stale one removed
 *                                  first), fsynced; trailer
 *     app_swap {sandbox, drop}     -> {} app.new exchanged with
 *                                  workspace/app in one rename, the old
 *                                  tree removed (drop: app.new removed)
 *     image_has {id}               -> {has}
 *     image_load {id}              stream: `docker save` bytes in; trailer
 *     events {}                    stream: JSON lines {name, action,
 *                                  exit_code} of sandboxd containers
 *   control plane (port SANDBOXD_CLUSTER_PORT):
 *     enroll {token, name, addr, pubkey (PEM), facts{}}   from NL_ROLE_NONE
 *                                  -> {ca, cert (PEM), name, swarm_token,
 *                                      swarm_addr}
 *     proxy {}                     stream, from NL_ROLE_NODE: relayed into
 *                                  the CP's credential proxy
 *     renew {pubkey (PEM)}         from NL_ROLE_NODE -> {cert (PEM)}: signed
 *                                  for the caller's CN (p->name) and its
 *                                  row's address, once p->fp is checked
 *                                  against the row (nl_renew is the agent's
 *                                  side)
 *
 * A certificate stays valid until it expires: the CP's handlers check
 * p->name (and p->fp) against its node rows, so a removed node is
 * refused although its certificate still verifies.
 */
#ifndef NODELINK_NODELINK_H
#define NODELINK_NODELINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/jv.h"

#define NL_HDR_MAX    (64u << 10)
#define NL_ANS_MAX    (1u << 20)
#define NL_WS_CHUNK   (512u << 10) /* ws_read/ws_write bytes per call */
#define NL_CALL_MS    15000        /* a unary op's deadline */
#define NL_PEER_CONNS 64  /* per address; the CP's, once proven, apart */
#define NL_STREAMS    512 /* streams at once, all peers */

enum nl_role { NL_ROLE_NONE = 0, NL_ROLE_CONTROL = 1, NL_ROLE_NODE = 2 };

struct nodelink; /* credentials: CA, own certificate and key, role */

/*
 * Loads <dir>/ca.pem, cert.pem, key.pem (0600).  NULL-safe free.
 */
int nl_open(struct nodelink **out, const char *dir, struct err *e);
void nl_free(struct nodelink *nl);
enum nl_role nl_role(const struct nodelink *nl);
const char *nl_name(const struct nodelink *nl); /* the certificate's CN */

/*
 * Client.  addr is "host:port".  The server must present a certificate
 * of this CA with the role want (NL_ROLE_NODE when calling an agent).
 * -1 with e: 503 node_down when it cannot connect or times out, the
 * answer's status/code/message when it says ok false (*ans NULL, and
 * for nl_stream *fd -1, on any failure).
 */
int nl_call(struct nodelink *nl, const char *addr, enum nl_role want,
            const struct jv *req, struct jv **ans, int timeout_ms,
            struct err *e);
/*
 * A stream op: *fd is one end of a socketpair whose other end a pump
 * thread joins to the TLS session, so the caller reads and writes plain
 * bytes and shutdown(SHUT_WR) is the half-close.  *ans (may be NULL) is
 * the server's first answer.
 */
int nl_stream(struct nodelink *nl, const char *addr, enum nl_role want,
              const struct jv *req, struct jv **ans, int *fd, struct err *e);
/* The same with this side's idle limit (as struct nl_op's idle_ms). */
int nl_stream_idle(struct nodelink *nl, const char *addr, enum nl_role want,
                   const struct jv *req, struct jv **ans, int *fd, int idle_ms,
                   struct err *e);

/* Server. */
struct nl_peer {
	enum nl_role role;
	char name[64]; /* CN; "" for NL_ROLE_NONE */
	char ip[64];
	char fp[72]; /* hex SHA-256 of its certificate, "" none */
};
struct nl_op {
	const char *name;
	unsigned roles; /* bit (1u << role) for each role allowed */
	/* Exactly one of: */
	int (*unary)(void *arg, const struct nl_peer *p, const struct jv *req,
	             struct jv **ans, struct err *e);
	/* Returns 0 and *fd: the server pumps TLS <-> *fd until both sides
	 * closed, then closes *fd.  *ans (may stay NULL) extends {"ok":true}.
	 */
	int (*stream)(void *arg, const struct nl_peer *p, const struct jv *req,
	              struct jv **ans, int *fd, struct err *e);
	/* A stream's idle limit: 0 is NL_STREAM_IDLE_MS (10 min), -1 none
	 * (a quiet stream such as events, or a terminal with limits of its
	 * own); a write the other side does not take still times out. */
	int idle_ms;
};
struct nl_server;
/* Listens on addr ("ip:port") and serves ops, a thread per connection
 * (bounded).  nl NULL-role connections are taken only for ops allowing
 * NL_ROLE_NONE. */
int nl_server_start(struct nl_server **out, struct nodelink *nl,
                    const char *addr, const struct nl_op *ops, size_t nops,
                    void *arg, struct err *e);
void nl_server_stop(struct nl_server *s);
unsigned nl_server_port(const struct nl_server *s);

/* Joins two fds (sockets) in a thread of its own until both halves are
 * closed (or NL_STREAM_IDLE_MS pass with no byte), then closes both:
 * the relays' one pump.  -1 (both closed at once) when NL_STREAMS
 * pumps run already or no thread could start. */
int nl_pump(int a, int b);

/*
 * The CA (the control plane's; <dir> = <data>/state/nodeca).
 * nl_ca_init makes the CA and the CP's own certificate (role control,
 * CN name, SAN addr's host) when missing, and that certificate again
 * when it has less than 30 days to run; the CP then nl_open()s dir.
 */
int nl_ca_init(const char *dir, const char *name, const char *addr,
               struct err *e);
/* Signs pubkey_pem for a node: cert_pem gets the PEM (malloc'd). */
int nl_ca_sign(const char *dir, const char *pubkey_pem, const char *name,
               const char *addr, char **cert_pem, struct err *e);
/* Our own certificate's end (unix seconds). */
int64_t nl_cert_expires(const struct nodelink *nl);
/*
 * An agent's renewal: a new key in dir, the CP's "renew" op (nl's
 * current certificate says who asks), and cert.pem and key.pem replaced
 * once the answer is checked (our key, role node, our name, our CA).
 * nl keeps the old ones: the caller nl_open()s dir again for new
 * connections.  nl_open finishes a renewal a crash cut in two.
 */
int nl_renew(struct nodelink *nl, const char *dir, const char *control_addr,
             struct err *e);
/* Hex SHA-256 of the CA certificate (DER): the join token's pin. */
int nl_ca_hash(const char *dir, char out[65], struct err *e);

/* Join tokens: "SBXJ1-<ca hash hex>-<secret base32>". */
#define NL_TOKEN_LEN 128
int nl_token_new(const char *dir, char token[NL_TOKEN_LEN],
                 char secret_hash[65], struct err *e);
int nl_token_parse(const char *token, char ca_hash[65], char secret_hash[65],
                   struct err *e);

/*
 * The agent's side of a join: makes a key in dir, connects to the CP at
 * control_addr accepting only a CA whose hash is the token's, sends
 * enroll, and writes ca.pem, cert.pem, key.pem there.  *ans gets the
 * CP's answer (swarm_token, swarm_addr, name).
 */
int nl_enroll(const char *dir, const char *control_addr, const char *token,
              const char *name, const char *addr, const struct jv *facts,
              struct jv **ans, struct err *e);

/*
 * The tunnel (the CP's side of remote previews): a listener on
 * 127.0.0.1 (any port); a connection writes "SBX <sandbox> <port>\n"
 * first; resolve gives the sandbox's agent address, and a "preview"
 * stream to it is pumped with the connection.
 */
struct nl_tunnel;
int nl_tunnel_start(struct nl_tunnel **out, struct nodelink *nl,
                    int (*resolve)(void *arg, const char *sandbox,
                                   char addr[128]),
                    void *arg, struct err *e);
void nl_tunnel_stop(struct nl_tunnel *t);
unsigned nl_tunnel_port(const struct nl_tunnel *t);

#endif
