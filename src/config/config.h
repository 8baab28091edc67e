/*
 * Daemon configuration: environment variables, then an optional .env file
 * (the environment wins).  config_load() validates every value; a bad one
 * is an error naming the variable, never a silent default.  The loaded
 * struct is read-only after start and may be read from any thread.
 */
#ifndef CONFIG_CONFIG_H
#define CONFIG_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress/egress.h"
#include "lib/limits.h"

struct config_token {
	char name[64];
	char *secret; /* wiped and freed by config_release */
};

/* A package mirror: its URL, and the host and port it names. */
struct config_mirror {
	char url[512];
	char host[256];
	uint16_t port;
	bool https;
};

struct config {
	char data_dir[PATH_MAX];
	bool data_dir_legacy;
	char env_file[PATH_MAX];
	bool env_file_loaded;
	char api_addr[128]; /* as given, host:port */
	char api_host[96];
	uint16_t api_port;
	uint16_t http_port;
	char edge_addr[64];         /* where the preview edge listens */
	char console_dir[PATH_MAX]; /* the console's built files */
	int64_t edge_port; /* its port: SANDBOXD_EDGE_PORT, else HTTP_PORT */
	char preview_domain[256];
	char preview_entrypoint[64];
	bool preview_tls;
	char preview_visibility[8]; /* "public" or "private": apps' default */
	bool auth_disabled;
	bool auth_disabled_invalid; /* set but neither true/1 nor false/0 */
	struct config_token tokens[CONFIG_MAX_TOKENS];
	size_t ntokens;
	char operators[1024]; /* token names, comma-separated ("" = none) */
	char default_agent[32];
	char opencode_free_model[128]; /* opencode's model with no key */
	char opencode_model[128];      /* per-agent default model, "" = none */
	char claude_model[128];
	int64_t task_timeout_s; /* a task's timeout when it names none */
	/* Pushes and imports. */
	int64_t git_timeout_s;      /* the git helper is killed after it */
	int64_t git_import_max_mb;  /* download and checked-out tree */
	bool git_allow_private;     /* remotes on loopback/private networks */
	char git_ca_file[PATH_MAX]; /* "" = the system's CA bundle */
	/* The credential proxy (sandboxes reach their model providers). */
	char proxy_addr[64]; /* "" = the sandbox network's gateway */
	uint16_t proxy_port;
	char anthropic_base_url[512];
	char openai_base_url[512];
	char zen_base_url[512];
	char compat_base_url[512]; /* "" = no OpenAI-compatible upstream */
	/* Claude subscription sign-in (OAuth with PKCE). */
	char claude_client_id[128];
	char claude_authorize_url[512];
	char claude_token_url[512];
	char claude_redirect_uri[512];
	char claude_scopes[256]; /* space-separated */
	int64_t oauth_refresh_s; /* how often logins are checked for expiry */
	int64_t idle_threshold_s;
	int64_t term_per_sandbox;  /* terminal sessions at once, a sandbox */
	int64_t term_per_tenant;   /* and a tenant */
	int64_t term_idle_s;       /* no input this long: the session ends */
	int64_t term_max_s;        /* a session's longest life */
	int64_t term_reattach_s;   /* a detached session waits this long */
	char sleep_policy[8];      /* "freeze" or "stop" */
	int64_t trash_retention_s; /* a deleted app is kept this long; 0 none */
	int64_t trash_interval_s;  /* the trash pass (purge, measure) period */
	int64_t snapshots_max;     /* snapshots an app may keep */
	/* Publishing (src/publish/). */
	char publish_domain[256];        /* "" = apps.<preview_domain> */
	int64_t publish_keep;            /* releases kept per app */
	int64_t publish_build_timeout_s; /* a build's limit */
	int64_t publish_static_max_mb;   /* a static release's files */
	int64_t events_retention_days;   /* timeline events kept this long */
	int64_t events_max_per_app;      /* and at most this many per app */
	int64_t events_prune_s;          /* the prune's period */
	int64_t freeze_after_s;  /* idle this long: frozen (policy freeze) */
	int64_t idle_interval_s; /* idle reaper period */
	int64_t pressure_interval_s; /* pressure reaper period */
	int64_t mem_headroom_pct;    /* below: stop sandboxes */
	int64_t mem_refuse_pct;      /* below: refuse wakes */
	int64_t mem_budget_mb; /* 0: the host's memory; else the sandboxes' */
	int64_t wake_ready_s;  /* how long a woken app may take to listen */
	char runtime[64];
	char image[256];
	char network[128]; /* the sandboxes' Docker network */
	char subnet[64];   /* for the network sandboxd creates; "" = pick */
	int egress_mode;   /* enum egress_mode */
	struct egress_allow egress_allow[EGRESS_MAX_ALLOW];
	size_t egress_nallow;
	/* Package mirrors handed to every sandbox (url "" = none). */
	struct config_mirror npm_mirror; /* SANDBOXD_NPM_REGISTRY */
	struct config_mirror pip_mirror; /* SANDBOXD_PIP_INDEX_URL */
	char mirror_env[6][512 + 32];    /* config_mirror_env's strings */
	int nmirror_env;
	int64_t memory_mb;
	int64_t pids_limit;
	int64_t nofile_limit;
	int64_t workspace_max_mb;      /* 0: no cap */
	int64_t disk_usage_interval_s; /* disk/diskuse.c's period */
	int64_t depcache_max_age_days; /* depcache/: gc'd after this unused */
	int64_t depcache_max_mb;       /* depcache/: evicted past this */
	bool dedup;          /* disk/dedup.c: dependencies stored once */
	bool spend_counting; /* the proxy counts tokens and keeps budgets */
	char docker_socket[PATH_MAX];
	/* More than one server (orch/, nodelink/, cluster/, nodeagent/). */
	char orchestrator[8];      /* "docker" or "swarm" */
	char cluster_addr[128];    /* host:port agents reach; "" = picked */
	int64_t cluster_port;      /* the control plane's nodelink port */
	int64_t node_port;         /* a node agent's nodelink port */
	char node_name[64];        /* this node's name; "" = the hostname */
	char node_addr[64];        /* the address an agent serves on */
	int64_t memory_reserve_mb; /* a sandbox's swarm reservation; 0 = half */
	char image_registry[256];  /* "" = images go by save/load */
	int64_t node_heartbeat_ms; /* agents' facts are asked this often */
	/* Custom domains (publish/domain.c, verify.c, traefik.c). */
	char dns_resolver[64];     /* "ip" or "ip:port"; "" = resolv.conf */
	char public_addrs[1024];   /* comma list; "" = the interfaces' */
	uint16_t verify_http_port; /* the HTTP check's port */
	int64_t domain_check_interval_s;    /* the pending domains' pass */
	char traefik_dynamic_dir[PATH_MAX]; /* "" = no file */
	char traefik_http_resolver[64];     /* the HTTP-01 resolver's name */
	char log_format[8];                 /* text or json (lib/log.h) */
	/*
	 * The master key's text (SANDBOXD_SECRETS_KEY) and the previous
	 * one during a rotation; NULL when unset.  The vault parses them;
	 * wiped and freed by config_release.
	 */
	char *secrets_key;
	char *secrets_key_previous;
};

/* Returns 0, or -1 with a message naming the variable in err. */
int config_load(struct config *c, char *err, size_t errlen);
void config_release(struct config *c);

/*
 * Fills env (room for max pointers) with the package mirrors'
 * environment of a sandbox container ("NAME=value" strings of c:
 * npm_config_registry, NPM_CONFIG_REGISTRY, PIP_INDEX_URL,
 * UV_DEFAULT_INDEX and, for an http index, PIP_TRUSTED_HOST and
 * UV_INSECURE_HOST); returns how many.
 */
int config_mirror_env(const struct config *c, const char **env, int max);

#endif
