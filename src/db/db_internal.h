/* Shared between the files of src/db only. */
#ifndef STEWARD_DB_INTERNAL_H
#define STEWARD_DB_INTERNAL_H

#include "steward/db/db.h"

/* Builds s->audited->twin (src/db/audited.c): called once per audited
 * statement by the registry, before any connection prepares it (again:
 * nothing more is done).
 * 0, -ENOMEM, or -EOVERFLOW when the SQL cannot be formed. */
int sw_db_audited_build(const struct sw_db_stmt *s);

#endif
