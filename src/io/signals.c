/* Signals: blocked in every thread at start-up and taken synchronously by
 * the main thread, which is not a loop thread, so no handler ever runs
 * inside a loop. */
#include <errno.h>
#include <signal.h>
#include "steward/io/signals.h"

static sigset_t handled;

int sw_signals_block(void)
{
	sigemptyset(&handled);
	sigaddset(&handled, SIGTERM);
	sigaddset(&handled, SIGINT);
	sigaddset(&handled, SIGHUP);
	signal(SIGPIPE, SIG_IGN);
	int r = pthread_sigmask(SIG_BLOCK, &handled, NULL);
	return r ? -r : 0;
}

int sw_signals_wait(void)
{
	for (;;) {
		int sig = sigwaitinfo(&handled, NULL);
		if (sig > 0)
			return sig;
		if (errno != EINTR)
			return -errno;
	}
}
