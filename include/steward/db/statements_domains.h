/* Statements of domains (statements_domains.c; table in migration 0009).
 * Parameters follow the resource conventions of src/api/api_internal.h. */
#ifndef STEWARD_DB_STATEMENTS_DOMAINS_H
#define STEWARD_DB_STATEMENTS_DOMAINS_H

#include "steward/db/statements.h"

/* Columns of a domain row. */
enum sw_db_domain_col {
	SW_DB_DOMAIN_ID,
	SW_DB_DOMAIN_APPLICATION_ID,
	SW_DB_DOMAIN_HOSTNAME,
	SW_DB_DOMAIN_STATUS,           /* PENDING or VERIFIED */
	SW_DB_DOMAIN_TOKEN,            /* the verification token (public) */
	SW_DB_DOMAIN_METHOD,           /* DNS, HTTP or NULL */
	SW_DB_DOMAIN_VERIFIED_AT,
	SW_DB_DOMAIN_LAST_CHECKED_AT,
	SW_DB_DOMAIN_LAST_CHECK_ERROR,
	SW_DB_DOMAIN_INSTRUCTIONS,     /* jsonb: the record and the URL to create */
	SW_DB_DOMAIN_CREATED_AT,
	SW_DB_DOMAIN_UPDATED_AT,
	SW_DB_DOMAIN_US,
};
/* Resource statements; parent: the application. create raises SW404 (no
 * such application), SW409 DOMAIN_LIMIT_REACHED, 23505 (hostname taken). */
extern const struct sw_db_stmt sw_db_stmt_domain_create;
extern const struct sw_db_stmt sw_db_stmt_domain_get;
extern const struct sw_db_stmt sw_db_stmt_domain_remove;
extern const struct sw_db_stmt sw_db_stmt_domains_list;
/* (organization, application) -> a row when the application is the
 * organization's. */
extern const struct sw_db_stmt sw_db_stmt_domain_application;
/* (organization, domain id) -> the domain's columns. */
extern const struct sw_db_stmt sw_db_stmt_domain_by_id;
/* (organization, domain id, method DNS|HTTP or NULL, failure sentence or
 * NULL) -> the domain's columns after recording a check: verified with
 * method when it is given, else the failure and lastCheckedAt. */
extern const struct sw_db_stmt sw_db_stmt_domain_check_record;

#endif
