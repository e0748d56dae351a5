/* Shared by the files of the organization's resources (organizations.c,
 * members.c, invitations.c, audit_logs.c): the scope of /organizations/:id,
 * roles, and the pieces their documentation repeats. */
#ifndef STEWARD_API_ORGANIZATION_SCOPE_H
#define STEWARD_API_ORGANIZATION_SCOPE_H

#include "api/api_internal.h"

/* The :id of /organizations/:id must be the caller's organization; any
 * other (existing or not) answers 404. */
bool sw_api_own_organization(struct sw_http_request *req);


/* Reads a required "role" member (OWNER, ADMIN or MEMBER) into out. */
void sw_api_role_field(json_t *body, char out[8], struct sw_field_errors *fe);

/* The state of a request about one object named in its path. */
struct sw_api_org_target {
	struct sw_http_request *req;
	char id[37];
};
/* The target of /organizations/:id/<things>/:thingId: the caller's own
 * organization and a UUID, else answered (404) and NULL. */
struct sw_api_org_target *sw_api_org_target(struct sw_http_request *req);

#define SW_API_ORG_PAGINATION_DOC                                                               \
	" Paginated: `?limit=` (1 to 200, default 50), `?cursor=` (opaque: the "                   \
	"`pagination.nextCursor` of the previous page) and `?order=desc|asc` (latest first by "   \
	"default); the body is `{\"data\": [...], "         \
	"\"pagination\": {\"nextCursor\": string or null}}`. Unknown or repeated query parameters " \
	"are 422."
#define SW_API_ORG_SCOPED_DOC " An organization id other than the caller's is 404, as for one that does not exist."

#define SW_API_ORG_UUID_T "{\"type\":\"string\",\"format\":\"uuid\"}"
#define SW_API_ORG_TS_T "{\"type\":\"string\",\"format\":\"date-time\"}"
#define SW_API_ORG_ROLE_T "{\"enum\":[\"OWNER\",\"ADMIN\",\"MEMBER\"]}"
#define SW_API_ORG_NAME_T "{\"type\":\"string\",\"minLength\":1,\"maxLength\":100}"

#endif
