/* Configuration: documented defaults of every limit and setting, and
 * refusal of bad values with the variable named. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "steward/base/config.h"
#include "steward/base/limits.h"
#include "test_help.h"

static void clear_env(void)
{
	static const char *vars[] = { "STEWARD_LISTEN", "STEWARD_THREADS", "STEWARD_WORKERS",
		"STEWARD_MAX_CONNECTIONS", "STEWARD_DB_POOL_SIZE", "STEWARD_HEADER_TIMEOUT_MS",
		"STEWARD_BODY_TIMEOUT_MS", "STEWARD_IDLE_TIMEOUT_MS", "STEWARD_SHUTDOWN_TIMEOUT_MS",
		"STEWARD_DB_QUERY_TIMEOUT_MS", "SIGNUP_ENABLED", "STEWARD_ACCESS_LOG", "STEWARD_ENV",
		"STEWARD_DATA_DIR", "DATABASE_URL", "CORS_ALLOWED_ORIGINS", "PUBLIC_BASE_URL",
		"AUTH_TRUSTED_ORIGINS", "METRICS_SAMPLE_INTERVAL_MS", "METRICS_MINUTE_MS",
		"STEWARD_AGENT_RECONNECT_WAIT_MS" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(vars); i++)
		unsetenv(vars[i]);
}

TEST(limits_have_the_documented_values)
{
	CHECK_INT_EQ(SW_HTTP_MAX_REQUEST_LINE, 8192);
	CHECK_INT_EQ(SW_HTTP_MAX_HEAD_BYTES, 16384);
	CHECK_INT_EQ(SW_HTTP_MAX_HEADERS, 100);
	CHECK_INT_EQ(SW_DEFAULT_HEADER_TIMEOUT_MS, 10000);
	CHECK_INT_EQ(SW_DEFAULT_BODY_TIMEOUT_MS, 10000);
	CHECK_INT_EQ(SW_DEFAULT_IDLE_TIMEOUT_MS, 60000);
	CHECK_INT_EQ(SW_JSON_MAX_DEPTH, 32);
}

TEST(defaults_apply_when_unset)
{
	clear_env();
	struct sw_config c;
	char err[256];
	REQUIRE(sw_config_load(&c, err, sizeof(err)) == 0);
	CHECK_STR_EQ(c.listen_str, "127.0.0.1:8080");
	CHECK_INT_EQ(c.header_timeout_ms, 10000);
	CHECK_INT_EQ(c.body_timeout_ms, 10000);
	CHECK_INT_EQ(c.idle_timeout_ms, 60000);
	CHECK_INT_EQ(c.agent_reconnect_wait_ms, 65000);
	CHECK_INT_EQ(c.env, SW_ENV_PRODUCTION);
	CHECK(!c.signup_enabled);
	CHECK(c.database_url == NULL);
	CHECK(c.auth_trusted_origins == NULL);
	CHECK(c.threads >= 1);
	CHECK_STR_EQ(c.data_dir, geteuid() == 0 ? "/var/lib/steward" : "./steward-data");
	sw_config_release(&c);
}

TEST(bad_values_name_the_variable)
{
	clear_env();
	struct sw_config c;
	char err[256];
	setenv("STEWARD_THREADS", "zero", 1);
	CHECK(sw_config_load(&c, err, sizeof(err)) < 0);
	CHECK(strstr(err, "STEWARD_THREADS") != NULL);
	unsetenv("STEWARD_THREADS");
	setenv("SIGNUP_ENABLED", "maybe", 1);
	CHECK(sw_config_load(&c, err, sizeof(err)) < 0);
	CHECK(strstr(err, "SIGNUP_ENABLED") != NULL);
	unsetenv("SIGNUP_ENABLED");
	setenv("STEWARD_ENV", "staging", 1);
	CHECK(sw_config_load(&c, err, sizeof(err)) < 0);
	CHECK(strstr(err, "STEWARD_ENV") != NULL);
	unsetenv("STEWARD_ENV");
	setenv("STEWARD_LISTEN", "example.com:80", 1);
	CHECK(sw_config_load(&c, err, sizeof(err)) < 0);
	CHECK(strstr(err, "STEWARD_LISTEN") != NULL);
	unsetenv("STEWARD_LISTEN");
	setenv("STEWARD_AGENT_RECONNECT_WAIT_MS", "3600001", 1);
	CHECK(sw_config_load(&c, err, sizeof(err)) < 0);
	CHECK(strstr(err, "STEWARD_AGENT_RECONNECT_WAIT_MS") != NULL);
	setenv("STEWARD_AGENT_RECONNECT_WAIT_MS", "0", 1);
	REQUIRE(sw_config_load(&c, err, sizeof(err)) == 0);
	CHECK_INT_EQ(c.agent_reconnect_wait_ms, 0);
	sw_config_release(&c);
	clear_env();
}

TEST(settings_are_read)
{
	clear_env();
	setenv("STEWARD_LISTEN", "[::1]:9999", 1);
	setenv("SIGNUP_ENABLED", "true", 1);
	setenv("STEWARD_ENV", "test", 1);
	setenv("STEWARD_IDLE_TIMEOUT_MS", "1500", 1);
	setenv("AUTH_TRUSTED_ORIGINS", "https://dash.example.com", 1);
	struct sw_config c;
	char err[256];
	REQUIRE(sw_config_load(&c, err, sizeof(err)) == 0);
	CHECK(c.signup_enabled);
	CHECK_INT_EQ(c.env, SW_ENV_TEST);
	CHECK_INT_EQ(c.idle_timeout_ms, 1500);
	CHECK_INT_EQ(c.listen_addr.ss_family, AF_INET6);
	CHECK_STR_EQ(c.auth_trusted_origins, "https://dash.example.com");
	sw_config_release(&c);
	clear_env();
}

/* METRICS_MINUTE_MS, a test setting: honoured only with STEWARD_ENV=test,
 * and only a divisor of 60000 that holds whole sample intervals. */
TEST(the_metrics_minute_is_shortened_only_in_tests)
{
	clear_env();
	struct sw_config c;
	char err[256];
	REQUIRE(sw_config_load(&c, err, sizeof(err)) == 0);
	CHECK_INT_EQ(c.metrics_minute_ms, 60000);
	CHECK_INT_EQ(c.metrics_interval_ms, 15000);
	sw_config_release(&c);
	setenv("METRICS_SAMPLE_INTERVAL_MS", "500", 1);
	setenv("METRICS_MINUTE_MS", "5000", 1);
	REQUIRE(sw_config_load(&c, err, sizeof(err)) == 0);
	CHECK_INT_EQ(c.metrics_minute_ms, 60000); /* production: ignored */
	CHECK_INT_EQ(c.metrics_interval_ms, 15000);
	sw_config_release(&c);
	setenv("STEWARD_ENV", "test", 1);
	REQUIRE(sw_config_load(&c, err, sizeof(err)) == 0);
	CHECK_INT_EQ(c.metrics_minute_ms, 5000);
	CHECK_INT_EQ(c.metrics_interval_ms, 500);
	sw_config_release(&c);
	setenv("METRICS_MINUTE_MS", "7000", 1); /* does not divide a minute */
	CHECK(sw_config_load(&c, err, sizeof(err)) < 0);
	CHECK(strstr(err, "METRICS_MINUTE_MS") != NULL);
	setenv("METRICS_SAMPLE_INTERVAL_MS", "700", 1);
	setenv("METRICS_MINUTE_MS", "5000", 1); /* not whole intervals */
	CHECK(sw_config_load(&c, err, sizeof(err)) < 0);
	CHECK(strstr(err, "METRICS_MINUTE_MS") != NULL);
	setenv("METRICS_MINUTE_MS", "500", 1); /* below the range */
	CHECK(sw_config_load(&c, err, sizeof(err)) < 0);
	CHECK(strstr(err, "METRICS_MINUTE_MS") != NULL);
	clear_env();
}

/* Passkeys' relying party: read when asked, from AUTH_PASSKEY_RP_ID and
 * AUTH_PASSKEY_ORIGINS, else PUBLIC_BASE_URL, else localhost. */
static int passkeys(const char *rp, const char *origins, const char *base,
		    struct sw_passkey_settings *ps, char *why, size_t whylen)
{
	clear_env();
	unsetenv("AUTH_PASSKEY_RP_ID");
	unsetenv("AUTH_PASSKEY_ORIGINS");
	if (rp)
		setenv("AUTH_PASSKEY_RP_ID", rp, 1);
	if (origins)
		setenv("AUTH_PASSKEY_ORIGINS", origins, 1);
	struct sw_config c;
	char err[256];
	if (sw_config_load(&c, err, sizeof(err)) != 0)
		return -1000;
	c.public_base_url = base ? strdup(base) : NULL;
	int r = sw_config_passkeys(&c, ps, why, whylen);
	sw_config_release(&c);
	unsetenv("AUTH_PASSKEY_RP_ID");
	unsetenv("AUTH_PASSKEY_ORIGINS");
	return r;
}

TEST(passkeys_default_to_localhost_on_the_listen_port)
{
	struct sw_passkey_settings ps;
	char why[256] = "";
	REQUIRE(passkeys(NULL, NULL, NULL, &ps, why, sizeof(why)) == 0);
	CHECK_STR_EQ(ps.rp_id, "localhost");
	CHECK_INT_EQ(ps.origin_count, 1);
	CHECK_STR_EQ(ps.origins[0], "http://localhost:8080");
}

TEST(passkeys_follow_the_public_base_url)
{
	struct sw_passkey_settings ps;
	char why[256] = "";
	REQUIRE(passkeys(NULL, NULL, "HTTPS://Deploy.Example.org:443/app/", &ps, why, sizeof(why)) == 0);
	CHECK_STR_EQ(ps.rp_id, "deploy.example.org");
	CHECK_INT_EQ(ps.origin_count, 1);
	CHECK_STR_EQ(ps.origins[0], "https://deploy.example.org");
}

TEST(passkey_origins_are_listed_on_the_rp_id)
{
	struct sw_passkey_settings ps;
	char why[256] = "";
	REQUIRE(passkeys("example.org", " https://example.org/, https://app.example.org:8443 ,", NULL,
			 &ps, why, sizeof(why)) == 0);
	CHECK_STR_EQ(ps.rp_id, "example.org");
	CHECK_INT_EQ(ps.origin_count, 2);
	CHECK_STR_EQ(ps.origins[0], "https://example.org");
	CHECK_STR_EQ(ps.origins[1], "https://app.example.org:8443");
}

TEST(bad_passkey_settings_name_what_is_wrong)
{
	struct sw_passkey_settings ps;
	char why[256] = "";
	CHECK_INT_EQ(passkeys("https://example.org", "https://example.org", NULL, &ps, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "AUTH_PASSKEY_RP_ID") != NULL);
	CHECK_INT_EQ(passkeys("example.org", "http://example.org", NULL, &ps, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "localhost") != NULL);
	CHECK_INT_EQ(passkeys("example.org", "https://example.com", NULL, &ps, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "not on the rp id") != NULL);
	CHECK_INT_EQ(passkeys("example.org", " , ", NULL, &ps, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "no origin") != NULL);
	CHECK_INT_EQ(passkeys(NULL, NULL, "ftp://example.org", &ps, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "PUBLIC_BASE_URL") != NULL);
}

TEST_MAIN()
