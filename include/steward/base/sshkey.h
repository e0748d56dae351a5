/* Ed25519 SSH key pairs for deploy keys, generated with OpenSSL. */
#ifndef STEWARD_SSHKEY_H
#define STEWARD_SSHKEY_H

#include <stddef.h>

/* "ssh-ed25519 " + base64 of the 51-byte blob + " " + comment. */
#define SW_SSH_PUBLIC_KEY_MAX 256
/* The OpenSSH private key file (unencrypted "openssh-key-v1"). */
#define SW_SSH_PRIVATE_KEY_MAX 512

/* Generates a key pair: the public half in OpenSSH authorized_keys form
 * with comment (printable ASCII without spaces, at most 64 bytes; ""
 * for none) into pub, the private half as an OpenSSH private key file
 * ("-----BEGIN OPENSSH PRIVATE KEY-----" ...) into priv, both
 * NUL-terminated. 0, -EINVAL (a bad comment), -EIO (OpenSSL failed). The
 * caller wipes priv when done. */
int sw_ssh_ed25519_generate(const char *comment, char pub[SW_SSH_PUBLIC_KEY_MAX],
			    char priv[SW_SSH_PRIVATE_KEY_MAX]);

/* The SHA256 fingerprint of a public key as ssh-keygen -l prints it
 * ("SHA256:" + unpadded base64), from its authorized_keys form ("type
 * base64[ comment]", any key type, no options, no control characters;
 * the blob must name the same type). 0 or -EINVAL. */
int sw_ssh_fingerprint(const char *pub, char out[64]);

#endif
