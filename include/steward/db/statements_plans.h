/* Statements of plans and the subscription (statements_plans.c; functions
 * in migrations 0007 and 0011). Each answers JSON that PostgreSQL writes
 * (steward_plan_json(), steward_subscription_of()): one column of text.
 *   plans_list: no parameters -> one plan a row, by position.
 *   subscription_get: $1 organization -> the subscription.
 *   subscription_grant: $1 organization, $2 plan id, $3 the operator ->
 *       the plan before, the subscription after. Raises SW422 on
 *       organizationId or planId, SW409 PLAN_TOO_SMALL. */
#ifndef STEWARD_DB_STATEMENTS_PLANS_H
#define STEWARD_DB_STATEMENTS_PLANS_H

#include "steward/db/statements.h"

extern const struct sw_db_stmt sw_db_stmt_plans_list;
extern const struct sw_db_stmt sw_db_stmt_subscription_get;
extern const struct sw_db_stmt sw_db_stmt_subscription_grant;

#endif
