/* Statements of variables (statements_variables.c; table and function in
 * migration 0009). Values reach these statements sealed only. */
#ifndef STEWARD_DB_STATEMENTS_VARIABLES_H
#define STEWARD_DB_STATEMENTS_VARIABLES_H

#include "steward/db/statements.h"

/* Columns of a variable row (never its value). */
enum sw_db_variable_col {
	SW_DB_VARIABLE_KEY,
	SW_DB_VARIABLE_VALUE_LENGTH, /* bytes of the plaintext */
	SW_DB_VARIABLE_CREATED_AT,
	SW_DB_VARIABLE_UPDATED_AT,
	SW_DB_VARIABLE_CREATED,      /* variables_apply only: "t" when this call created it */
};

/* (organization, application) -> the variables by key; no row when the
 * application is not the organization's, one row of NULLs when it has no
 * variable. */
extern const struct sw_db_stmt sw_db_stmt_variables_list;
/* (organization, application, key) -> the variable. */
extern const struct sw_db_stmt sw_db_stmt_variable_get;
/* (organization, application, set, unset) -> the variables afterwards, by
 * key. set: a JSON array of {"key", "sealed", "length"}; unset: a JSON
 * array of keys. One transaction; raises SW404 (no such application) and
 * SW409 VARIABLE_LIMIT_REACHED (more than SW_ENV_MAX_VARIABLES). */
extern const struct sw_db_stmt sw_db_stmt_variables_apply;
/* (organization, application, key) -> the key when it was there. */
extern const struct sw_db_stmt sw_db_stmt_variable_remove;

#endif
