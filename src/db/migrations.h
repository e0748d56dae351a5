/* The migrations compiled into the binary, in version order. */
#ifndef STEWARD_DB_MIGRATIONS_H
#define STEWARD_DB_MIGRATIONS_H

#include <stddef.h>

struct sw_db_migration {
	int version;
	const char *name;
	const char *sql;
};

extern const struct sw_db_migration sw_db_migrations[];
extern const size_t sw_db_migration_count;

#endif
