/* Shared between the files of src/api only. */
#ifndef STEWARD_API_INTERNAL_H
#define STEWARD_API_INTERNAL_H

#include "steward/http.h"

void sw_api_health(struct sw_http_request *req);
void sw_api_setup_status(struct sw_http_request *req);
void sw_api_setup(struct sw_http_request *req);
void sw_api_signup(struct sw_http_request *req);
void sw_api_docs(struct sw_http_request *req);

#endif
