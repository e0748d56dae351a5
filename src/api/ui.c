/* The dashboard's files: GET /, GET /app/... (index.html) and
 * GET /assets/<name> (the hashed files Vite wrote).
 *
 * Why it looks like this:
 * - The dashboard is read once at start-up: index.html into memory (about a
 *   kilobyte; it is sent by reference, like any static body), and the names
 *   of the files in assets/. A request for an asset is answered only for a
 *   name in that list, opened relative to the assets folder's descriptor
 *   with O_NOFOLLOW and sent with sw_http_respond_file (the same zero-copy
 *   path as GET /deployments/:id/logs). So no request names a path: a name
 *   with "/", "..", or anything the list does not hold, is a 404.
 * - Caching: an asset's name carries a hash of its content, so it is
 *   `public, max-age=31536000, immutable`; index.html is `no-cache` (it
 *   names the current assets). No ETag: the assets are never revalidated,
 *   and index.html is smaller than a 304's head would save.
 * - Every dashboard answer carries a strict Content-Security-Policy: only
 *   files of this origin run or style the page, no inline script or style,
 *   fetch only to this origin, never framed.
 * - GET /reset-password, the link password-reset mail has always carried,
 *   answers index.html too (the app's reset form): one fixed path, no API
 *   route's.
 * - The routes are Public (the app is code, not data: what it shows comes
 *   from the API, authenticated as any other request) and are absent from
 *   the OpenAPI document (SW_ROUTE_DASHBOARD). Without a built dashboard
 *   the routes are not in the router at all, so / answers the API's 404. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "steward/base/log.h"
#include "steward/api/ui.h"
#include "api/api_internal.h"

#define NAME_MAX_LEN 128

static const char csp[] =
	"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
	"font-src 'self'; connect-src 'self'; manifest-src 'self'; base-uri 'none'; "
	"form-action 'self'; frame-ancestors 'none'";

struct asset {
	char name[NAME_MAX_LEN + 1];
	const char *type;
};

static struct {
	int assets_fd;
	char *index;
	size_t index_len;
	struct asset *assets;
	size_t count;
} ui = { .assets_fd = -1 };

static const struct {
	const char *ext;
	const char *type;
} types[] = {
	{ ".js", "text/javascript; charset=utf-8" },
	{ ".css", "text/css; charset=utf-8" },
	{ ".svg", "image/svg+xml" },
	{ ".png", "image/png" },
	{ ".ico", "image/x-icon" },
	{ ".woff2", "font/woff2" },
	{ ".json", "application/json" },
	{ ".txt", "text/plain; charset=utf-8" },
};

/* The Content-Type of a name that may be served, or NULL: letters,
 * digits, '_', '-' and '.', not starting with '.', no "..", a known
 * extension. */
static const char *served_type(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > NAME_MAX_LEN || name[0] == '.' || strstr(name, ".."))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char ch = name[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      ch == '_' || ch == '-' || ch == '.'))
			return NULL;
	}
	const char *dot = strrchr(name, '.');
	for (size_t i = 0; dot && i < SW_ARRAY_SIZE(types); i++)
		if (strcmp(dot, types[i].ext) == 0)
			return types[i].type;
	return NULL;
}

static int cmp_asset(const void *a, const void *b)
{
	return strcmp(((const struct asset *)a)->name, ((const struct asset *)b)->name);
}

static void set_headers(struct sw_http_request *req, const char *cache)
{
	req->cache_control = cache;
	sw_http_add_header(req, "Content-Security-Policy", SW_STR(csp));
	sw_http_add_header(req, "X-Frame-Options", SW_STR("DENY"));
	sw_http_add_header(req, "Referrer-Policy", SW_STR("same-origin"));
	sw_http_add_header(req, "Cross-Origin-Opener-Policy", SW_STR("same-origin"));
}

static void not_found(struct sw_http_request *req)
{
	sw_http_error(req, 404, "NOT_FOUND", "The requested resource does not exist.");
}

/* Whether the request would take HTML: no Accept, or one naming text/html,
 * text/ * or * / * (without the spaces). A client that asked for JSON only
 * never gets the page. */
static bool accepts_html(const struct sw_http_request *req)
{
	const struct sw_http_header *h = sw_http_request_header(req, SW_STR("Accept"));
	if (!h)
		return true;
	static const char *const any[] = { "text/html", "text/*", "*/*" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(any); i++)
		if (memmem(h->value.ptr, h->value.len, any[i], strlen(any[i])))
			return true;
	return false;
}

/* GET /, GET /app/...: the app, whose own router reads the path; an API
 * client that asked for JSON gets the API's 404, as before the dashboard. */
static void index_get(struct sw_http_request *req)
{
	sw_http_add_header(req, "Vary", SW_STR("Accept"));
	if (!accepts_html(req)) {
		not_found(req);
		return;
	}
	set_headers(req, "no-cache");
	sw_http_respond_static(req, 200, "text/html; charset=utf-8",
			       sw_str_from(ui.index, ui.index_len));
}

/* GET /assets/:name */
static void asset_get(struct sw_http_request *req)
{
	struct sw_str v = req->params.value[0];
	struct asset key;
	if (v.len > NAME_MAX_LEN) {
		not_found(req);
		return;
	}
	memcpy(key.name, v.ptr, v.len);
	key.name[v.len] = '\0';
	const struct asset *a = bsearch(&key, ui.assets, ui.count, sizeof(*ui.assets), cmp_asset);
	if (!a) {
		not_found(req);
		return;
	}
	int fd = openat(ui.assets_fd, a->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		/* Removed or replaced since start-up (a rebuild): the page that
		 * asked is older than this server's index.html. */
		if (fd >= 0)
			close(fd);
		not_found(req);
		return;
	}
	set_headers(req, "public, max-age=31536000, immutable");
	sw_http_respond_file(req, 200, a->type, fd, 0, (uint64_t)sb.st_size);
}

static const int err_none[] = { 0 };
static const int err_asset[] = { 404, 0 };
#define UI_DOC(what, errors)                                                                       \
	{ .summary = (what), .description = "The dashboard (not part of the API).",           \
	  .tag = "Dashboard", .success_status = 200, .error_statuses = (errors),                  \
	  .media_type = "text/html; charset=utf-8" }

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/", SW_ACCESS_PUBLIC, index_get, 0, SW_ROUTE_DASHBOARD,
	  UI_DOC("The dashboard", err_none) },
	{ SW_HTTP_GET, "/app/*", SW_ACCESS_PUBLIC, index_get, 0, SW_ROUTE_DASHBOARD,
	  UI_DOC("A page of the dashboard (its own router reads the path)", err_none) },
	/* The link of the password-reset mail (src/api/password_reset.c). */
	{ SW_HTTP_GET, "/reset-password", SW_ACCESS_PUBLIC, index_get, 0, SW_ROUTE_DASHBOARD,
	  UI_DOC("The page a password-reset mail links to", err_none) },
	{ SW_HTTP_GET, "/assets/:name", SW_ACCESS_PUBLIC, asset_get, 0, SW_ROUTE_DASHBOARD,
	  UI_DOC("A file of the dashboard, named by its content hash", err_asset) },
};

const struct sw_route *sw_ui_routes(size_t *ret_count)
{
	*ret_count = SW_ARRAY_SIZE(routes);
	return routes;
}

/* ---- loading ---- */

/* Reads <dir>/index.html and lists <dir>/assets. -ENOENT when there is no
 * index.html; other -errno with a message in err. */
static int load_from(const char *dir, char *err, size_t errlen)
{
	int r;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	int ifd = openat(dfd, "index.html", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat sb;
	if (ifd < 0) {
		r = -errno;
		goto out_dir;
	}
	if (fstat(ifd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0 ||
	    sb.st_size > SW_UI_MAX_INDEX_BYTES) {
		snprintf(err, errlen, "%s/index.html is not a regular file of 1 to %d bytes", dir,
			 SW_UI_MAX_INDEX_BYTES);
		r = -EINVAL;
		goto out_index;
	}
	ui.index = malloc((size_t)sb.st_size);
	if (!ui.index) {
		r = -ENOMEM;
		goto out_index;
	}
	ssize_t got = pread(ifd, ui.index, (size_t)sb.st_size, 0);
	if (got != sb.st_size) {
		snprintf(err, errlen, "%s/index.html cannot be read", dir);
		r = -EIO;
		goto out_index;
	}
	ui.index_len = (size_t)got;

	ui.assets_fd = openat(dfd, "assets", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (ui.assets_fd < 0) {
		snprintf(err, errlen, "%s/assets is not a folder: %s", dir, strerror(errno));
		r = -EINVAL;
		goto out_index;
	}
	int lfd = dup(ui.assets_fd);
	DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
	if (!d) {
		if (lfd >= 0)
			close(lfd);
		snprintf(err, errlen, "%s/assets cannot be listed", dir);
		r = -EIO;
		goto out_index;
	}
	ui.assets = calloc(SW_UI_MAX_ASSETS, sizeof(*ui.assets));
	r = ui.assets ? 0 : -ENOMEM;
	for (struct dirent *e; r == 0 && (e = readdir(d));) {
		const char *type = served_type(e->d_name);
		struct stat st;
		if (!type || fstatat(ui.assets_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue; /* ".", "..", a link, a folder, a name we never serve */
		if (ui.count == SW_UI_MAX_ASSETS) {
			snprintf(err, errlen, "%s/assets holds more than %d files", dir, SW_UI_MAX_ASSETS);
			r = -E2BIG;
			break;
		}
		snprintf(ui.assets[ui.count].name, sizeof(ui.assets[ui.count].name), "%s", e->d_name);
		ui.assets[ui.count++].type = type;
	}
	closedir(d);
	if (r == 0)
		qsort(ui.assets, ui.count, sizeof(*ui.assets), cmp_asset);
out_index:
	close(ifd);
out_dir:
	close(dfd);
	if (r < 0)
		sw_ui_release();
	return r;
}

/* The folder of the running executable, or "" when unknown. */
static void exe_dir(char *out, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", out, cap - 1);
	out[n > 0 ? n : 0] = '\0';
	char *slash = strrchr(out, '/');
	if (slash)
		*slash = '\0';
	else
		out[0] = '\0';
}

int sw_ui_load(const struct sw_config *config, bool *ret_found, char *err, size_t errlen)
{
	*ret_found = false;
	sw_ui_release();
	if (config->ui_dir && strcmp(config->ui_dir, "off") == 0) {
		sw_log_info("dashboard off (STEWARD_UI_DIR=off)");
		return 0;
	}
	char sub[256] = "";
	if (config->ui_dir) {
		if (config->ui_dir[0] != '/') {
			snprintf(err, errlen, "STEWARD_UI_DIR must be an absolute path, or off");
			return -EINVAL;
		}
		int r = load_from(config->ui_dir, sub, sizeof(sub));
		if (r < 0) {
			snprintf(err, errlen, "STEWARD_UI_DIR: %s",
				 sub[0] ? sub : r == -ENOENT ? "no index.html in that folder" : strerror(-r));
			return r;
		}
		*ret_found = true;
		sw_log_info("dashboard dir=%s assets=%zu", config->ui_dir, ui.count);
		return 0;
	}
	char bin[PATH_MAX];
	exe_dir(bin, sizeof(bin));
	const char *const rel[] = { "/ui", "/../share/steward/ui" };
	for (size_t i = 0; bin[0] && i < SW_ARRAY_SIZE(rel); i++) {
		char dir[PATH_MAX + 32];
		snprintf(dir, sizeof(dir), "%s%s", bin, rel[i]);
		int r = load_from(dir, sub, sizeof(sub));
		if (r == -ENOENT || r == -ENOTDIR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "dashboard in %s: %s (set STEWARD_UI_DIR, or STEWARD_UI_DIR=off)",
				 dir, sub[0] ? sub : strerror(-r));
			return r;
		}
		*ret_found = true;
		sw_log_info("dashboard dir=%s assets=%zu", dir, ui.count);
		return 0;
	}
	sw_log_info("dashboard not found next to the executable (%s/ui): GET / answers 404; "
		    "build it with cmake (needs npm), or set STEWARD_UI_DIR", bin);
	return 0;
}

void sw_ui_release(void)
{
	if (ui.assets_fd >= 0)
		close(ui.assets_fd);
	free(ui.index);
	free(ui.assets);
	ui.index = NULL;
	ui.index_len = 0;
	ui.assets = NULL;
	ui.count = 0;
	ui.assets_fd = -1;
}
