/* Random tokens, digests and the bearer-secret formats (secret.h).
 *
 * Tokens are base64url without padding (RFC 4648 section 5) so that they
 * travel unquoted in cookies, headers and URLs. A well-formedness check
 * refuses anything sw_*_new() could not have produced, including
 * non-canonical final characters, so two spellings never name one token. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include "steward/base/secret.h"

int sw_random_token(char *out, size_t outlen, size_t nbytes)
{
	if (nbytes > (SIZE_MAX - 3) / 4 || outlen < SW_BASE64URL_LEN(nbytes) + 1)
		return -EINVAL;
	/* Chunks of a multiple of 3 bytes encode to whole groups, so their
	 * encodings concatenate to the encoding of the whole. */
	uint8_t chunk[48];
	size_t o = 0;
	int r = 0;
	for (size_t done = 0; done < nbytes;) {
		size_t n = SW_MIN(sizeof(chunk), nbytes - done);
		if (sw_random_bytes(chunk, n) != 0) {
			r = -EIO;
			o = 0;
			break;
		}
		int w = sw_base64url_encode(chunk, n, out + o, outlen - o);
		if (SW_NEVER(w < 0)) {
			r = -EINVAL;
			o = 0;
			break;
		}
		o += (size_t)w;
		done += n;
	}
	sw_wipe(chunk, sizeof(chunk));
	if (r < 0)
		sw_wipe(out, SW_BASE64URL_LEN(nbytes));
	out[o] = '\0';
	return r;
}

int sw_random_uuid(char out[37])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t b[16];
	out[0] = '\0';
	if (sw_random_bytes(b, sizeof(b)) != 0)
		return -EIO;
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	size_t o = 0;
	for (size_t i = 0; i < sizeof(b); i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[b[i] >> 4];
		out[o++] = hex[b[i] & 15];
	}
	out[o] = '\0';
	return 0;
}

/* n characters of canonical base64url encoding 32 bytes. */
static bool b64url_canonical_32(struct sw_str s)
{
	uint8_t raw[SW_TOKEN_RANDOM_BYTES];
	size_t n = 0;
	bool ok = s.len == SW_BASE64URL_LEN(SW_TOKEN_RANDOM_BYTES) &&
		  sw_base64url_decode(s, raw, sizeof(raw), &n) == 0 && n == sizeof(raw);
	sw_wipe(raw, sizeof(raw));
	return ok;
}

int sw_tagged_token_new(const char *tag, char *out, size_t outlen, char *prefix_out,
			size_t prefix_len)
{
	size_t t = strlen(tag);
	int r = -EINVAL;
	if (outlen < t + SW_BASE64URL_LEN(SW_TOKEN_RANDOM_BYTES) + 1 || prefix_len < t + 9)
		goto fail;
	memcpy(out, tag, t);
	r = sw_random_token(out + t, outlen - t, SW_TOKEN_RANDOM_BYTES);
	if (r < 0)
		goto fail;
	memcpy(prefix_out, out, t + 8);
	prefix_out[t + 8] = '\0';
	return 0;
fail:
	if (outlen)
		out[0] = '\0';
	if (prefix_len)
		prefix_out[0] = '\0';
	return r;
}

bool sw_tagged_token_well_formed(struct sw_str s, const char *tag)
{
	size_t t = strlen(tag);
	return s.len == t + SW_BASE64URL_LEN(SW_TOKEN_RANDOM_BYTES) && memcmp(s.ptr, tag, t) == 0 &&
	       b64url_canonical_32(sw_str_from(s.ptr + t, s.len - t));
}

int sw_api_token_new(char out[SW_API_TOKEN_LEN + 1], char prefix_out[SW_API_TOKEN_PREFIX_LEN + 1])
{
	return sw_tagged_token_new(SW_API_TOKEN_TAG, out, SW_API_TOKEN_LEN + 1, prefix_out,
				   SW_API_TOKEN_PREFIX_LEN + 1);
}

bool sw_api_token_well_formed(struct sw_str s)
{
	return sw_tagged_token_well_formed(s, SW_API_TOKEN_TAG);
}

int sw_agent_token_new(char out[SW_AGENT_TOKEN_LEN + 1], char prefix_out[SW_AGENT_TOKEN_PREFIX_LEN + 1])
{
	return sw_tagged_token_new(SW_AGENT_TOKEN_TAG, out, SW_AGENT_TOKEN_LEN + 1, prefix_out,
				   SW_AGENT_TOKEN_PREFIX_LEN + 1);
}

bool sw_agent_token_well_formed(struct sw_str s)
{
	return sw_tagged_token_well_formed(s, SW_AGENT_TOKEN_TAG);
}

int sw_session_token_new(char out[SW_SESSION_TOKEN_LEN + 1])
{
	return sw_random_token(out, SW_SESSION_TOKEN_LEN + 1, SW_TOKEN_RANDOM_BYTES);
}

bool sw_session_token_well_formed(struct sw_str s)
{
	return b64url_canonical_32(s);
}
