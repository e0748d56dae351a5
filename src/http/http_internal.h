/* Shared between the files of src/http only. */
#ifndef STEWARD_HTTP_INTERNAL_H
#define STEWARD_HTTP_INTERNAL_H

#include "steward/http/http.h"

const char *sw_http_reason(int status);
/* Tests: file bodies take the sendfile() fallback even where the ring can
 * splice (the path a kernel without IORING_OP_SPLICE takes). */
void sw_http_force_sendfile(bool on);

#endif
