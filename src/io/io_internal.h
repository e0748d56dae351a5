/* Shared between the files of src/io only. */
#ifndef STEWARD_IO_INTERNAL_H
#define STEWARD_IO_INTERNAL_H

#include "steward/io/io.h"

/* Hands a finished worker job back to its loop (worker thread side). */
void sw_io_loop_job_done(struct sw_loop *loop, struct sw_worker_job *job);

#endif
