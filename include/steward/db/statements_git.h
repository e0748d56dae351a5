/* Statements of git sources and git credentials (statements_git.c; tables
 * in migration 0009). Secrets come in sealed and never go out: no
 * statement here returns a sealed column but sw_db_stmt_git_credential_use
 * (the token, for the repository picker). */
#ifndef STEWARD_DB_STATEMENTS_GIT_H
#define STEWARD_DB_STATEMENTS_GIT_H

#include "steward/db/statements.h"

/* Columns of a git source row. */
enum sw_db_git_source_col {
	SW_DB_GIT_SOURCE_ID,
	SW_DB_GIT_SOURCE_APPLICATION_ID,
	SW_DB_GIT_SOURCE_REPOSITORY_URL,
	SW_DB_GIT_SOURCE_BRANCH,
	SW_DB_GIT_SOURCE_PROVIDER,
	SW_DB_GIT_SOURCE_PUBLIC_KEY,
	SW_DB_GIT_SOURCE_FINGERPRINT,
	SW_DB_GIT_SOURCE_KEY_CREATED_AT,
	SW_DB_GIT_SOURCE_SECRET_CREATED_AT,
	SW_DB_GIT_SOURCE_CREATED_AT,
	SW_DB_GIT_SOURCE_UPDATED_AT,
	SW_DB_GIT_SOURCE_CREDENTIAL_ID,
	SW_DB_GIT_SOURCE_SSH_HOST_KEY,
	SW_DB_GIT_SOURCE_SSH_HOST_KEY_PINNED_AT,
	SW_DB_GIT_SOURCE_CREATED, /* git_source_put only: "t" when it was created */
};
/* (organization, application, acting user, repository URL, branch,
 * provider, public key, fingerprint, sealed private key, sealed webhook
 * secret, credential id, ssh host key, host key given 't'/'f') -> the
 * source. Creates it, or replaces URL, branch, provider and credential
 * (and the host key when given) and keeps the key and secret it has. No
 * row: no such application. SW422 credentialId (migration 0018). */
extern const struct sw_db_stmt sw_db_stmt_git_source_put;
/* (organization, application, NULL) -> the source. */
extern const struct sw_db_stmt sw_db_stmt_git_source_get;
/* (organization, application, NULL, mask, repository URL, branch,
 * provider, credential id, ssh host key) -> the source (resource update
 * convention). */
extern const struct sw_db_stmt sw_db_stmt_git_source_update;
/* (organization, application, NULL) -> the id when it was there. */
extern const struct sw_db_stmt sw_db_stmt_git_source_remove;
/* (organization, application, public key, fingerprint, sealed private
 * key) -> public key, fingerprint, created at. */
extern const struct sw_db_stmt sw_db_stmt_git_source_deploy_key;
/* (organization, application, sealed secret) -> its created at. */
extern const struct sw_db_stmt sw_db_stmt_git_source_webhook_secret;

/* Columns of a git credential row. */
enum sw_db_git_credential_col {
	SW_DB_GIT_CREDENTIAL_ID,
	SW_DB_GIT_CREDENTIAL_NAME,
	SW_DB_GIT_CREDENTIAL_PROVIDER,
	SW_DB_GIT_CREDENTIAL_API_BASE_URL,
	SW_DB_GIT_CREDENTIAL_USERNAME,
	SW_DB_GIT_CREDENTIAL_TOKEN_HINT,
	SW_DB_GIT_CREDENTIAL_LAST_USED_AT,
	SW_DB_GIT_CREDENTIAL_CREATED_AT,
	SW_DB_GIT_CREDENTIAL_UPDATED_AT,
	SW_DB_GIT_CREDENTIAL_US,
};
/* (organization, id, acting user, name, provider, API base URL or NULL,
 * user name, sealed token, token hint). SW422 from the defaults trigger. */
extern const struct sw_db_stmt sw_db_stmt_git_credential_create;
/* Resource conventions; update: (organization, id, NULL, mask, name,
 * provider (create-only, unused), API base URL, user name, sealed token,
 * token hint): the token's two columns change together (mask position 5). */
extern const struct sw_db_stmt sw_db_stmt_git_credential_get;
extern const struct sw_db_stmt sw_db_stmt_git_credential_update;
extern const struct sw_db_stmt sw_db_stmt_git_credential_remove;
extern const struct sw_db_stmt sw_db_stmt_git_credentials_list;
/* (organization, id) -> provider, API base URL, user name, sealed token;
 * records lastUsedAt. */
extern const struct sw_db_stmt sw_db_stmt_git_credential_use;

#endif
