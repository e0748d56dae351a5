/* Statements of inbound webhooks (statements_webhooks.c; functions in
 * migration 0014, tables in 0009 and 0012). sw_db_stmt_webhook_candidates
 * returns sealed webhook secrets: the only statement that does, for the
 * route that must verify an HMAC with them. */
#ifndef STEWARD_DB_STATEMENTS_WEBHOOKS_H
#define STEWARD_DB_STATEMENTS_WEBHOOKS_H

#include "steward/db/statements.h"

/* Columns of sw_db_stmt_webhook_candidates. */
enum sw_db_webhook_candidate_col {
	SW_DB_WEBHOOK_CANDIDATE_APPLICATION_ID,
	SW_DB_WEBHOOK_CANDIDATE_ORGANIZATION_ID,
	SW_DB_WEBHOOK_CANDIDATE_BRANCH,
	SW_DB_WEBHOOK_CANDIDATE_SECRET_SEALED, /* sealed to "webhook-secret:<application id>" */
};
/* (git_sources provider "GITHUB"..., up to four repository URLs, NULL for
 * none) -> the git sources of that provider whose repository is one of
 * them (steward_git_repository_key()), oldest first, at most
 * SW_WEBHOOK_MAX_CANDIDATES (20) rows. Across organizations: the caller is
 * not authenticated yet, and the signature decides. */
extern const struct sw_db_stmt sw_db_stmt_webhook_candidates;

/* Columns of sw_db_stmt_webhook_delivery (one row). */
enum sw_db_webhook_delivery_col {
	SW_DB_WEBHOOK_DELIVERY_REDELIVERED, /* "t": seen before, nothing done now */
	SW_DB_WEBHOOK_DELIVERY_OUTCOME,     /* DEPLOYED or the reason it was ignored */
	SW_DB_WEBHOOK_DELIVERY_DEPLOYMENT,  /* the deployment's id, or NULL */
	SW_DB_WEBHOOK_DELIVERY_NUMBER,
	SW_DB_WEBHOOK_DELIVERY_STATUS,
	SW_DB_WEBHOOK_DELIVERY_REF,         /* the deployment's requested ref */
};
/* (provider "github"..., delivery id, organization, application, ref to
 * deploy or NULL, outcome code) -> one row: steward_webhook_delivery()
 * records the delivery and, for a ref, creates the GIT_PUSH deployment in
 * the same transaction; a redelivery returns the earlier outcome. Raises
 * SW404 when the application is gone. */
extern const struct sw_db_stmt sw_db_stmt_webhook_delivery;

#endif
