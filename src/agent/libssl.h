/* OpenSSL's TLS client (libssl.so.3, with the libcrypto.so.3 it loads)
 * opened with dlopen() only when the agent dials an https:// control plane
 * (steward/base/dynlib.h says how; docs/architecture.md, issue 11, why: a
 * ws:// agent maps neither library, 3.6 MB of its RSS when it did). The
 * agent's digests, base64 and random bytes are the project's own
 * (steward/base/sha.h, secret.h), so nothing else needs libcrypto.
 *
 * The list names every function daemon.c calls, each typed from OpenSSL's
 * own declaration. OpenSSL's macros over SSL_ctrl()/SSL_CTX_ctrl()
 * (SSL_set_tlsext_host_name, SSL_CTX_set_min_proto_version,
 * SSL_CTX_set_mode) are spelled as those calls through the table. */
#ifndef STEWARD_AGENT_LIBSSL_H
#define STEWARD_AGENT_LIBSSL_H

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include "steward/base/dynlib.h"

#define SW_LIBSSL_FUNCTIONS(X)                                                                     \
	X(SSL_CTX_ctrl) X(SSL_CTX_free) X(SSL_CTX_load_verify_locations) X(SSL_CTX_new)            \
	X(SSL_CTX_set_default_verify_paths) X(SSL_CTX_set_verify) X(SSL_connect) X(SSL_ctrl)      \
	X(SSL_free) X(SSL_get0_param) X(SSL_get_error) X(SSL_new) X(SSL_pending) X(SSL_read)      \
	X(SSL_set1_host) X(SSL_set_fd) X(SSL_write) X(TLS_client_method) X(ERR_clear_error)       \
	X(ERR_get_error) X(ERR_reason_error_string) X(X509_VERIFY_PARAM_set1_ip_asc)

#define SW_LIBSSL_MEMBER(name) SW_DYNLIB_MEMBER(, name)
struct sw_libssl {
	SW_LIBSSL_FUNCTIONS(SW_LIBSSL_MEMBER)
};
#undef SW_LIBSSL_MEMBER

/* The table, loading libssl.so.3 on the first call; NULL when it cannot
 * (why, naming the package, in err). */
const struct sw_libssl *sw_libssl(char *err, size_t errlen);

#endif
