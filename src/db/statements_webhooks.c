/* Statements of inbound webhooks (migration 0014). */
#include "steward/base/limits.h"
#include "db/sql.h"
#include "steward/db/statements_webhooks.h"

const struct sw_db_stmt sw_db_stmt_webhook_candidates = {
	.name = "webhook_candidates",
	.sql = "SELECT g.application_id, g.organization_id, g.branch, g.webhook_secret_sealed"
	       " FROM git_sources g"
	       " WHERE g.provider = $1 AND steward_git_repository_key(g.repository_url) IN"
	       " (steward_git_repository_key($2), steward_git_repository_key($3),"
	       " steward_git_repository_key($4), steward_git_repository_key($5))"
	       " ORDER BY g.created_at, g.id LIMIT " SW_SQL_STR(SW_WEBHOOK_MAX_CANDIDATES),
	.nparams = 5,
};

const struct sw_db_stmt sw_db_stmt_webhook_delivery = {
	.name = "webhook_delivery",
	.sql = "SELECT r_redelivered, r_outcome, r_deployment, r_number, r_status, r_ref"
	       " FROM steward_webhook_delivery($1, $2, $3::uuid, $4::uuid, $5, $6)",
	.nparams = 6,
	/* Recorded when this delivery created a deployment (c2), with its ref
	 * (c5); a redelivery (c0) records nothing again. */
	.audited = &(struct sw_db_audited){ .id_col = 2, .name_col = -1, .ncols = 6,
					    .metadata_sql = "jsonb_build_object('ref', c5)",
					    .when_sql = "NOT c0 AND c2 IS NOT NULL" },
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_webhook_candidates,
	&sw_db_stmt_webhook_delivery,
};
const struct sw_db_stmt_group sw_db_webhooks_statements = { list, SW_ARRAY_SIZE(list) };
