/* The libpq floor (bench/run): a program that links Debian's libpq and
 * never calls it, so its resident memory is what loading libpq and what
 * it links (OpenSSL, Kerberos, LDAP, GnuTLS, ...) costs any program,
 * stewardd included. It skips GnuTLS's implicit initialisation as
 * stewardd does (src/main/stewardd.c), so the floor is not overstated.
 * Prints "ready" once main runs, then waits for a signal. */
#include <libpq-fe.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int _gnutls_global_init_skip(void);
int _gnutls_global_init_skip(void)
{
	return 1;
}

/* A reference, never a call: the linker keeps libpq as a dependency
 * (--as-needed drops a library nothing refers to). */
int (*volatile sw_floor_ref)(void) = PQlibVersion;

int main(void)
{
	sigset_t set;
	int sig;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready\n");
	fflush(stdout);
	sigwait(&set, &sig);
	return 0;
}
