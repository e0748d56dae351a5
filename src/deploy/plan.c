/* Build plans: sw_build_plan_detect() (source.h) decides how a source tree
 * becomes an image.
 *
 * The plans, in the order they are tried (also the user documentation):
 * 1. The application's dockerfilePath, relative to its build context. It
 *    must exist, be a regular file and, links resolved, stay inside the
 *    build context; otherwise the deployment fails (-ENOENT, -EINVAL). It
 *    is never ignored in favour of detection.
 * 2. A file named Dockerfile at the root of the build context (the same
 *    checks).
 * 3. A known stack, by the first marker file found at the root of the build
 *    context, in this order, so that a server language wins over the
 *    front-end tooling often kept beside it (a Django or Go service with a
 *    package.json for its assets; a Vite site has index.html and
 *    package.json and is a Node build):
 *      go.mod                               Go
 *      requirements.txt or pyproject.toml   Python
 *      package.json                         Node
 *      index.html                           static files
 *    Steward writes the Dockerfile as <context>/.steward.Dockerfile
 *    (replacing a file of that name; refusing a directory or a link there)
 *    and builds with it. Every generated image sets PORT to the
 *    application's port (the container is started with PORT set again, to
 *    the port it must listen on), and its command is the application's
 *    startCommand when one is set (exec form: never a shell line), else the
 *    stack's own:
 *    - static: FROM busybox:stable; the context copied to /www; busybox
 *      httpd serving /www on $PORT (["httpd","-f","-p","$PORT","-h","/www"]:
 *      no shell expands $PORT in an exec form; the driver replaces it when
 *      it creates the container, as in any image's command).
 *    - Node: FROM node:20-bookworm-slim; NODE_ENV=production; the context
 *      in /app; npm ci (npm install without package-lock.json or
 *      npm-shrinkwrap.json) with the dev dependencies, npm run build when
 *      package.json has a build script, npm prune --omit=dev; command
 *      npm start.
 *    - Python: FROM python:3.12-slim; the context in /app; pip install -r
 *      requirements.txt, or pip install . for pyproject.toml alone;
 *      command python main.py or python app.py, whichever exists at the
 *      root; with neither and no startCommand the plan fails (-ENOENT),
 *      since there is nothing to guess.
 *    - Go: two stages. FROM golang:1.22-bookworm builds the main package
 *      at the root of the context (CGO_ENABLED=0 go build -trimpath -o
 *      /out/app .), then FROM gcr.io/distroless/static-debian12 gets only
 *      the binary (/app, the command).
 *    DEPLOY_BASE_IMAGE (base_image) replaces every FROM of every stack, both
 *    Go stages included: an operator without a registry points it at a
 *    local image that has what the stacks need (tests: a busybox image,
 *    which runs the static stack). It must look like an image reference
 *    ([A-Za-z0-9][A-Za-z0-9._/:@-]*, at most 255 bytes): a Dockerfile is
 *    text, and nothing else may reach it.
 * Nothing here runs anything: the commands above run inside docker build. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "steward/base/base.h"
#include "steward/base/limits.h"
#include "steward/deploy/source.h"
#include "steward/base/validate.h"

#define GENERATED_NAME ".steward.Dockerfile"
#define IMAGE_REF_MAX 255

struct stack {
	const char *name;
	const char *const markers[3];
	const char *base[2]; /* FROM of each stage; base[1] only for two stages */
};

static const struct stack stacks[] = {
	{ "go", { "go.mod" }, { "golang:1.22-bookworm", "gcr.io/distroless/static-debian12" } },
	{ "python", { "requirements.txt", "pyproject.toml" }, { "python:3.12-slim" } },
	{ "node", { "package.json" }, { "node:20-bookworm-slim" } },
	{ "static", { "index.html" }, { "busybox:stable" } },
};

static int fail(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return code;
}

/* Resolves base/rel (links followed) into out and stats it: 0; -ENOENT
 * when nothing is there (a dangling link included); -EXDEV when the
 * resolved path leaves base (itself resolved). */
static int resolve_inside(const char *base, const char *rel, char out[PATH_MAX], struct stat *st)
{
	char joined[PATH_MAX * 2];
	snprintf(joined, sizeof(joined), "%s/%s", base, rel);
	if (!realpath(joined, out))
		return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -errno;
	size_t n = strlen(base);
	if (strncmp(out, base, n) != 0 || (out[n] != '\0' && out[n] != '/' && strcmp(base, "/") != 0))
		return -EXDEV;
	return stat(out, st) < 0 ? -errno : 0;
}

/* Whether name is a regular file at the root of dir, inside it. */
static bool has_file(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;
	return resolve_inside(dir, name, path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A Dockerfile given relative to the context ctx: 0 when it is a regular
 * file inside it; else a sentence naming what. */
static int check_dockerfile(const char *ctx, const char *rel, bool configured, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct stat st;
	int r = resolve_inside(ctx, rel, path, &st);
	const char *which = configured ? "the Dockerfile configured for the application" : "the Dockerfile";
	if (r == -ENOENT)
		return fail(err, errlen, -ENOENT, "%s (%s) does not exist in the build context", which, rel);
	if (r == -EXDEV)
		return fail(err, errlen, -EINVAL, "%s (%s) is a link leaving the build context", which, rel);
	if (r < 0)
		return fail(err, errlen, r, "%s (%s) cannot be read", which, rel);
	if (!S_ISREG(st.st_mode))
		return fail(err, errlen, -EINVAL, "%s (%s) is not a file", which, rel);
	return 0;
}

static bool image_ref_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > IMAGE_REF_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (!alnum && (i == 0 || !strchr("._/:@-", c)))
			return false;
	}
	return true;
}

/* The start command as a JSON array, malloc'd; NULL when there is none
 * or an argument is not acceptable (*bad set). */
static char *command_json(const char *const *cmd, bool *bad)
{
	*bad = false;
	if (!cmd || !cmd[0])
		return NULL;
	json_t *a = json_array();
	const char *why;
	size_t n = 0;
	for (; cmd[n]; n++) {
		if (n == SW_COMMAND_MAX_ARGS || !sw_valid_command_arg(sw_str_cstr(cmd[n]), &why) ||
		    json_array_append_new(a, json_string(cmd[n])) < 0) {
			*bad = true;
			break;
		}
	}
	char *text = *bad ? NULL : json_dumps(a, JSON_COMPACT);
	if (!*bad && !text)
		*bad = true;
	json_decref(a);
	return text;
}

/* The Dockerfile of a stack into fp; cmd_json the start command or NULL.
 * -ENOENT (a sentence in err) when the stack cannot choose a command. */
static int render(FILE *fp, const struct stack *s, const char *ctx, const struct sw_app_build *app,
		  const char *cmd_json, char *err, size_t errlen)
{
	const char *from0 = app->base_image ? app->base_image : s->base[0];
	const char *from1 = app->base_image ? app->base_image : s->base[1];
	char port[32] = "";
	if (app->port)
		snprintf(port, sizeof(port), "ENV PORT=%u\n", app->port);
	const char *cmd = cmd_json;
	fprintf(fp, "# Generated by Steward for a %s build (no Dockerfile in the build context).\n"
		    "# Commit a Dockerfile to build your own way.\n", s->name);
	if (!strcmp(s->name, "static")) {
		fprintf(fp, "FROM %s\nCOPY . /www\n%s", from0, port);
		if (!cmd)
			cmd = "[\"httpd\",\"-f\",\"-p\",\"$PORT\",\"-h\",\"/www\"]";
	} else if (!strcmp(s->name, "node")) {
		bool lock = has_file(ctx, "package-lock.json") || has_file(ctx, "npm-shrinkwrap.json");
		fprintf(fp,
			"FROM %s\nWORKDIR /app\nENV NODE_ENV=production\n%sCOPY . /app\n"
			"RUN [\"npm\",\"%s\",\"--include=dev\"]\n"
			"RUN [\"npm\",\"run\",\"build\",\"--if-present\"]\n"
			"RUN [\"npm\",\"prune\",\"--omit=dev\"]\n",
			from0, port, lock ? "ci" : "install");
		if (!cmd)
			cmd = "[\"npm\",\"start\"]";
	} else if (!strcmp(s->name, "python")) {
		fprintf(fp,
			"FROM %s\nWORKDIR /app\nENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 "
			"PIP_DISABLE_PIP_VERSION_CHECK=1\n%sCOPY . /app\n%s\n",
			from0, port,
			has_file(ctx, "requirements.txt") ? "RUN [\"pip\",\"install\",\"-r\",\"requirements.txt\"]"
							  : "RUN [\"pip\",\"install\",\".\"]");
		if (!cmd && has_file(ctx, "main.py"))
			cmd = "[\"python\",\"main.py\"]";
		else if (!cmd && has_file(ctx, "app.py"))
			cmd = "[\"python\",\"app.py\"]";
		if (!cmd)
			return fail(err, errlen, -ENOENT,
				    "a Python application needs a start command: none is set and there is no "
				    "main.py or app.py at the root of the build context");
	} else { /* go */
		fprintf(fp,
			"FROM %s AS build\nWORKDIR /src\nCOPY . .\nENV CGO_ENABLED=0\n"
			"RUN [\"go\",\"build\",\"-trimpath\",\"-o\",\"/out/app\",\".\"]\n"
			"FROM %s\nCOPY --from=build /out/app /app\n%s",
			from0, from1, port);
		if (!cmd)
			cmd = "[\"/app\"]";
	}
	fprintf(fp, "CMD %s\n", cmd);
	return 0;
}

/* Writes the generated Dockerfile into the context directory: an existing
 * file of that name is replaced; a link or a directory there is refused
 * (O_NOFOLLOW, O_EXCL after the unlink). */
static int write_generated(const char *ctx, const struct stack *s, const struct sw_app_build *app,
			   const char *cmd_json, char *err, size_t errlen)
{
	int dfd = open(ctx, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return fail(err, errlen, -errno, "the build context cannot be opened");
	int r = 0;
	if (unlinkat(dfd, GENERATED_NAME, 0) < 0 && errno != ENOENT) {
		r = errno == EISDIR ? fail(err, errlen, -EINVAL, "the build context holds a directory named %s",
					   GENERATED_NAME)
				    : fail(err, errlen, -errno, "could not replace %s in the build context",
					   GENERATED_NAME);
		goto close_dir;
	}
	int fd = openat(dfd, GENERATED_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		r = fail(err, errlen, -errno, "could not write %s in the build context", GENERATED_NAME);
		goto close_dir;
	}
	FILE *fp = fdopen(fd, "w");
	if (!fp) {
		r = fail(err, errlen, -errno, "could not write %s in the build context", GENERATED_NAME);
		close(fd);
		goto remove;
	}
	r = render(fp, s, ctx, app, cmd_json, err, errlen);
	int failed = ferror(fp);
	if ((fclose(fp) != 0 || failed) && r == 0)
		r = fail(err, errlen, -EIO, "could not write %s in the build context", GENERATED_NAME);
remove:
	if (r < 0)
		unlinkat(dfd, GENERATED_NAME, 0);
close_dir:
	close(dfd);
	return r;
}

int sw_build_plan_detect(const char *root, const struct sw_app_build *app, struct sw_build_plan *ret,
			 char *err, size_t errlen)
{
	const char *why;
	const char *context = app->build_context ? app->build_context : ".";
	if (!sw_valid_relative_path(sw_str_cstr(context), &why))
		return fail(err, errlen, -EINVAL, "the build context is not a valid relative path");
	if (app->dockerfile_path && !sw_valid_relative_path(sw_str_cstr(app->dockerfile_path), &why))
		return fail(err, errlen, -EINVAL, "the Dockerfile path is not a valid relative path");
	if (app->base_image && !image_ref_ok(app->base_image))
		return fail(err, errlen, -EINVAL, "DEPLOY_BASE_IMAGE is not a valid image reference");

	char rroot[PATH_MAX], ctx[PATH_MAX], found[PATH_MAX];
	struct stat st;
	if (!realpath(root, rroot))
		return fail(err, errlen, -errno, "the source tree cannot be read");
	int r = resolve_inside(rroot, context, ctx, &st);
	if (r == -ENOENT)
		return fail(err, errlen, r, "the build context (%s) does not exist in the source", context);
	if (r == -EXDEV)
		return fail(err, errlen, -EINVAL, "the build context (%s) is a link leaving the source", context);
	if (r < 0)
		return fail(err, errlen, r, "the build context (%s) cannot be read", context);
	if (!S_ISDIR(st.st_mode))
		return fail(err, errlen, -ENOTDIR, "the build context (%s) is not a directory", context);

	struct sw_build_plan plan;
	memset(&plan, 0, sizeof(plan));
	if (app->dockerfile_path || resolve_inside(ctx, "Dockerfile", found, &st) != -ENOENT) {
		const char *rel = app->dockerfile_path ? app->dockerfile_path : "Dockerfile";
		if ((r = check_dockerfile(ctx, rel, app->dockerfile_path != NULL, err, errlen)) < 0)
			return r;
		snprintf(plan.dockerfile, sizeof(plan.dockerfile), "%s", rel);
		snprintf(plan.stack, sizeof(plan.stack), "dockerfile");
		*ret = plan;
		return 0;
	}

	const struct stack *s = NULL;
	for (size_t i = 0; i < SW_ARRAY_SIZE(stacks) && !s; i++)
		for (size_t m = 0; m < SW_ARRAY_SIZE(stacks[i].markers) && stacks[i].markers[m] && !s; m++)
			if (has_file(ctx, stacks[i].markers[m]))
				s = &stacks[i];
	if (!s)
		return fail(err, errlen, -ENOENT,
			    "no Dockerfile and no known stack in the build context (%s): add a Dockerfile, or "
			    "one of go.mod, requirements.txt, pyproject.toml, package.json, index.html", context);

	bool bad;
	char *cmd = command_json(app->start_command, &bad);
	if (bad)
		return fail(err, errlen, -EINVAL, "the start command is not a valid exec-form command");
	r = write_generated(ctx, s, app, cmd, err, errlen);
	free(cmd);
	if (r < 0)
		return r;
	snprintf(plan.dockerfile, sizeof(plan.dockerfile), GENERATED_NAME);
	snprintf(plan.stack, sizeof(plan.stack), "%s", s->name);
	plan.generated = true;
	*ret = plan;
	return 0;
}
