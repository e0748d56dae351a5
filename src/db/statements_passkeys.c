/* Statements of passkeys (webauthn). */
#include "db/statements.h"

static const struct sw_db_stmt *const list[] = {
	NULL,
};

const struct sw_db_stmt_group sw_db_passkeys_statements = { list, 0 };
