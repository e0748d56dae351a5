/* Statements of notification channels (statements_channels.c; table and
 * triggers in migration 0011). get, remove and list follow the resource
 * conventions of src/api/api_internal.h; create, update and delivery are the
 * handlers' own:
 *   channel_create: $1 organization, $2 the channel's id (chosen by the
 *       API: the sealed secret's aad names it), $3 acting user, $4.. the
 *       fields (SW_DB_CHANNEL_FIELDS order), then target_private ('t' /
 *       'f') and the sealed signing secret (NULL for EMAIL).
 *   channel_update: the resource convention ($1 organization, $2 id, $3
 *       parent, $4 mask, $5.. the fields), then target_private (NULL when
 *       url is not given).
 *   channel_delivery: $1 organization, $2 id -> enum
 *       sw_db_channel_delivery_col. */
#ifndef STEWARD_DB_STATEMENTS_CHANNELS_H
#define STEWARD_DB_STATEMENTS_CHANNELS_H

#include "steward/db/statements.h"

/* Fields of create and update, in order: name, kind, url, addresses (JSON
 * array text), enabled, allowPrivateTargets. */
#define SW_DB_CHANNEL_FIELDS 6

/* Columns of a channel row (id and name first: the audit reads them there
 * in channel_remove's answer too). */
enum sw_db_channel_col {
	SW_DB_CHANNEL_ID,
	SW_DB_CHANNEL_NAME,
	SW_DB_CHANNEL_KIND,
	SW_DB_CHANNEL_URL,        /* NULL for EMAIL */
	SW_DB_CHANNEL_ADDRESSES,  /* JSON array text; NULL but for EMAIL */
	SW_DB_CHANNEL_ENABLED,
	SW_DB_CHANNEL_ALLOW_PRIVATE,
	SW_DB_CHANNEL_HAS_SECRET,
	SW_DB_CHANNEL_CREATED_AT,
	SW_DB_CHANNEL_UPDATED_AT,
	SW_DB_CHANNEL_US,
};
extern const struct sw_db_stmt sw_db_stmt_channel_create;
extern const struct sw_db_stmt sw_db_stmt_channel_get;
extern const struct sw_db_stmt sw_db_stmt_channel_update;
extern const struct sw_db_stmt sw_db_stmt_channel_remove;
/* Filters $7, $8: kind, enabled. */
extern const struct sw_db_stmt sw_db_stmt_channels_list;

enum sw_db_channel_delivery_col {
	SW_DB_DELIVERY_ID,
	SW_DB_DELIVERY_NAME,
	SW_DB_DELIVERY_KIND,
	SW_DB_DELIVERY_URL,
	SW_DB_DELIVERY_ADDRESSES, /* JSON array text */
	SW_DB_DELIVERY_ALLOW_PRIVATE,
	SW_DB_DELIVERY_SECRET,    /* sealed; NULL for EMAIL */
};
extern const struct sw_db_stmt sw_db_stmt_channel_delivery;

#endif
