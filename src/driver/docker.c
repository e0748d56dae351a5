/* Images and containers of the local driver: the Docker Engine API
 * (version 1.41) on the engine's unix socket.
 *
 * Calls and answers used (docs.docker.com/engine/api/v1.41):
 *   POST   /build?t=&dockerfile=&labels=&rm=1&forcerm=1  body: the context
 *          as a tar, sent chunked; answer: JSON progress messages (progress.c).
 *          The classic builder is used (no "version=2"), and it stops the
 *          build and removes its step container when the client goes away:
 *          that is how the cancel flag stops a build.
 *   DELETE /images/{name}?force=0   200; 404 is success (gone); 409 in use
 *   GET    /images/json?filters={"label":["steward.application=<id>"]}
 *   GET    /images/{name}/json      200 exists, 404 not
 *   POST   /containers/create?name= 201 {"Id"}; 409 the name is taken
 *   POST   /containers/{id}/start   204, 304 already running
 *   POST   /containers/{id}/stop?t= 204, 304 already stopped, 404 gone
 *   DELETE /containers/{id}?force=1&v=0  204, 404 gone
 *   GET    /containers/json?all=1&filters={"label":[...]}
 *   POST   /volumes/create          201 (also when it exists already)
 *   GET    /volumes?filters={"label":["steward.application=<id>"]}
 *          {"Volumes": [{"Name"}] | null}
 *   DELETE /volumes/{name}          204; 404 is success (gone); 409 in use
 * Names and ids reach paths only after a strict character check, and
 * query values are percent-encoded. */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "steward/base/limits.h"
#include "steward/base/validate.h"
#include "driver/driver_internal.h"

#define ENGINE "the Docker engine"

/* ---- input checks ---- */

/* An image reference: "repo[:tag]" or an id. It lands in a path, so no
 * component may be "." or "..". */
static bool valid_ref(const char *s)
{
	return s && s[0] != '-' && s[0] != '/' && s[0] != '.' && !strstr(s, "..") && !strstr(s, "/.") &&
	       !strstr(s, "//") && sw_driver_token_ok(s, "._/:@-", SW_DRIVER_TAG_MAX - 1);
}

/* A container name or id, as the engine accepts names. */
static bool valid_container(const char *s)
{
	return s && s[0] != '-' && s[0] != '.' && s[0] != '_' && sw_driver_token_ok(s, "._-", 127);
}

/* The Dockerfile's path inside the context: relative, no ".." component. */
static bool valid_dockerfile(const char *s)
{
	if (!s || !s[0] || s[0] == '/' || strlen(s) > 255)
		return false;
	for (const char *c = s;;) {
		size_t len = strcspn(c, "/");
		if (len == 2 && c[0] == '.' && c[1] == '.')
			return false;
		if (!c[len])
			return true;
		c += len + 1;
	}
}

/* A lower-case UUID: 8-4-4-4-12 hex digits. */
static bool valid_uuid(const char *s, size_t len)
{
	if (len != 36)
		return false;
	for (size_t i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? s[i] != '-' : !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return true;
}

/* One of Steward's volume names (driver.h): "sw-svc-<uuid>-data" or
 * "sw-<uuid>-<resource name>". */
static bool valid_volume(const char *s)
{
	const char *msg;
	size_t len = s ? strlen(s) : 0;
	if (len >= SW_DRIVER_VOLUME_MAX || strncmp(s, "sw-", 3) != 0)
		return false;
	if (strncmp(s, "sw-svc-", 7) == 0 && len == 7 + 36 + 5 && valid_uuid(s + 7, 36) &&
	    strcmp(s + 43, "-data") == 0)
		return true;
	return len > 3 + 36 + 1 && valid_uuid(s + 3, 36) && s[39] == '-' &&
	       sw_valid_resource_name(sw_str_cstr(s + 40), &msg);
}

/* "key=value" pairs into a JSON object; NULL on a malformed pair. */
static json_t *labels_object(const char *const *labels)
{
	json_t *o = json_object();
	for (size_t i = 0; o && labels && labels[i]; i++) {
		const char *eq = strchr(labels[i], '=');
		if (!eq || eq == labels[i] || (size_t)(eq - labels[i]) > 255) {
			json_decref(o);
			return NULL;
		}
		char key[256];
		memcpy(key, labels[i], (size_t)(eq - labels[i]));
		key[eq - labels[i]] = '\0';
		if (json_object_set_new(o, key, json_string(eq + 1)) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

/* ---- one engine call ---- */

static void engine_request(const struct sw_driver *d, struct sw_driver_http *h, const char *method,
			   const char *url)
{
	*h = (struct sw_driver_http){ .method = method, .url = url, .unix_socket = d->docker_socket,
				      .timeout_ms = SW_DRIVER_ENGINE_TIMEOUT_MS };
}

static int engine_run(struct sw_driver_http *h, char *err, size_t errlen)
{
	return sw_driver_http_run(h, ENGINE, err, errlen);
}

/* The URL of path (already encoded) into b; 0 or -ENOMEM. */
static int engine_vurl(struct sw_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static int engine_vurl(struct sw_buf *b, const char *fmt, va_list ap)
{
	b->len = 0;
	if (sw_buf_append_lit(b, SW_DRIVER_ENGINE_BASE) < 0)
		return -ENOMEM;
	char tmp[512];
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	if (sw_buf_append(b, tmp, (size_t)n + 1) < 0)
		return -ENOMEM;
	b->len--;
	return 0;
}

static int engine_url(struct sw_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int engine_url(struct sw_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = engine_vurl(b, fmt, ap);
	va_end(ap);
	return r;
}

/* DELETE the path fmt names: 0 when the answer is ok_status or 404
 * (gone already); 409 is -EBUSY with busy as the sentence (NULL: the
 * engine's, after what); other answers -errno with "<what>: <the
 * engine's message>". */
static int engine_delete(struct sw_driver *d, long ok_status, const char *what, const char *busy,
			 char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static int engine_delete(struct sw_driver *d, long ok_status, const char *what, const char *busy,
			 char *err, size_t errlen, const char *fmt, ...)
{
	struct sw_buf url = { 0 };
	va_list ap;
	va_start(ap, fmt);
	int rc = engine_vurl(&url, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	struct sw_driver_http h;
	engine_request(d, &h, "DELETE", url.data);
	rc = engine_run(&h, err, errlen);
	if (rc == 0 && h.status != ok_status && h.status != 404) {
		if (h.status == 409 && busy)
			snprintf(err, errlen, "%s", busy);
		else
			sw_driver_answer_error(&h, what, err, errlen);
		rc = h.status == 409 ? -EBUSY : sw_driver_status_errno(h.status);
	}
	sw_buf_release(&h.response);
out:
	sw_buf_release(&url);
	return rc;
}

/* GET /<kind>/<name>/json (an image or a container): its object into
 * *ret (a new reference) when the engine answers 200; else -errno (404:
 * -ENOENT) and *ret NULL. */
static int engine_inspect(struct sw_driver *d, const char *kind, const char *name, json_t **ret,
			  char *err, size_t errlen)
{
	*ret = NULL;
	struct sw_buf url = { 0 };
	struct sw_driver_http h = { 0 };
	int rc = engine_url(&url, "/%s/%s/json", kind, name);
	if (rc == 0) {
		engine_request(d, &h, "GET", url.data);
		rc = engine_run(&h, err, errlen);
	}
	if (rc == 0 && h.status != 200)
		rc = sw_driver_status_errno(h.status);
	if (rc == 0 && !(*ret = json_loadb(h.response.data, h.response.len, 0, NULL)))
		rc = -EIO;
	sw_buf_release(&h.response);
	sw_buf_release(&url);
	return rc;
}

/* Appends "&name=<json encoded>" with the JSON text percent-encoded. */
static int append_json_param(struct sw_buf *b, const char *name, json_t *value)
{
	char *text = json_dumps(value, JSON_COMPACT);
	if (!text)
		return -ENOMEM;
	int rc = sw_buf_appendf(b, "%s%s=", strchr(b->data, '?') ? "&" : "?", name);
	if (rc == 0)
		rc = sw_driver_url_encode(b, text);
	free(text);
	if (rc == 0)
		rc = sw_buf_append(b, "", 1); /* keep it a C string */
	if (rc == 0)
		b->len--;
	return rc;
}

static json_t *label_filter(const char *key, const char *value)
{
	char pair[160];
	snprintf(pair, sizeof(pair), "%s=%s", key, value);
	return json_pack("{s:[s]}", "label", pair);
}

/* GET path (a list: "/images/json", "/containers/json?all=1"), filtered
 * by label steward.application=<application_id> unless NULL, into a JSON
 * array (*ret, a new reference); member: the answer is an object holding
 * the array there (null: empty). what names the list in sentences. */
static int engine_list(struct sw_driver *d, const char *path, const char *member,
		       const char *application_id, const char *what, json_t **ret, char *err, size_t errlen)
{
	if (application_id && !sw_driver_app_id_ok(application_id)) {
		snprintf(err, errlen, "invalid application id");
		return -EINVAL;
	}
	json_t *filter = application_id ? label_filter("steward.application", application_id) : NULL;
	struct sw_buf url = { 0 };
	struct sw_driver_http h = { 0 };
	int rc = -ENOMEM;
	if ((application_id && !filter) || engine_url(&url, "%s", path) < 0 ||
	    (filter && append_json_param(&url, "filters", filter) < 0)) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	engine_request(d, &h, "GET", url.data);
	rc = engine_run(&h, err, errlen);
	if (rc < 0)
		goto out;
	if (h.status != 200) {
		char sentence[96];
		snprintf(sentence, sizeof(sentence), "the %s cannot be listed", what);
		sw_driver_answer_error(&h, sentence, err, errlen);
		rc = sw_driver_status_errno(h.status);
		goto out;
	}
	*ret = json_loadb(h.response.data, h.response.len, 0, NULL);
	if (member && json_is_object(*ret)) {
		json_t *list = json_object_get(*ret, member);
		list = json_is_null(list) ? json_array() : json_incref(list);
		json_decref(*ret);
		*ret = list;
	}
	if (!json_is_array(*ret)) {
		json_decref(*ret);
		*ret = NULL;
		snprintf(err, errlen, ENGINE " sent a list of %s that is not JSON", what);
		rc = -EIO;
	}
out:
	json_decref(filter);
	sw_buf_release(&h.response);
	sw_buf_release(&url);
	return rc;
}

/* ---- images ---- */

struct build_run {
	struct sw_driver_tar *tar;
	const struct sw_image_build *b; /* without a tar: its context_read */
	struct sw_driver_progress progress;
};

static ssize_t build_read(void *arg, char *out, size_t cap)
{
	struct build_run *r = arg;
	return r->tar ? sw_driver_tar_read(r->tar, out, cap) : r->b->context_read(r->b->context_arg, out, cap);
}

static int build_data(void *arg, const char *p, size_t n)
{
	struct build_run *r = arg;
	return sw_driver_progress_feed(&r->progress, p, n);
}

int sw_driver_image_build(struct sw_driver *d, const struct sw_image_build *b,
			  sw_driver_log_fn log, void *log_arg, char *err, size_t errlen)
{
	if (d->remote)
		return sw_rd_image_build(d, b, log, log_arg, err, errlen);
	if (!valid_ref(b->tag) || !(b->context_dir || b->context_read) || !valid_dockerfile(b->dockerfile)) {
		snprintf(err, errlen, "the image build was given an invalid tag or Dockerfile path");
		return -EINVAL;
	}
	if (b->cancel && __atomic_load_n(b->cancel, __ATOMIC_RELAXED)) {
		snprintf(err, errlen, "the build was cancelled");
		return -ECANCELED;
	}
	json_t *labels = labels_object(b->labels);
	if (!labels) {
		snprintf(err, errlen, "the image build was given a malformed label");
		return -EINVAL;
	}
	struct build_run r = { 0 };
	struct sw_buf url = { 0 };
	struct sw_driver_http h;
	int rc = -ENOMEM;
	if (sw_buf_appendf(&url, SW_DRIVER_ENGINE_BASE "/build?rm=1&forcerm=1&t=") < 0 ||
	    sw_driver_url_encode(&url, b->tag) < 0 || sw_buf_append_lit(&url, "&dockerfile=") < 0 ||
	    sw_driver_url_encode(&url, b->dockerfile) < 0 || append_json_param(&url, "labels", labels) < 0) {
		snprintf(err, errlen, "out of memory");
		goto free_url;
	}
	r.b = b;
	r.tar = b->context_dir ? sw_driver_tar_open(b->context_dir, b->dockerfile, b->context_max_bytes, err,
						    errlen)
			       : NULL;
	if (b->context_dir && !r.tar) {
		rc = -errno;
		goto free_url;
	}
	sw_driver_progress_init(&r.progress, log, log_arg);
	engine_request(d, &h, "POST", url.data);
	h.content_type = "application/x-tar";
	h.read = build_read;
	h.read_arg = &r;
	h.on_data = build_data;
	h.data_arg = &r;
	h.cancel = b->cancel;
	h.timeout_ms = 0; /* a build takes what it takes; the cancel flag stops it */
	rc = engine_run(&h, err, errlen);
	sw_driver_progress_finish(&r.progress);
	if (rc == -ECANCELED) {
		snprintf(err, errlen, "the build was cancelled");
	} else if (rc < 0 && r.tar && sw_driver_tar_error(r.tar)[0]) {
		snprintf(err, errlen, "%s", sw_driver_tar_error(r.tar));
	} else if (rc < 0) {
		/* err says why already */
	} else if (h.status != 200) {
		sw_driver_answer_error(&h, "the image build was refused", err, errlen);
		rc = sw_driver_status_errno(h.status);
	} else if (r.progress.failed) {
		snprintf(err, errlen, "the image build failed: %s", r.progress.error);
		rc = -EIO;
	} else if (!r.progress.image_id[0]) {
		snprintf(err, errlen, "the image build ended without an image");
		rc = -EIO;
	}
	sw_buf_release(&h.response);
	sw_driver_progress_release(&r.progress);
	sw_driver_tar_free(r.tar);
free_url:
	sw_buf_release(&url);
	json_decref(labels);
	return rc;
}

int sw_driver_image_remove(struct sw_driver *d, const char *tag, char *err, size_t errlen)
{
	if (d->remote)
		return sw_rd_image_remove(d, tag, err, errlen);
	if (!valid_ref(tag)) {
		snprintf(err, errlen, "invalid image tag");
		return -EINVAL;
	}
	return engine_delete(d, 200, "the image cannot be removed", NULL, err, errlen, "/images/%s?force=0", tag);
}

struct tagged {
	char tag[SW_DRIVER_TAG_MAX];
	int64_t created;
	uint64_t number; /* the deployment number after the tag's last ':' */
	bool numbered;
};

/* Newest first: by deployment number (an image reused from the cache by a
 * later deployment keeps its old creation time), then by creation. */
static int tagged_cmp(const void *a, const void *b)
{
	const struct tagged *x = a, *y = b;
	if (x->numbered != y->numbered)
		return x->numbered ? -1 : 1;
	if (x->numbered && x->number != y->number)
		return x->number > y->number ? -1 : 1;
	if (x->created != y->created)
		return x->created > y->created ? -1 : 1;
	return strcmp(x->tag, y->tag);
}

int sw_driver_images_list(struct sw_driver *d, const char *application_id,
			  char (*tags)[SW_DRIVER_TAG_MAX], size_t cap, size_t *ret_n,
			  char *err, size_t errlen)
{
	if (d->remote)
		return sw_rd_images_list(d, application_id, tags, cap, ret_n, err, errlen);
	if (!application_id) {
		snprintf(err, errlen, "invalid application id");
		return -EINVAL;
	}
	struct tagged *all = NULL;
	json_t *doc = NULL;
	int rc = engine_list(d, "/images/json", NULL, application_id, "images", &doc, err, errlen);
	if (rc < 0)
		return rc;
	size_t n = 0, max = 0, i;
	json_t *img;
	json_array_foreach(doc, i, img)
		max += json_array_size(json_object_get(img, "RepoTags"));
	max = SW_MIN(max, (size_t)SW_DRIVER_LIST_MAX);
	all = calloc(max ? max : 1, sizeof(*all));
	if (!all) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	json_array_foreach(doc, i, img) {
		json_t *repo_tags = json_object_get(img, "RepoTags");
		size_t j;
		json_t *t;
		json_array_foreach(repo_tags, j, t) {
			const char *s = json_string_value(t);
			if (!s || strcmp(s, "<none>:<none>") == 0 || strlen(s) >= SW_DRIVER_TAG_MAX || n == max)
				continue;
			struct tagged *e = &all[n++];
			snprintf(e->tag, sizeof(e->tag), "%s", s);
			e->created = json_integer_value(json_object_get(img, "Created"));
			const char *colon = strrchr(s, ':');
			e->numbered = colon && !strchr(colon, '/') &&
				      sw_parse_u64(sw_str_cstr(colon + 1), &e->number);
		}
	}
	qsort(all, n, sizeof(*all), tagged_cmp);
	size_t out_n = SW_MIN(n, cap);
	for (size_t k = 0; k < out_n; k++)
		memcpy(tags[k], all[k].tag, SW_DRIVER_TAG_MAX);
	*ret_n = out_n;
out:
	free(all);
	json_decref(doc);
	return rc;
}

bool sw_driver_image_exists(struct sw_driver *d, const char *tag)
{
	if (d->remote)
		return sw_rd_image_exists(d, tag);
	if (!valid_ref(tag))
		return false;
	char err[256];
	json_t *doc;
	bool exists = engine_inspect(d, "images", tag, &doc, err, sizeof(err)) == 0;
	json_decref(doc);
	return exists;
}

/* ---- containers ---- */

/* The secret values of env replaced by "***" in err (errlen bytes): the
 * engine's messages can quote what it was given. */
static void scrub_env(char *err, size_t errlen, const char *const *env)
{
	char *tmp = malloc(errlen);
	if (!tmp) {
		snprintf(err, errlen, "the container cannot be created");
		return;
	}
	for (size_t i = 0; env && env[i]; i++) {
		const char *v = strchr(env[i], '=');
		if (!v || strlen(++v) < SW_VARIABLE_SCRUB_MIN_LEN)
			continue; /* too short to mask (limits.h) */
		size_t vlen = strlen(v), o = 0;
		for (const char *c = err; *c && o + 1 < errlen;) {
			size_t rest = strlen(c);
			/* The value, or its start where the sentence was cut. */
			if (strncmp(c, v, vlen) == 0 || (rest < vlen && rest >= 4 && memcmp(c, v, rest) == 0)) {
				for (size_t k = 0; k < 3 && o + 1 < errlen; k++)
					tmp[o++] = '*';
				c += SW_MIN(vlen, rest);
			} else {
				tmp[o++] = *c++;
			}
		}
		tmp[o] = '\0';
		memcpy(err, tmp, o + 1);
	}
	free(tmp);
}

static bool env_has(const char *const *env, const char *key)
{
	size_t n = strlen(key);
	for (size_t i = 0; env && env[i]; i++)
		if (strncmp(env[i], key, n) == 0 && env[i][n] == '=')
			return true;
	return false;
}

/* The JSON body of POST /containers/create; NULL on a malformed input
 * (a mount or a label) with the reason in err. */
int sw_driver_expand_port(const char *arg, unsigned port, char *out, size_t cap)
{
	char num[16];
	int nn = snprintf(num, sizeof(num), "%u", port);
	size_t o = 0;
	int found = 0;
	for (const char *p = arg; *p;) {
		size_t skip = 0;
		if (strncmp(p, "${PORT}", 7) == 0)
			skip = 7;
		else if (strncmp(p, "$PORT", 5) == 0 && !(isalnum((unsigned char)p[5]) || p[5] == '_'))
			skip = 5;
		const char *piece = skip ? num : p;
		size_t n = skip ? (size_t)nn : 1;
		if (o + n >= cap)
			return -E2BIG;
		memcpy(out + o, piece, n);
		o += n;
		p += skip ? skip : 1;
		found |= skip != 0;
	}
	out[o] = '\0';
	return found;
}

/* The command a container runs with "$PORT" and "${PORT}" replaced in
 * each argument: the body's Cmd (the caller's cmd) or, without one, the
 * image's own Config.Cmd. NULL when there is nothing to replace (the
 * command then stands as it is), or *ret_err set on a failure. */
static json_t *port_command(struct sw_driver *d, const struct sw_container_spec *s, json_t *body,
			    int *ret_err, char *err, size_t errlen)
{
	*ret_err = 0;
	json_t *doc = NULL, *out = NULL;
	json_t *src = json_object_get(body, "Cmd");
	if (!src && engine_inspect(d, "images", s->image, &doc, err, errlen) == 0)
		src = json_object_get(json_object_get(doc, "Config"), "Cmd");
	size_t i;
	json_t *v;
	bool any = false;
	char buf[4096];
	out = json_is_array(src) ? json_array() : NULL;
	json_array_foreach(out ? src : NULL, i, v) {
		const char *a = json_string_value(v);
		int r = a ? sw_driver_expand_port(a, s->port, buf, sizeof(buf)) : -EINVAL;
		if (r < 0) {
			*ret_err = -EINVAL;
			snprintf(err, errlen, "argument %zu of the container's command is %s", i,
				 a ? "too long once $PORT is replaced" : "not a string");
			break;
		}
		any |= r > 0;
		json_array_append_new(out, json_string(r > 0 ? buf : a));
	}
	json_decref(doc);
	if (*ret_err || !any) {
		json_decref(out);
		return NULL;
	}
	return out;
}

static json_t *create_body(const struct sw_container_spec *s, char *err, size_t errlen)
{
	json_t *env = json_array(), *cmd = NULL, *mounts = json_array(), *binds = json_array();
	json_t *labels = labels_object(s->labels);
	json_t *body = NULL;
	if (!env || !mounts || !binds || !labels) {
		snprintf(err, errlen, labels ? "out of memory" : "the container was given a malformed label");
		goto fail;
	}
	for (size_t i = 0; s->env && s->env[i]; i++)
		if (!strchr(s->env[i], '=') || json_array_append_new(env, json_string(s->env[i])) < 0) {
			snprintf(err, errlen, "the container was given a malformed environment variable");
			goto fail;
		}
	if (s->port && !env_has(s->env, "PORT")) {
		char port[24];
		snprintf(port, sizeof(port), "PORT=%u", s->port);
		json_array_append_new(env, json_string(port));
	}
	if (s->cmd) {
		cmd = json_array();
		for (size_t i = 0; cmd && s->cmd[i]; i++)
			json_array_append_new(cmd, json_string(s->cmd[i]));
	}
	for (size_t i = 0; s->mounts && s->mounts[i]; i++) {
		const char *m = s->mounts[i];
		const char *colon = strchr(m, ':');
		if (!colon || colon == m || colon[1] != '/' || strchr(colon + 1, ':')) {
			snprintf(err, errlen, "the container was given a malformed mount");
			goto fail;
		}
		/* A host path is a bind (created when missing, as docker run -v
		 * does); a name is a named volume (created on first use). */
		if (m[0] == '/') {
			json_array_append_new(binds, json_string(m));
		} else {
			json_t *v = json_pack("{s:s, s:s#, s:s}", "Type", "volume", "Source", m,
					      (int)(colon - m), "Target", colon + 1);
			if (!v || json_array_append_new(mounts, v) < 0) {
				snprintf(err, errlen, "out of memory");
				goto fail;
			}
		}
	}
	/* Init: the engine's docker-init is PID 1, forwarding signals and
	 * reaping orphans, so a program that installs no SIGTERM handler
	 * still stops on SIGTERM (PID 1 would ignore it). */
	json_t *host = json_pack(
		"{s:s, s:b, s:O, s:O, s:I, s:I, s:{s:s}, s:{s:s, s:{s:s, s:s}}}", "NetworkMode", "host",
		"Init", 1, "Mounts", mounts, "Binds", binds, "Memory", (json_int_t)s->memory_bytes, "NanoCpus",
		(json_int_t)s->nano_cpus, "RestartPolicy", "Name",
		s->restart_unless_stopped ? "unless-stopped" : "no", "LogConfig", "Type", "json-file",
		"Config", "max-size", "10m", "max-file", "3");
	body = host ? json_pack("{s:s, s:O, s:O, s:o}", "Image", s->image, "Env", env, "Labels", labels,
				"HostConfig", host)
		    : NULL;
	if (body && cmd && json_object_set(body, "Cmd", cmd) < 0) {
		json_decref(body);
		body = NULL;
	}
	if (!body)
		snprintf(err, errlen, "out of memory");
fail:
	json_decref(env);
	json_decref(cmd);
	json_decref(mounts);
	json_decref(binds);
	json_decref(labels);
	return body;
}

/* The id of an existing container by name into id. */
static int container_id(struct sw_driver *d, const char *name, char id[SW_DRIVER_ID_MAX])
{
	char err[256];
	json_t *doc;
	int rc = engine_inspect(d, "containers", name, &doc, err, sizeof(err));
	const char *s = json_string_value(json_object_get(doc, "Id"));
	if (rc == 0 && s)
		snprintf(id, SW_DRIVER_ID_MAX, "%s", s);
	else if (rc == 0)
		rc = -EIO;
	json_decref(doc);
	return rc;
}

int sw_driver_container_create(struct sw_driver *d, const struct sw_container_spec *s,
			       char id[SW_DRIVER_ID_MAX], char *err, size_t errlen)
{
	if (d->remote)
		return sw_rd_container_create(d, s, id, err, errlen);
	if (!valid_container(s->name) || !valid_ref(s->image)) {
		snprintf(err, errlen, "the container was given an invalid name or image");
		return -EINVAL;
	}
	json_t *body = create_body(s, err, errlen);
	if (!body)
		return -EINVAL;
	if (s->port) {
		int perr;
		json_t *cmd = port_command(d, s, body, &perr, err, errlen);
		if (perr) {
			json_decref(body);
			return perr;
		}
		if (cmd)
			json_object_set_new(body, "Cmd", cmd);
	}
	char *text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	struct sw_buf url = { 0 };
	struct sw_driver_http h = { 0 };
	int rc = -ENOMEM;
	if (!text || engine_url(&url, "/containers/create?name=%s", s->name) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	engine_request(d, &h, "POST", url.data);
	h.content_type = "application/json";
	h.body = text;
	h.body_len = strlen(text);
	rc = engine_run(&h, err, errlen);
	if (rc < 0)
		goto out;
	if (h.status == 409) {
		/* Not replaced: its spec may differ. The caller removes it first
		 * when it wants this one. */
		snprintf(err, errlen, "a container named %s exists already", s->name);
		rc = -EEXIST;
		if (container_id(d, s->name, id) < 0)
			id[0] = '\0';
		goto out;
	}
	if (h.status != 201) {
		sw_driver_answer_error(&h, "the container cannot be created", err, errlen);
		scrub_env(err, errlen, s->env);
		rc = sw_driver_status_errno(h.status);
		goto out;
	}
	json_t *doc = json_loadb(h.response.data, h.response.len, 0, NULL);
	const char *cid = json_string_value(json_object_get(doc, "Id"));
	if (cid && strlen(cid) < SW_DRIVER_ID_MAX) {
		snprintf(id, SW_DRIVER_ID_MAX, "%s", cid);
	} else {
		snprintf(err, errlen, ENGINE " created a container but sent no id");
		rc = -EIO;
	}
	json_decref(doc);
out:
	sw_buf_release(&h.response);
	sw_buf_release(&url);
	if (text) {
		/* It held the environment's values. */
		explicit_bzero(text, strlen(text));
		free(text);
	}
	return rc;
}

/* POST /containers/{id}/<verb>: ok statuses answer 0, gone ones too when
 * gone_ok. */
static int container_action(struct sw_driver *d, const char *id_or_name, const char *verb,
			    unsigned timeout_s, bool gone_ok, char *err, size_t errlen)
{
	if (!valid_container(id_or_name)) {
		snprintf(err, errlen, "invalid container name");
		return -EINVAL;
	}
	struct sw_buf url = { 0 };
	struct sw_driver_http h = { 0 };
	int rc = strcmp(verb, "stop") == 0
			 ? engine_url(&url, "/containers/%s/stop?t=%u", id_or_name, timeout_s)
			 : engine_url(&url, "/containers/%s/%s", id_or_name, verb);
	if (rc < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	engine_request(d, &h, "POST", url.data);
	if (strcmp(verb, "stop") == 0)
		h.timeout_ms = (long)timeout_s * 1000 + SW_DRIVER_ENGINE_TIMEOUT_MS;
	rc = engine_run(&h, err, errlen);
	if (rc < 0 || h.status == 204 || h.status == 304 || (h.status == 404 && gone_ok))
		goto out;
	char what[192];
	snprintf(what, sizeof(what), "the container %s cannot be %s", id_or_name,
		 strcmp(verb, "stop") == 0 ? "stopped" : "started");
	sw_driver_answer_error(&h, what, err, errlen);
	rc = sw_driver_status_errno(h.status);
out:
	sw_buf_release(&h.response);
	sw_buf_release(&url);
	return rc;
}

int sw_driver_container_start(struct sw_driver *d, const char *id_or_name, char *err, size_t errlen)
{
	if (d->remote)
		return sw_rd_container_action(d, "container.start", id_or_name, 0, err, errlen);
	return container_action(d, id_or_name, "start", 0, false, err, errlen);
}

int sw_driver_container_stop(struct sw_driver *d, const char *id_or_name, unsigned timeout_s,
			     char *err, size_t errlen)
{
	if (d->remote)
		return sw_rd_container_action(d, "container.stop", id_or_name, timeout_s, err, errlen);
	return container_action(d, id_or_name, "stop", timeout_s, true, err, errlen);
}

int sw_driver_container_remove(struct sw_driver *d, const char *id_or_name, char *err, size_t errlen)
{
	if (d->remote)
		return sw_rd_container_action(d, "container.remove", id_or_name, 0, err, errlen);
	if (!valid_container(id_or_name)) {
		snprintf(err, errlen, "invalid container name");
		return -EINVAL;
	}
	char what[192];
	snprintf(what, sizeof(what), "the container %s cannot be removed", id_or_name);
	return engine_delete(d, 204, what, NULL, err, errlen, "/containers/%s?force=1&v=0", id_or_name);
}

static void copy_str(char *dst, size_t cap, json_t *v)
{
	const char *s = json_string_value(v);
	snprintf(dst, cap, "%s", s ? s : "");
}

static int info_cmp(const void *a, const void *b)
{
	const struct sw_container_info *x = a, *y = b;
	if (x->created != y->created)
		return x->created > y->created ? -1 : 1;
	return strcmp(x->name, y->name);
}

int sw_driver_containers_list(struct sw_driver *d, const char *application_id,
			      struct sw_container_info *out, size_t cap, size_t *ret_n,
			      char *err, size_t errlen)
{
	if (d->remote)
		return sw_rd_containers_list(d, application_id, out, cap, ret_n, err, errlen);
	json_t *doc = NULL;
	int rc = engine_list(d, "/containers/json?all=1", NULL, application_id, "containers", &doc, err,
			     errlen);
	if (rc < 0)
		return rc;
	/* Sorted before the cap applies: the newest are kept. */
	size_t total = SW_MIN(json_array_size(doc), (size_t)SW_DRIVER_LIST_MAX);
	struct sw_container_info *all = calloc(total ? total : 1, sizeof(*all));
	if (!all) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < total; i++) {
		json_t *c = json_array_get(doc, i);
		struct sw_container_info *e = &all[i];
		json_t *labels = json_object_get(c, "Labels");
		copy_str(e->id, sizeof(e->id), json_object_get(c, "Id"));
		const char *name = json_string_value(json_array_get(json_object_get(c, "Names"), 0));
		snprintf(e->name, sizeof(e->name), "%s", name ? name + (name[0] == '/') : "");
		copy_str(e->image, sizeof(e->image), json_object_get(c, "Image"));
		copy_str(e->state, sizeof(e->state), json_object_get(c, "State"));
		copy_str(e->status, sizeof(e->status), json_object_get(c, "Status"));
		copy_str(e->project, sizeof(e->project), json_object_get(labels, "com.docker.compose.project"));
		copy_str(e->colour, sizeof(e->colour), json_object_get(labels, "steward.colour"));
		e->created = json_integer_value(json_object_get(c, "Created"));
	}
	qsort(all, total, sizeof(*all), info_cmp);
	*ret_n = SW_MIN(total, cap);
	memcpy(out, all, *ret_n * sizeof(*all));
	free(all);
out:
	json_decref(doc);
	return rc;
}

/* ---- named volumes ---- */

int sw_driver_volume_create(struct sw_driver *d, const struct sw_volume_spec *v, char *err, size_t errlen)
{
	if (d->remote)
		return sw_rd_volume_create(d, v, err, errlen);
	const char *owner = v->application_id ? v->application_id : v->service_id;
	if (!valid_volume(v->name) || !owner || (v->application_id && v->service_id) ||
	    !sw_driver_app_id_ok(owner)) {
		snprintf(err, errlen, "the volume was given an invalid name or owner");
		return -EINVAL;
	}
	json_t *body = json_pack("{s:s, s:s, s:{s:s, s:s}}", "Name", v->name, "Driver", "local", "Labels",
				 "steward.managed", "true",
				 v->application_id ? "steward.application" : "steward.service", owner);
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	struct sw_buf url = { 0 };
	struct sw_driver_http h = { 0 };
	int rc = -ENOMEM;
	if (!text || engine_url(&url, "/volumes/create") < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	engine_request(d, &h, "POST", url.data);
	h.content_type = "application/json";
	h.body = text;
	h.body_len = strlen(text);
	rc = engine_run(&h, err, errlen);
	if (rc == 0 && h.status != 201 && h.status != 200) {
		char what[192];
		snprintf(what, sizeof(what), "the volume %s cannot be created", v->name);
		sw_driver_answer_error(&h, what, err, errlen);
		rc = sw_driver_status_errno(h.status);
	}
out:
	sw_buf_release(&h.response);
	sw_buf_release(&url);
	free(text);
	return rc;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

int sw_driver_volumes_list(struct sw_driver *d, const char *application_id,
			   char (*names)[SW_DRIVER_VOLUME_MAX], size_t cap, size_t *ret_n,
			   char *err, size_t errlen)
{
	if (d->remote)
		return sw_rd_volumes_list(d, application_id, names, cap, ret_n, err, errlen);
	if (!application_id) {
		snprintf(err, errlen, "invalid application id");
		return -EINVAL;
	}
	json_t *doc = NULL;
	int rc = engine_list(d, "/volumes", "Volumes", application_id, "volumes", &doc, err, errlen);
	if (rc < 0)
		return rc;
	size_t total = SW_MIN(json_array_size(doc), (size_t)SW_DRIVER_LIST_MAX), n = 0;
	char(*all)[SW_DRIVER_VOLUME_MAX] = calloc(total ? total : 1, sizeof(*all));
	if (!all) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < total; i++) {
		const char *name = json_string_value(json_object_get(json_array_get(doc, i), "Name"));
		if (name && strlen(name) < SW_DRIVER_VOLUME_MAX)
			snprintf(all[n++], SW_DRIVER_VOLUME_MAX, "%s", name);
	}
	qsort(all, n, sizeof(*all), name_cmp);
	*ret_n = SW_MIN(n, cap);
	memcpy(names, all, *ret_n * sizeof(*all));
	free(all);
out:
	json_decref(doc);
	return rc;
}

int sw_driver_volume_remove(struct sw_driver *d, const char *name, char *err, size_t errlen)
{
	if (d->remote)
		return sw_rd_volume_remove(d, name, err, errlen);
	if (!valid_volume(name)) {
		snprintf(err, errlen, "invalid volume name");
		return -EINVAL;
	}
	char what[192], busy[192];
	snprintf(what, sizeof(what), "the volume %s cannot be removed", name);
	snprintf(busy, sizeof(busy), "the volume %s is in use by a container", name);
	return engine_delete(d, 204, what, busy, err, errlen, "/volumes/%s", name);
}
