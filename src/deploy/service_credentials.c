/* The one reader of a managed service's sealed credentials
 * (service_credentials.h). The object holds a password: every string in
 * it is wiped before it is freed, whether it was read or refused. */
#include <errno.h>
#include <openssl/crypto.h>
#include "steward/deploy/service_credentials.h"

int sw_service_credentials_parse(const char *text, size_t len, struct sw_service_credentials *ret)
{
	*ret = (struct sw_service_credentials){ 0 };
	ret->json = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	if (!ret->json)
		return -EINVAL;
	struct sw_str *views[] = { &ret->database, &ret->username, &ret->password };
	const char *keys[] = { "database", "username", "password" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(views); i++) {
		json_t *v = json_object_get(ret->json, keys[i]);
		if (!json_is_string(v)) {
			sw_service_credentials_wipe(ret);
			return -EINVAL;
		}
		*views[i] = sw_str_from(json_string_value(v), json_string_length(v));
	}
	return 0;
}

void sw_service_credentials_wipe(struct sw_service_credentials *c)
{
	if (c->json) {
		const char *key;
		json_t *v;
		json_object_foreach(c->json, key, v) {
			if (json_is_string(v) && json_string_length(v))
				OPENSSL_cleanse((void *)json_string_value(v), json_string_length(v));
		}
		json_decref(c->json);
	}
	*c = (struct sw_service_credentials){ 0 };
}
