/* Notification channels: where alerts are told. WEBHOOK (Steward's own
 * event JSON), SLACK and DISCORD (their incoming-webhook URLs) are POSTed
 * to by src/notify; EMAIL channels are mailed through the mail module
 * (SMTP_URL).
 *
 * Decisions (also in the OpenAPI document):
 * - POST returns the signing secret (32 random bytes as 43 base64url
 *   characters) once, in signingSecret (null for EMAIL, which has none);
 *   it is sealed at rest (aad "channel:<id>", the id chosen here before
 *   the row exists) and never shown again: GET has hasSigningSecret only.
 *   There is no rotation route (spec rule 5 names POST as the one
 *   response carrying it): delete the channel and create another.
 * - Outbound requests are signed: Steward-Timestamp: <unix seconds> and
 *   Steward-Signature: v1=<hex HMAC-SHA256(signingSecret, "<timestamp>.
 *   <body>")> (steward/notify/notify.h has the whole scheme and the retries).
 * - SSRF: a url whose host is a loopback, link-local, private or reserved
 *   IP literal is refused (422 on url) unless allowPrivateTargets is true,
 *   which only an operator may set (403 FORBIDDEN for anyone else); host
 *   names are resolved and checked at every delivery. The operator's
 *   allowance is for the URL it came with: a non-operator who changes url
 *   turns allowPrivateTargets off.
 * - kind cannot change; url belongs to the HTTP kinds (https for SLACK and
 *   DISCORD), addresses (1 to 10) to EMAIL: the table's trigger says which
 *   field is wrong (migration 0011).
 * - A channel that alert rules still notify is not deleted: 409
 *   CHANNEL_IN_USE. Names are resource names, unique in the organization
 *   (409 CHANNEL_EXISTS).
 * - POST /notification-channels/:id/test sends a test event ("channel.test")
 *   whether the channel is enabled or not: 202 with the delivery's id; the
 *   outcome is logged (a later issue records deliveries). EMAIL without
 *   SMTP_URL is 409 MAIL_NOT_CONFIGURED. */
#include <errno.h>
#include <stdio.h>
#include <openssl/crypto.h>
#include "steward/net/mail.h"
#include "steward/net/address.h"
#include "steward/notify/notify.h"
#include "steward/base/seal.h"
#include "steward/base/secret.h"
#include "steward/base/validate.h"
#include "api/api_internal.h"
#include "steward/db/statements_channels.h"

/* Addresses of one EMAIL channel. */
#define CHANNEL_ADDRESSES_MAX 10
/* Bytes of the signing secret's randomness. */
#define SIGNING_SECRET_BYTES 32
#define SIGNING_SECRET_LEN SW_BASE64URL_LEN(SIGNING_SECRET_BYTES)

/* ---- fields ---- */

static bool url_parse(struct sw_http_request *req, json_t *v, const char **ret, const char **ret_msg)
{
	if (!json_is_string(v)) {
		*ret_msg = "must be a string";
		return false;
	}
	struct sw_str s = sw_str_from(json_string_value(v), json_string_length(v));
	if (memchr(s.ptr, '\0', s.len) || !sw_valid_url(s, false, NULL, NULL, ret_msg))
		return false;
	*ret = sw_arena_strndup(&req->arena, s.ptr, s.len);
	return *ret != NULL;
}

/* An array of 1..CHANNEL_ADDRESSES_MAX e-mail addresses: the parameter is
 * a JSON array of them lower-cased, each once. */
static bool addresses_parse(struct sw_http_request *req, json_t *v, const char **ret,
			    const char **ret_msg)
{
	size_t n = json_is_array(v) ? json_array_size(v) : 0;
	if (n < 1 || n > CHANNEL_ADDRESSES_MAX) {
		*ret_msg = "must be an array of 1 to 10 e-mail addresses";
		return false;
	}
	char seen[CHANNEL_ADDRESSES_MAX][SW_EMAIL_MAX_LEN + 1];
	struct sw_buf b = { 0 };
	struct sw_json j;
	sw_json_init(&j, &b);
	sw_json_array_begin(&j);
	bool ok = true;
	for (size_t i = 0, kept = 0; ok && i < n; i++) {
		json_t *a = json_array_get(v, i);
		const char *msg = NULL;
		ok = json_is_string(a) &&
		     sw_valid_email(sw_str_from(json_string_value(a), json_string_length(a)), seen[kept],
				    sizeof(seen[kept]), &msg);
		if (!ok) {
			*ret_msg = "must hold e-mail addresses only";
			break;
		}
		bool again = false;
		for (size_t k = 0; k < kept && !again; k++)
			again = strcmp(seen[k], seen[kept]) == 0;
		if (!again)
			sw_json_cstr(&j, seen[kept++]);
	}
	sw_json_array_end(&j);
	if (ok && sw_json_finish(&j) == 0)
		*ret = sw_arena_strndup(&req->arena, (const char *)b.data, b.len);
	else if (ok)
		*ret_msg = "could not be read";
	sw_buf_release(&b);
	return ok && *ret;
}

static const char *const kinds[] = { "WEBHOOK", "SLACK", "DISCORD", "EMAIL", NULL };

enum { F_NAME, F_KIND, F_URL, F_ADDRESSES, F_ENABLED, F_ALLOW_PRIVATE, NFIELDS };
static const struct sw_api_field channel_fields[NFIELDS] = {
	[F_NAME] = { "name", SW_API_FIELD_STRING, SW_API_FIELD_REQUIRED, sw_valid_resource_name },
	[F_KIND] = { "kind", SW_API_FIELD_ENUM, SW_API_FIELD_REQUIRED | SW_API_FIELD_CREATE_ONLY,
		     .values = kinds },
	[F_URL] = { "url", SW_API_FIELD_CUSTOM, SW_API_FIELD_NULLABLE, .parse = url_parse },
	[F_ADDRESSES] = { "addresses", SW_API_FIELD_CUSTOM, SW_API_FIELD_NULLABLE,
			  .parse = addresses_parse },
	[F_ENABLED] = { "enabled", SW_API_FIELD_BOOL, 0, .def = "t" },
	[F_ALLOW_PRIVATE] = { "allowPrivateTargets", SW_API_FIELD_BOOL, 0, .def = "f" },
};
_Static_assert(NFIELDS == SW_DB_CHANNEL_FIELDS, "the statements' fields");

static const struct sw_api_field channel_filters[] = {
	{ "kind", SW_API_FIELD_ENUM, 0, .values = kinds },
	{ "enabled", SW_API_FIELD_BOOL },
};

static const struct sw_api_column channel_columns[] = {
	{ "id", SW_DB_CHANNEL_ID, SW_API_COL_TEXT },
	{ "name", SW_DB_CHANNEL_NAME, SW_API_COL_TEXT },
	{ "kind", SW_DB_CHANNEL_KIND, SW_API_COL_TEXT },
	{ "url", SW_DB_CHANNEL_URL, SW_API_COL_NULLABLE },
	{ "addresses", SW_DB_CHANNEL_ADDRESSES, SW_API_COL_JSON },
	{ "enabled", SW_DB_CHANNEL_ENABLED, SW_API_COL_BOOL },
	{ "allowPrivateTargets", SW_DB_CHANNEL_ALLOW_PRIVATE, SW_API_COL_BOOL },
	{ "hasSigningSecret", SW_DB_CHANNEL_HAS_SECRET, SW_API_COL_BOOL },
	{ "createdAt", SW_DB_CHANNEL_CREATED_AT, SW_API_COL_TEXT },
	{ "updatedAt", SW_DB_CHANNEL_UPDATED_AT, SW_API_COL_TEXT },
};
static const struct sw_api_object channel_object = { channel_columns, SW_ARRAY_SIZE(channel_columns), 0 };

static const struct sw_api_resource channel = {
	.type = "notification_channel",
	.fields = channel_fields,
	.nfields = NFIELDS,
	.shape = &channel_object,
	.create = &sw_db_stmt_channel_create,
	.get = &sw_db_stmt_channel_get,
	.update = &sw_db_stmt_channel_update,
	.remove = &sw_db_stmt_channel_remove,
	.list = &sw_db_stmt_channels_list,
	.filters = channel_filters,
	.nfilters = SW_ARRAY_SIZE(channel_filters),
	.cursor_us_col = SW_DB_CHANNEL_US,
	.cursor_id_col = SW_DB_CHANNEL_ID,
	.conflict_code = "CHANNEL_EXISTS",
	.conflict_message = "The organization already has a notification channel of that name.",
};

/* ---- create and update ---- */

struct save {
	struct sw_http_request *req;
	bool creating;
	char id[37];
	char secret[SIGNING_SECRET_LEN + 1]; /* the new signing secret; wiped */
};

/* A channel; ctx: the save that created it (its secret is shown), or NULL. */
static void write_channel(struct sw_json *j, const PGresult *res, int row, const void *ctx)
{
	const struct save *s = ctx;
	sw_json_object_begin(j);
	sw_api_write_columns(j, res, row, 0, channel_columns, SW_ARRAY_SIZE(channel_columns));
	if (s) {
		sw_json_key(j, "signingSecret");
		sw_json_cstr(j, s->secret[0] ? s->secret : NULL);
	}
	sw_json_object_end(j);
}

static void saved(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct save *s = arg;
	struct sw_http_request *req = s->req;
	if (err->code) {
		sw_api_resource_error(req, &channel, err);
	} else if (PQntuples(res) != 1) {
		sw_api_not_found(req);
	} else {
		sw_api_answer_row(req, s->creating ? 201 : 200, res, 0, write_channel,
				  s->creating ? s : NULL);
	}
	/* The request's arena stays writable until this completion returns. */
	OPENSSL_cleanse(s->secret, sizeof(s->secret));
}

/* Only an operator may allow private targets (allow: the field's
 * parameter, "t" or "f", or NULL when not given). false: answered 403. */
static bool private_allowed(struct sw_http_request *req, const char *allow)
{
	if (!allow || allow[0] != 't' || req->principal.is_operator)
		return true;
	sw_http_error(req, 403, "FORBIDDEN", "Allowing private notification targets requires the "
		      "operator role.");
	return false;
}

/* target_private of a url parameter (NULL: none): "t" when its host is an
 * IP literal that is not public. */
static const char *target_private(const char *url)
{
	struct sw_str host;
	const char *msg, *refusal = NULL;
	if (url && sw_valid_url(sw_str_cstr(url), false, &host, NULL, &msg) &&
	    sw_net_literal_refusal(host, &refusal) && refusal)
		return "t";
	return "f";
}

/* A new signing secret into s->secret, sealed under aad "channel:<id>":
 * the sealed text in the arena, or NULL. */
static char *new_secret(struct sw_http_request *req, struct save *s)
{
	char aad[SW_SEAL_AAD_MAX];
	sw_seal_aad_channel(aad, s->id);
	size_t cap = sw_seal_size(SIGNING_SECRET_LEN);
	char *sealed = sw_arena_alloc(&req->arena, cap);
	if (!sealed || sw_random_token(s->secret, sizeof(s->secret), SIGNING_SECRET_BYTES) < 0 ||
	    sw_seal(s->secret, strlen(s->secret), aad, sealed, cap) < 0)
		return NULL;
	return sealed;
}

static void channels_create(struct sw_http_request *req)
{
	struct sw_field_errors fe = { 0 };
	const char *params[3 + NFIELDS + 2];
	const char **f = params + 3;
	json_t *body = sw_http_json_body(req);
	if (!body)
		return;
	struct save *s = sw_api_state_new(req, sizeof(*s));
	bool ok = s && sw_api_fields_read(req, body, channel_fields, NFIELDS, true, f, NULL, &fe);
	json_decref(body);
	if (!s)
		return;
	if (!ok) {
		sw_http_validation_error(req, &fe);
		return;
	}
	if (!private_allowed(req, f[F_ALLOW_PRIVATE]))
		return;
	s->creating = true;
	char *sealed = NULL;
	if (sw_notify_uuid(s->id) < 0 ||
	    (strcmp(f[F_KIND], "EMAIL") != 0 && !(sealed = new_secret(req, s)))) {
		OPENSSL_cleanse(s->secret, sizeof(s->secret));
		sw_http_error(req, 500, "INTERNAL_ERROR", "The signing secret could not be made.");
		return;
	}
	params[0] = req->principal.organization_id;
	params[1] = s->id;
	params[2] = req->principal.user_id;
	f[NFIELDS] = target_private(f[F_URL]);
	f[NFIELDS + 1] = sealed;
	if (!sw_api_resource_query_audited(req, &channel, "created", &sw_db_stmt_channel_create, params,
					   SW_ARRAY_SIZE(params), saved, s))
		OPENSSL_cleanse(s->secret, sizeof(s->secret));
}

static void channel_update(struct sw_http_request *req)
{
	struct sw_field_errors fe = { 0 };
	const char *params[4 + NFIELDS + 1];
	const char **f = params + 4;
	char mask[NFIELDS + 1];
	json_t *body = sw_http_json_body(req);
	if (!body)
		return;
	struct save *s = sw_api_state_new(req, sizeof(*s));
	if (!s || !sw_api_path_ids(req, NULL, s->id)) {
		json_decref(body);
		return;
	}
	bool ok = sw_api_fields_read(req, body, channel_fields, NFIELDS, false, f, mask, &fe);
	json_decref(body);
	if (!ok) {
		sw_http_validation_error(req, &fe);
		return;
	}
	if (!private_allowed(req, mask[F_ALLOW_PRIVATE] == '1' ? f[F_ALLOW_PRIVATE] : NULL))
		return;
	bool url_given = mask[F_URL] == '1';
	if (url_given && !req->principal.is_operator && mask[F_ALLOW_PRIVATE] == '0') {
		mask[F_ALLOW_PRIVATE] = '1';
		f[F_ALLOW_PRIVATE] = "f";
	}
	params[0] = req->principal.organization_id;
	params[1] = s->id;
	params[2] = NULL;
	params[3] = mask;
	f[NFIELDS] = url_given ? target_private(f[F_URL]) : NULL;
	sw_api_resource_query_audited(req, &channel, "updated", &sw_db_stmt_channel_update, params,
				      SW_ARRAY_SIZE(params), saved, s);
}

static void channels_list(struct sw_http_request *req) { sw_api_resource_list(req, &channel); }
static void channel_get(struct sw_http_request *req) { sw_api_resource_get(req, &channel); }
static void channel_remove(struct sw_http_request *req) { sw_api_resource_remove(req, &channel); }

/* ---- POST /notification-channels/:id/test ---- */

#define TEST_EVENT "channel.test"
#define TEST_TITLE "Test notification"

struct test {
	struct sw_http_request *req;
	char id[37];
	char delivery_id[37];
};

/* 202 {deliveryId, channelId, event, status: QUEUED}. */
static void answer_queued(struct test *t)
{
	struct sw_http_request *req = t->req;
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	sw_json_object_begin(&j);
	sw_json_key(&j, "deliveryId");
	sw_json_cstr(&j, t->delivery_id);
	sw_json_key(&j, "channelId");
	sw_json_cstr(&j, t->id);
	sw_json_key(&j, "event");
	sw_json_cstr(&j, TEST_EVENT);
	sw_json_key(&j, "status");
	sw_json_cstr(&j, "QUEUED");
	sw_json_object_end(&j);
	sw_http_json_end(req, 202, &buf, &j);
}

/* A failed hand-over to the mail or notify queue. */
static void not_queued(struct sw_http_request *req, int r)
{
	if (r == -EBUSY || r == -EAGAIN)
		sw_api_busy(req);
	else
		sw_api_internal_error(req);
}

static void test_email(struct test *t, const PGresult *res)
{
	struct sw_http_request *req = t->req;
	if (!sw_mail_configured()) {
		sw_http_error(req, 409, "MAIL_NOT_CONFIGURED",
			      "Mail is not configured on this installation (SMTP_URL), so an EMAIL "
			      "channel cannot be sent to.");
		return;
	}
	char text[512];
	snprintf(text, sizeof(text),
		 "This is a test notification from Steward for the notification channel \"%s\".\n"
		 "If you can read it, the channel works.\n\nDelivery %s\n",
		 PQgetvalue(res, 0, SW_DB_DELIVERY_NAME), t->delivery_id);
	json_t *addresses = json_loads(PQgetvalue(res, 0, SW_DB_DELIVERY_ADDRESSES), 0, NULL);
	size_t i;
	json_t *a;
	int r = addresses ? 0 : -ENOMEM;
	json_array_foreach(addresses, i, a) {
		if (r == 0 && json_is_string(a))
			r = sw_mail_send(json_string_value(a), "Steward: " TEST_TITLE, text);
	}
	json_decref(addresses);
	if (r < 0)
		not_queued(req, r);
	else
		answer_queued(t);
}

static enum sw_notify_kind notify_kind(const char *kind)
{
	return strcmp(kind, "SLACK") == 0	? SW_NOTIFY_SLACK
	       : strcmp(kind, "DISCORD") == 0 ? SW_NOTIFY_DISCORD
					      : SW_NOTIFY_WEBHOOK;
}

static void test_http(struct test *t, const PGresult *res)
{
	struct sw_http_request *req = t->req;
	const char *name = PQgetvalue(res, 0, SW_DB_DELIVERY_NAME);
	char secret[SIGNING_SECRET_LEN + 1] = "";
	size_t secret_len = 0;
	char aad[SW_SEAL_AAD_MAX], text[256];
	sw_seal_aad_channel(aad, t->id);
	snprintf(text, sizeof(text),
		 "This is a test notification from Steward for the notification channel \"%s\". "
		 "If it arrived, the channel works.", name);
	struct sw_buf data = { 0 }, body = { 0 };
	struct sw_json j;
	sw_json_init(&j, &data);
	sw_json_object_begin(&j);
	sw_json_key(&j, "channelId");
	sw_json_cstr(&j, t->id);
	sw_json_key(&j, "channelName");
	sw_json_cstr(&j, name);
	sw_json_object_end(&j);
	int r = sw_json_finish(&j) == 0 && sw_buf_append_lit(&data, "\0") == 0 ? 0 : -ENOMEM;
	const struct sw_notify_event ev = {
		.delivery_id = t->delivery_id,
		.type = TEST_EVENT,
		.wall_ms = sw_wall_ms(),
		.title = TEST_TITLE,
		.text = text,
		.data_json = r == 0 ? (const char *)data.data : NULL,
	};
	if (r == 0)
		r = sw_notify_payload(&body, notify_kind(PQgetvalue(res, 0, SW_DB_DELIVERY_KIND)), &ev);
	if (r == 0 && !PQgetisnull(res, 0, SW_DB_DELIVERY_SECRET))
		r = sw_unseal(PQgetvalue(res, 0, SW_DB_DELIVERY_SECRET), aad, secret, sizeof(secret),
			      &secret_len);
	if (r == 0) {
		const struct sw_notify_request nr = {
			.channel_id = t->id,
			.delivery_id = t->delivery_id,
			.event_type = TEST_EVENT,
			.url = PQgetvalue(res, 0, SW_DB_DELIVERY_URL),
			.allow_private = PQgetvalue(res, 0, SW_DB_DELIVERY_ALLOW_PRIVATE)[0] == 't',
			.secret = sw_str_from(secret, secret_len),
			.body = sw_str_from((const char *)body.data, body.len),
		};
		r = sw_notify_post(&nr);
	}
	OPENSSL_cleanse(secret, sizeof(secret));
	sw_buf_release(&data);
	sw_buf_release(&body);
	if (r < 0)
		not_queued(req, r);
	else
		answer_queued(t);
}

static void test_loaded(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct test *t = arg;
	if (!sw_api_found(t->req, res, err))
		return;
	if (strcmp(PQgetvalue(res, 0, SW_DB_DELIVERY_KIND), "EMAIL") == 0)
		test_email(t, res);
	else
		test_http(t, res);
}

static void channel_test(struct sw_http_request *req)
{
	struct test *t = sw_api_state_new(req, sizeof(*t));
	if (!t || !sw_api_path_ids(req, NULL, t->id))
		return;
	if (sw_notify_uuid(t->delivery_id) < 0) {
		sw_api_internal_error(req);
		return;
	}
	/* The record of the test is written with the read of the channel:
	 * no delivery leaves without one. */
	char meta[64];
	snprintf(meta, sizeof(meta), "{\"deliveryId\": \"%s\"}", t->delivery_id);
	const char *params[2] = { req->principal.organization_id, t->id };
	sw_api_query_audited(req, &sw_db_stmt_channel_delivery, params, 2, "notification_channel.tested",
			     "notification_channel", NULL, meta, test_loaded, t);
}

/* ---- routes and schemas ---- */

#define SCOPED " Channels of another organization are not found (404)."
#define SIGNATURE_DOC                                                                          \
	" Every HTTP request Steward sends to a channel carries Steward-Timestamp (Unix seconds "  \
	"of that attempt), Steward-Signature: v1=<lower-case hex of HMAC-SHA256 keyed with the "  \
	"signingSecret string as returned (its ASCII characters) over \"<timestamp>.<raw body>\">, " \
	"Steward-Delivery (the delivery id, the same on every retry) and Steward-Event. Verify "  \
	"the signature with a constant-time comparison and refuse timestamps more than 5 minutes " \
	"old. A delivery is retried after 1 s, 4 s, 16 s, 64 s and 256 s on a network error, a "  \
	"timeout, 408, 429 or 5xx; any other answer but 2xx ends it. Redirects are not followed. " \
	"WEBHOOK bodies are {id, type, createdAt, title, text, data}; SLACK {text}; DISCORD "     \
	"{content, allowed_mentions}."
#define SSRF_DOC                                                                               \
	" A url whose host is a loopback, link-local, private (10/8, 172.16/12, 192.168/16, "      \
	"100.64/10, fc00::/7), unspecified, multicast or reserved IP literal, IPv4-mapped forms "  \
	"included, is 422 on url unless allowPrivateTargets is true; host names are resolved and " \
	"checked at every delivery, and the address checked is the one connected to. Only an "   \
	"operator may set allowPrivateTargets to true (403 FORBIDDEN otherwise)."
#define LIST_DOC SW_API_DOC_PAGE

static const int err_list[] = { 422, 503, 0 };
static const int err_create[] = { 400, 403, 409, 413, 415, 422, 503, 0 };
static const int err_get[] = { 404, 503, 0 };
static const int err_update[] = { 400, 403, 404, 409, 413, 415, 422, 503, 0 };
static const int err_delete[] = { 404, 409, 503, 0 };
static const int err_test[] = { 404, 409, 503, 0 };

#define B SW_HTTP_DEFAULT_MAX_BODY
static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/notification-channels", SW_ACCESS_SESSION, channels_list, 0, 0,
	  { "List notification channels", "Filters: ?kind=, ?enabled=true|false. Never the signing "
	    "secret (hasSigningSecret only)." LIST_DOC, "Notification channels", NULL,
	    "NotificationChannelList", 200, err_list, "limit cursor order kind enabled" } },
	{ SW_HTTP_POST, "/notification-channels", SW_ACCESS_SESSION, channels_create, B, 0,
	  { "Create a notification channel",
	    "kind WEBHOOK, SLACK or DISCORD needs url (https for SLACK and DISCORD); EMAIL needs "
	    "addresses (1 to 10; mailed through SMTP_URL). The answer carries signingSecret (43 "
	    "base64url characters; null for EMAIL) once: it is stored sealed and never shown "
	    "again." SIGNATURE_DOC SSRF_DOC " 409 CHANNEL_EXISTS when the name is taken. Audited as "
	    "notification_channel.created.", "Notification channels", "NotificationChannelCreate",
	    "NotificationChannelCreated", 201, err_create } },
	{ SW_HTTP_GET, "/notification-channels/:id", SW_ACCESS_SESSION, channel_get, 0, 0,
	  { "Get a notification channel", "Never the signing secret." SCOPED,
	    "Notification channels", NULL, "NotificationChannel", 200, err_get } },
	{ SW_HTTP_PATCH, "/notification-channels/:id", SW_ACCESS_SESSION, channel_update, B, 0,
	  { "Update a notification channel",
	    "Partial: only the members given change; kind cannot. A non-operator who changes url "
	    "turns allowPrivateTargets off (an operator's allowance is for the URL it was given "
	    "with)." SSRF_DOC SCOPED, "Notification channels", "NotificationChannelUpdate",
	    "NotificationChannel", 200, err_update } },
	{ SW_HTTP_DELETE, "/notification-channels/:id", SW_ACCESS_SESSION, channel_remove, 0, 0,
	  { "Delete a notification channel", "409 CHANNEL_IN_USE while alert rules notify it "
	    "(their channelIds). A repeat answers 404." SCOPED, "Notification channels", NULL, NULL,
	    204, err_delete } },
	{ SW_HTTP_POST, "/notification-channels/:id/test", SW_ACCESS_SESSION, channel_test, 0, 0,
	  { "Send a test notification",
	    "Queues a channel.test event to the channel, enabled or not, and answers 202 with the "
	    "delivery's id at once; the delivery goes on in the background with its retries and "
	    "its outcome is logged. EMAIL channels without SMTP_URL configured: 409 "
	    "MAIL_NOT_CONFIGURED. 503 when too many deliveries wait." SIGNATURE_DOC SCOPED
	    " Audited as notification_channel.tested.", "Notification channels", NULL,
	    "NotificationTestDelivery", 202, err_test } },
};

#define ID "{\"type\":\"string\",\"format\":\"uuid\"}"
#define TS "{\"type\":\"string\",\"format\":\"date-time\"}"
#define KIND "{\"type\":\"string\",\"enum\":[\"WEBHOOK\",\"SLACK\",\"DISCORD\",\"EMAIL\"]}"
#define URL "{\"type\":[\"string\",\"null\"],\"format\":\"uri\",\"maxLength\":2048,"          \
	"\"description\":\"http(s); null for EMAIL.\"}"
#define ADDRESSES "{\"type\":[\"array\",\"null\"],\"minItems\":1,\"maxItems\":10,\"items\":"  \
	"{\"type\":\"string\",\"format\":\"email\"},\"description\":\"EMAIL only; stored "       \
	"lower-case, each once.\"}"
#define CHANNEL_PROPERTIES                                                                     \
	"\"id\":" ID ",\"name\":{\"$ref\":\"#/components/schemas/ResourceName\"},\"kind\":" KIND \
	",\"url\":" URL ",\"addresses\":" ADDRESSES ",\"enabled\":{\"type\":\"boolean\"},"       \
	"\"allowPrivateTargets\":{\"type\":\"boolean\"},\"hasSigningSecret\":{\"type\":\"boolean\"}," \
	"\"createdAt\":" TS ",\"updatedAt\":" TS
#define CHANNEL_REQUIRED                                                                       \
	"\"id\",\"name\",\"kind\",\"url\",\"addresses\",\"enabled\",\"allowPrivateTargets\","    \
	"\"hasSigningSecret\",\"createdAt\",\"updatedAt\""
#define WRITABLE                                                                               \
	"\"name\":{\"$ref\":\"#/components/schemas/ResourceName\"},\"url\":" URL ","              \
	"\"addresses\":" ADDRESSES ",\"enabled\":{\"type\":\"boolean\",\"default\":true},"       \
	"\"allowPrivateTargets\":{\"type\":\"boolean\",\"default\":false,\"description\":"       \
	"\"Operators only.\"}"

static const char schemas[] = "{"
	"\"NotificationChannel\":{\"type\":\"object\",\"required\":[" CHANNEL_REQUIRED "],"
	"\"properties\":{" CHANNEL_PROPERTIES "}},"
	"\"NotificationChannelCreated\":{\"type\":\"object\",\"required\":[" CHANNEL_REQUIRED
	",\"signingSecret\"],\"properties\":{" CHANNEL_PROPERTIES ","
	"\"signingSecret\":{\"type\":[\"string\",\"null\"],\"pattern\":\"^[A-Za-z0-9_-]{43}$\","
	"\"description\":\"The HMAC key of Steward-Signature; shown only in this response. null "
	"for EMAIL.\"}}},"
	"\"NotificationChannelList\":{\"type\":\"array\",\"items\":"
	"{\"$ref\":\"#/components/schemas/NotificationChannel\"}},"
	"\"NotificationChannelCreate\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"name\",\"kind\"],\"properties\":{\"kind\":" KIND "," WRITABLE "}},"
	"\"NotificationChannelUpdate\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"properties\":{" WRITABLE "}},"
	"\"NotificationTestDelivery\":{\"type\":\"object\",\"required\":[\"deliveryId\","
	"\"channelId\",\"event\",\"status\"],\"properties\":{\"deliveryId\":" ID ","
	"\"channelId\":" ID ",\"event\":{\"const\":\"channel.test\"},"
	"\"status\":{\"const\":\"QUEUED\"}}}"
	"}";

const struct sw_api_route_group sw_api_channels_group = { routes, SW_ARRAY_SIZE(routes), schemas };
