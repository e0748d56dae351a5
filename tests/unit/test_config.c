/* Configuration: documented defaults of every limit and setting, and
 * refusal of bad values with the variable named. */
#include <stdlib.h>
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
		"AUTH_TRUSTED_ORIGINS" };
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

TEST_MAIN()
