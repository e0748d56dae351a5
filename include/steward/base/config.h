/* Settings from the environment, read once at start-up (README.md lists
 * them). Invalid values are refused with a message naming the variable. */
#ifndef STEWARD_CONFIG_H
#define STEWARD_CONFIG_H

#include <netinet/in.h>
#include <sys/socket.h>
#include "steward/base/base.h"

enum sw_env { SW_ENV_PRODUCTION, SW_ENV_DEVELOPMENT, SW_ENV_TEST };

struct sw_config {
	struct sockaddr_storage listen_addr;
	socklen_t listen_addr_len;
	char listen_str[128];     /* as configured, for messages */
	unsigned threads;         /* STEWARD_THREADS, default: cores */
	unsigned workers;         /* STEWARD_WORKERS, default 2 */
	char data_dir[512];       /* STEWARD_DATA_DIR, default /var/lib/steward as root, else ./steward-data */
	char *database_url;       /* DATABASE_URL; NULL: embedded PostgreSQL */
	enum sw_env env;          /* STEWARD_ENV, default production */
	bool signup_enabled;      /* SIGNUP_ENABLED */
	char *cors_origins;       /* CORS_ALLOWED_ORIGINS, comma-separated; NULL: none */
	char *public_base_url;    /* PUBLIC_BASE_URL */
	char *auth_trusted_origins; /* AUTH_TRUSTED_ORIGINS, comma-separated; NULL: none */
	unsigned max_connections; /* STEWARD_MAX_CONNECTIONS */
	unsigned db_pool_size;    /* STEWARD_DB_POOL_SIZE, per loop thread, default 2 */
	unsigned header_timeout_ms; /* STEWARD_HEADER_TIMEOUT_MS */
	unsigned body_timeout_ms;   /* STEWARD_BODY_TIMEOUT_MS */
	unsigned idle_timeout_ms;   /* STEWARD_IDLE_TIMEOUT_MS */
	unsigned shutdown_timeout_ms; /* STEWARD_SHUTDOWN_TIMEOUT_MS */
	unsigned db_query_timeout_ms; /* STEWARD_DB_QUERY_TIMEOUT_MS */
	unsigned agent_reconnect_wait_ms; /* STEWARD_AGENT_RECONNECT_WAIT_MS: a job's wait for a remote agent */
	unsigned rate_limit_per_minute; /* STEWARD_RATE_LIMIT_PER_MINUTE: requests per address */
	bool access_log;          /* STEWARD_ACCESS_LOG, default on */
	/* Deployments */
	unsigned deploy_log_max_bytes; /* DEPLOY_LOG_MAX_BYTES, default 16 MiB (64 KiB..1 GiB) */
	unsigned blue_green_min_free_mb; /* DEPLOY_BLUE_GREEN_MIN_FREE_MEMORY_MB, default 512 */
	char *deploy_base_image;  /* DEPLOY_BASE_IMAGE; NULL: each stack's own default */
	char *docker_host;        /* DOCKER_HOST, default unix:///var/run/docker.sock */
	char *caddy_admin_url;    /* CADDY_ADMIN_URL, default http://127.0.0.1:2019 */
	char *git_ca_file;        /* GIT_CA_FILE: PEM CAs for https git servers; NULL: the system's */
	bool runners;             /* STEWARD_RUNNERS, default on: this process runs jobs */
	char *ui_dir;             /* STEWARD_UI_DIR: the dashboard's built files; NULL: next to the binary */
	unsigned metrics_minute_retention_days; /* METRICS_MINUTE_RETENTION_DAYS, default 7 (1..3650) */
	unsigned metrics_retention_days;        /* METRICS_RETENTION_DAYS, default 90 (1..3650) */
	/* METRICS_SAMPLE_INTERVAL_MS, honoured only when STEWARD_ENV is test
	 * (200..15000); else the spec's 15 s. */
	unsigned metrics_interval_ms;
	/* METRICS_MINUTE_MS, honoured only when STEWARD_ENV is test (1000..60000,
	 * a divisor of 60000 and a multiple of the interval); else 60000. The
	 * metrics loop's "minute": how long a minute row folds, and the unit
	 * METRIC_THRESHOLD rules' durationSeconds are counted in (60 of them
	 * last one such minute). */
	unsigned metrics_minute_ms;
};

/* Reads the environment into *ret. On a bad value returns -EINVAL and
 * writes a message naming the variable to err. */
int sw_config_load(struct sw_config *ret, char *err, size_t errlen);
void sw_config_release(struct sw_config *c);
const char *sw_env_name(enum sw_env e);

/* Parses "host:port", "[v6]:port" or ":port" (all interfaces refused:
 * only numeric addresses). */
int sw_parse_listen(const char *s, struct sockaddr_storage *ret, socklen_t *ret_len);

/* The relying party of passkeys: the rp id (a bare, lower-case domain) and
 * the origins a ceremony may run from, serialised as browsers report them
 * (lower case, no default port). */
#define SW_PASSKEY_ORIGINS_MAX 16
#define SW_PASSKEY_ORIGIN_MAX_LEN 255
#define SW_PASSKEY_DOMAIN_MAX_LEN 253
struct sw_passkey_settings {
	char rp_id[SW_PASSKEY_DOMAIN_MAX_LEN + 1];
	char origins[SW_PASSKEY_ORIGINS_MAX][SW_PASSKEY_ORIGIN_MAX_LEN + 1];
	size_t origin_count;
};
/* Reads AUTH_PASSKEY_RP_ID (a bare domain; else the host of
 * PUBLIC_BASE_URL, else "localhost") and AUTH_PASSKEY_ORIGINS
 * (comma-separated, at most SW_PASSKEY_ORIGINS_MAX; else the origin of
 * PUBLIC_BASE_URL, else http://localhost:<listen port>) into *ret. Each
 * origin must be https (http only on localhost, the browsers' rule) on
 * the rp id or a subdomain of it. 0, or -EINVAL with a sentence naming the
 * variable in why. Reads the environment when called, not in
 * sw_config_load(), so that a bad value disables passkeys only. */
int sw_config_passkeys(const struct sw_config *c, struct sw_passkey_settings *ret, char *why,
		       size_t whylen);

#endif
