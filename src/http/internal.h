/* Shared between the files of src/http only. */
#ifndef STEWARD_HTTP_INTERNAL_H
#define STEWARD_HTTP_INTERNAL_H

#include "steward/http.h"

const char *sw_http_reason(int status);

#endif
