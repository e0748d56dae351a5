/* Statements of plans and the subscription (migrations 0007 and 0011). */
#include "steward/db/statements_plans.h"

const struct sw_db_stmt sw_db_stmt_plans_list = {
	.name = "plans_list",
	.sql = "SELECT steward_plan_json(p)::text FROM plans p ORDER BY p.position, p.id",
	.nparams = 0,
};

const struct sw_db_stmt sw_db_stmt_subscription_get = {
	.name = "subscription_get",
	.sql = "SELECT steward_subscription_of($1::uuid)::text",
	.nparams = 1,
};

const struct sw_db_stmt sw_db_stmt_subscription_grant = {
	.name = "subscription_grant",
	.sql = "SELECT previous_plan, subscription FROM steward_subscription_grant($1::uuid, $2, $3::uuid)",
	.nparams = 3,
	.audited = &(struct sw_db_audited){ .id_col = -1, .name_col = -1, .ncols = 1,
					    .metadata_sql = "jsonb_build_object('previousPlanId', c0)" },
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_plans_list,
	&sw_db_stmt_subscription_get,
	&sw_db_stmt_subscription_grant,
};
const struct sw_db_stmt_group sw_db_plans_statements = { list, SW_ARRAY_SIZE(list) };
