/* The dashboard: the files Vite built from ui/ (index.html and assets/),
 * served by stewardd on the API's origin (src/api/ui.c).
 *
 * Paths: GET / and GET /app/... answer index.html (the app's own routes
 * live under /app, a segment no API resource uses), and so does GET
 * /reset-password (the password-reset mail's link); GET /assets/<name>
 * answers one of the files found in assets/ at start-up. Nothing else is
 * the dashboard's: every other path is the API's, and an unknown one still
 * answers the API's JSON 404. */
#ifndef STEWARD_UI_H
#define STEWARD_UI_H

#include "steward/base/config.h"
#include "steward/http/http.h"

/* Reads the dashboard from config->ui_dir (STEWARD_UI_DIR), else from
 * "ui" next to the executable, else "../share/steward/ui" from it. Keeps
 * index.html in memory and the list of assets (names checked, regular
 * files only, SW_UI_MAX_ASSETS at most) until sw_ui_release().
 * 0 and *ret_found true: loaded. 0 and *ret_found false: no dashboard
 * (STEWARD_UI_DIR=off, or none at the default places: said once in the
 * log); its routes must then not be served. -errno with a message naming
 * STEWARD_UI_DIR when the folder it names is unusable. Main thread, before
 * the server threads start. */
int sw_ui_load(const struct sw_config *config, bool *ret_found, char *err, size_t errlen);
void sw_ui_release(void);

/* The dashboard's routes (flagged SW_ROUTE_DASHBOARD, Public), to be added
 * to the router after the API's, only when sw_ui_load() found them. */
const struct sw_route *sw_ui_routes(size_t *ret_count);

#define SW_UI_MAX_ASSETS 512
#define SW_UI_MAX_INDEX_BYTES (64 * 1024)

#endif
