/* Statements of password reset (statements_password_reset.c; migration
 * 0003_password_reset.sql). Tokens arrive only as the hex of their SHA-256. */
#ifndef STEWARD_DB_STATEMENTS_PASSWORD_RESET_H
#define STEWARD_DB_STATEMENTS_PASSWORD_RESET_H

#include "steward/db/statements.h"

extern const struct sw_db_stmt sw_db_stmt_password_reset_create;
extern const struct sw_db_stmt sw_db_stmt_password_reset_check;
extern const struct sw_db_stmt sw_db_stmt_password_reset_confirm;

#endif
