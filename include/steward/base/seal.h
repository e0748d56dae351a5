/* Secrets at rest: AES-256-GCM under the master key.
 *
 * The master key is 32 bytes from STEWARD_SECRET_KEY (64 hex digits) or,
 * when that is unset, from the file "master.key" in the data directory,
 * created at first start with 32 random bytes (mode 0600, written to a
 * temporary file, fsynced and linked into place, so a crash never leaves
 * half a key and a key already there is never replaced). The data
 * directory is created (0700, parents 0755) when missing. A key file that
 * is not a regular file, of another size or with a mode wider than 0600
 * is refused. Replicas sharing one database must share one key.
 *
 * A sealed value is text: "v1." key-id "." base64url(nonce || ciphertext
 * || tag), with a random 96-bit nonce per seal and the 128-bit tag; key-id
 * is the first 8 hex digits of SHA-256("steward-key-id" || key), so a
 * value sealed under another key is refused by name, not as corruption.
 * The associated data binds a value to its place (e.g. "variable:<app
 * id>:<key>"): a sealed value copied into another row does not open. */
#ifndef STEWARD_SEAL_H
#define STEWARD_SEAL_H

#include <stddef.h>
#include <stdint.h>
#include "steward/base/config.h"
#include "steward/base/limits.h"

/* Loads (or creates) the master key for the process. STEWARD_SECRET_KEY
 * (upper- or lower-case hex; empty counts as unset) is read here, once.
 * 0, or -errno with a message naming the variable or the file in err
 * (never the key). Call once at start-up, before any other thread seals. */
int sw_seal_init(const struct sw_config *c, char *err, size_t errlen);
/* For tests: uses these 32 bytes as the master key. */
void sw_seal_init_key(const uint8_t key[32]);
/* Wipes the key from memory. */
void sw_seal_release(void);

/* Bytes of the sealed text of n bytes of plaintext, its NUL included. */
size_t sw_seal_size(size_t n);
/* Seals plain (n bytes) bound to aad (a NUL-terminated string) into out
 * (cap >= sw_seal_size(n)), NUL-terminated. 0, -EINVAL (no key loaded,
 * aad NULL, n beyond 2 GiB), -ENOBUFS, -ENOMEM, -EIO (OpenSSL failed). */
int sw_seal(const void *plain, size_t n, const char *aad, char *out, size_t cap);
/* Opens sealed text bound to aad into out (cap bytes; a NUL is added after
 * the plaintext when room is left) and sets *ret_len. -EINVAL when the
 * text is not a sealed value (or no key is loaded), -EKEYREJECTED when it
 * was sealed under another key, -EBADMSG when the tag does not verify
 * (altered, or another aad; out is then wiped), -ENOBUFS when out is too
 * small, -ENOMEM. The caller wipes out when done. */
int sw_unseal(const char *sealed, const char *aad, void *out, size_t cap, size_t *ret_len);

/* A MAC under the master key, for a value the server hands out and must
 * recognise later without storing it (a passkey registration's
 * challenge): HMAC-SHA256 of label, a NUL, then msg (n bytes), keyed by
 * HMAC-SHA256(master key, "steward-mac-v1"), a key for MACs alone. label
 * names the use, so a MAC made for one never verifies for another. 0,
 * -EINVAL (no key loaded, label NULL), -ENOMEM, -EIO; out is zeroed on
 * failure. */
int sw_seal_mac(const char *label, const void *msg, size_t n, uint8_t out[32]);

/* ---- the places a value is sealed to: its associated data ----
 * These strings are part of every value stored: a value sealed under one
 * opens only under the same, so each is written once, here, and never
 * changed. Each writes "<kind>:<id>" (a variable: "variable:<application
 * id>:<KEY>") and a NUL into out; ids are UUIDs, a variable's key at most
 * SW_ENV_KEY_MAX_LEN bytes. */
#define SW_SEAL_AAD_MAX (16 + 37 + 1 + SW_ENV_KEY_MAX_LEN + 1)
/* An application's variable (its value). */
void sw_seal_aad_variable(char out[SW_SEAL_AAD_MAX], const char *application_id, const char *key);
/* The private half of an application's git deploy key. */
void sw_seal_aad_deploy_key(char out[SW_SEAL_AAD_MAX], const char *application_id);
/* The secret of an application's git push webhooks. */
void sw_seal_aad_webhook_secret(char out[SW_SEAL_AAD_MAX], const char *application_id);
/* A git credential's token. */
void sw_seal_aad_git_credential(char out[SW_SEAL_AAD_MAX], const char *credential_id);
/* A notification channel's signing secret. */
void sw_seal_aad_channel(char out[SW_SEAL_AAD_MAX], const char *channel_id);
/* A managed service's credentials (a JSON object). */
void sw_seal_aad_service(char out[SW_SEAL_AAD_MAX], const char *service_id);
/* A user's TOTP key. */
void sw_seal_aad_totp(char out[SW_SEAL_AAD_MAX], const char *user_id);
/* The payload of a command to a server's agent while it waits for its
 * answer (a container's environment, a password file). */
void sw_seal_aad_agent_command(char out[SW_SEAL_AAD_MAX], const char *command_id);

#endif
