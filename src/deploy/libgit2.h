/* libgit2, loaded on first use (steward/base/dynlib.h).
 *
 * Only the forked fetch child calls libgit2 (git_fetch.c says why), so
 * only it opens the library: stewardd itself never maps libgit2, libssh2,
 * mbedTLS or http-parser (about 1 MB of resident pages when linked). The
 * table is the version of the headers we are built with: libgit2's soname
 * changes with every minor release (LIBGIT2_SOVERSION). */
#ifndef STEWARD_DEPLOY_LIBGIT2_H
#define STEWARD_DEPLOY_LIBGIT2_H

#include <stddef.h>
#include <git2.h>
#include "steward/base/dynlib.h"

/* The functions of libgit2 that Steward calls, without their git_ prefix. */
#define SW_LIBGIT2_FUNCTIONS(X)                                                                      \
	X(libgit2_init) X(libgit2_opts) X(error_last) X(clone) X(checkout_tree) X(repository_head)   \
	X(repository_free) X(reference_lookup) X(reference_name) X(reference_peel)                   \
	X(reference_free) X(commit_lookup) X(commit_id) X(commit_message) X(commit_author)           \
	X(commit_free) X(oid_fromstr) X(oid_tostr) X(credential_username_new)                         \
	X(credential_userpass_plaintext_new) X(credential_ssh_key_new)                                \
	X(credential_ssh_key_memory_new)

#define SW_LIBGIT2_MEMBER(name) SW_DYNLIB_MEMBER(git_, name)
struct sw_libgit2 {
	SW_LIBGIT2_FUNCTIONS(SW_LIBGIT2_MEMBER)
};
#undef SW_LIBGIT2_MEMBER

/* The loaded and initialised (git_libgit2_init) library, the same for
 * every caller of the process (sw_dynlib_open()): NULL when it cannot be
 * loaded, why in err (errlen bytes; may be NULL). */
const struct sw_libgit2 *sw_libgit2(char *err, size_t errlen);

#endif
