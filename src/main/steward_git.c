/* steward-git: the git fetch's own process (src/deploy/git_fetch.c).
 * stewardd starts it with posix_spawn for each clone, from next to its
 * own binary; it is not meant to be run by hand (started any other way it
 * exits 2 at once). */
#include "steward/deploy/source.h"

int main(void)
{
	return sw_git_fetch_helper_main();
}
