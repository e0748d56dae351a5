/* Process signals, taken by the main thread (see src/io/signals.c). */
#ifndef STEWARD_SIGNALS_H
#define STEWARD_SIGNALS_H

#include <pthread.h>

/* Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (and so in every
 * thread it creates afterwards) and ignores SIGPIPE. 0 or -errno. */
int sw_signals_block(void);
/* Waits for one of the blocked signals; returns its number or -errno. */
int sw_signals_wait(void);

#endif
