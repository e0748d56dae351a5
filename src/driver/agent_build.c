/* The agent's image.build (docs/agent-protocol.md): the context arrived as
 * input chunks and was staged whole and checked by the agent's loop
 * (src/agent/daemon.c); here it goes to this server's engine through
 * sw_driver_image_build(), the local driver's own build, read from the
 * staged file instead of a directory. Each output line goes back as
 * progress, and the control plane hands it to the deployment's log writer
 * (which scrubs variable values), as a local build's lines are. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "steward/base/log.h"
#include "steward/driver/remote.h"
#include "driver/driver_internal.h"

static ssize_t staged_read(void *arg, char *out, size_t cap)
{
	int fd = *(int *)arg;
	for (;;) {
		ssize_t n = read(fd, out, cap);
		if (n >= 0)
			return n;
		if (errno != EINTR)
			return -EIO;
	}
}

/* One output line back to the control plane, with its newline. */
static void line_out(void *arg, const char *line, size_t len)
{
	struct sw_agent_stream *st = arg;
	char *p = malloc(len + 1);
	if (!p)
		return;
	memcpy(p, line, len);
	p[len] = '\n';
	st->output(st, p, len + 1);
	free(p);
}

int sw_driver_agent_build(struct sw_driver *d, const struct sw_agent_msg *cmd, struct sw_agent_stream *st,
			  json_t **res, char *err, size_t errlen)
{
	if (!st || st->input_fd < 0) {
		snprintf(err, errlen, "the build has no staged context");
		return -EINVAL;
	}
	json_t *labels = cmd->args.labels;
	size_t n = json_object_size(labels), i = 0;
	char **pairs = calloc(n + 1, sizeof(*pairs));
	if (!pairs)
		return -ENOMEM;
	const char *key;
	json_t *v;
	int rc = 0;
	json_object_foreach(labels, key, v) {
		if (!json_is_string(v) || asprintf(&pairs[i], "%s=%s", key, json_string_value(v)) < 0) {
			pairs[i] = NULL;
			snprintf(err, errlen, "the build's labels are not strings");
			rc = -EINVAL;
			break;
		}
		i++;
	}
	int fd = st->input_fd;
	struct sw_image_build b = {
		.dockerfile = cmd->args.dockerfile ? cmd->args.dockerfile : "Dockerfile",
		.tag = cmd->args.tag,
		.labels = (const char *const *)pairs,
		.context_read = staged_read,
		.context_arg = &fd,
		.cancel = &st->cancel,
	};
	if (rc == 0)
		rc = sw_driver_image_build(d, &b, line_out, st, err, errlen);
	if (rc == -ECANCELED) {
		/* The control plane's cancel closed the engine's connection,
		 * which stops the build. The tag comes only with its end, but
		 * a cancel that raced that end must not leave it: the tag is
		 * this deployment's own, so it goes if it is there. */
		char e[128] = "";
		bool tagged = sw_driver_image_exists(d, b.tag);
		if (tagged && sw_driver_image_remove(d, b.tag, e, sizeof(e)) == 0)
			snprintf(e, sizeof(e), "its tag removed");
		sw_log_info("agent: image.build %s stopped by its cancel (%s)", cmd->id,
			    tagged ? e : "nothing tagged");
	}
	for (size_t k = 0; k < i; k++)
		free(pairs[k]);
	free(pairs);
	if (rc == 0)
		*res = json_object();
	return rc;
}
