/* multipart/form-data bodies (RFC 7578), the one non-JSON request body of
 * the API (POST /deployments). Our own parser, strict and bounded, over a
 * body already in memory: parts are views into it, nothing is copied. */
#ifndef STEWARD_MULTIPART_H
#define STEWARD_MULTIPART_H

#include "steward/base/base.h"

#define SW_MULTIPART_MAX_PARTS 8
#define SW_MULTIPART_MAX_HEADER 1024 /* bytes of one part's header section */

struct sw_multipart_part {
	struct sw_str name;      /* form field name (Content-Disposition: form-data; name="...") */
	struct sw_str filename;  /* empty when absent */
	struct sw_str content_type; /* empty when absent */
	struct sw_str data;      /* the part's bytes */
};

/* The boundary of a Content-Type value "multipart/form-data; boundary=..."
 * (quoted or not; 1..70 characters of RFC 2046's bchars). -EINVAL when
 * the type is not multipart/form-data or the boundary is missing or bad. */
int sw_multipart_boundary(struct sw_str content_type, struct sw_str *ret_boundary);

/* Splits body into at most max parts (<= SW_MULTIPART_MAX_PARTS). Refuses
 * with -EINVAL and a short reason in *ret_why: no opening delimiter, a
 * missing close delimiter, bare LF line ends, a part without
 * Content-Disposition form-data and a name, a header section over
 * SW_MULTIPART_MAX_HEADER or not ending, a repeated name, header lines
 * other than Content-Disposition and Content-Type, or bytes after the close
 * delimiter other than CRLF padding; -E2BIG with more parts than max. */
int sw_multipart_parse(struct sw_str body, struct sw_str boundary, struct sw_multipart_part *parts,
		       size_t max, size_t *ret_n, const char **ret_why);

#endif
