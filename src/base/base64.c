/* The base64 family (base64.h): base64url without padding (tokens),
 * standard base64 with padding (the agent channel's binary payloads, SSH
 * keys, the WebSocket handshake), base32 (TOTP secrets). One encoder and
 * one decoder serve both base64 alphabets. No libcrypto: steward-agent
 * uses these without mapping it. */
#include <errno.h>
#include <limits.h>
#include "steward/base/base64.h"

static const char b64url_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* in[0..n) in alphabet, padded with '=' to a multiple of 4 or not, and a
 * NUL; its length, or -ENOSPC. */
static int b64_encode(const char *alphabet, bool pad, const uint8_t *in, size_t n, char *out,
		      size_t outlen)
{
	size_t need = n / 3 * 4 + (n % 3 ? (pad ? 4 : n % 3 + 1) : 0);
	if (n > (SIZE_MAX - 4) / 4 * 3 || need > INT_MAX || outlen <= need)
		return -ENOSPC;
	size_t o = 0, i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		out[o++] = alphabet[v >> 18];
		out[o++] = alphabet[(v >> 12) & 63];
		out[o++] = alphabet[(v >> 6) & 63];
		out[o++] = alphabet[v & 63];
	}
	if (n - i == 1) {
		out[o++] = alphabet[in[i] >> 2];
		out[o++] = alphabet[(in[i] & 3) << 4];
		if (pad) {
			out[o++] = '=';
			out[o++] = '=';
		}
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)in[i] << 8 | in[i + 1];
		out[o++] = alphabet[v >> 10];
		out[o++] = alphabet[(v >> 4) & 63];
		out[o++] = alphabet[(v & 15) << 2];
		if (pad)
			out[o++] = '=';
	}
	out[o] = '\0';
	return (int)o;
}

static int b64_value(const char *alphabet, char c)
{
	const char *p = c ? memchr(alphabet, c, 64) : NULL;
	return p ? (int)(p - alphabet) : -1;
}

/* Canonical unpadded data in alphabet (the padding already taken off). */
static int b64_decode(const char *alphabet, struct sw_str in, uint8_t *out, size_t outlen,
		      size_t *ret_len)
{
	if (in.len % 4 == 1)
		return -EINVAL;
	size_t n = in.len / 4 * 3 + (in.len % 4 ? in.len % 4 - 1 : 0);
	if (n > outlen)
		return -ENOSPC;
	uint32_t acc = 0;
	unsigned bits = 0;
	size_t o = 0;
	for (size_t i = 0; i < in.len; i++) {
		int v = b64_value(alphabet, in.ptr[i]);
		if (v < 0)
			return -EINVAL;
		acc = (acc << 6 | (uint32_t)v) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (uint8_t)(acc >> bits);
		}
	}
	/* Canonical form only: the bits left over must be zero. */
	if (acc & ((1u << bits) - 1))
		return -EINVAL;
	*ret_len = o;
	return 0;
}

int sw_base64url_encode(const uint8_t *in, size_t n, char *out, size_t outlen)
{
	return b64_encode(b64url_alphabet, false, in, n, out, outlen);
}

int sw_base64url_decode(struct sw_str in, uint8_t *out, size_t outlen, size_t *ret_len)
{
	return b64_decode(b64url_alphabet, in, out, outlen, ret_len);
}

int sw_base64_encode(const uint8_t *in, size_t n, char *out, size_t outlen)
{
	return b64_encode(b64_alphabet, true, in, n, out, outlen);
}

int sw_base64_decode(struct sw_str in, uint8_t *out, size_t outlen, size_t *ret_len)
{
	if (in.len % 4)
		return -EINVAL;
	size_t pad = 0;
	while (pad < 2 && pad < in.len && in.ptr[in.len - 1 - pad] == '=')
		pad++;
	/* Any other '=' is refused by the alphabet. */
	return b64_decode(b64_alphabet, sw_str_from(in.ptr, in.len - pad), out, outlen, ret_len);
}

/* ---- base32 (RFC 4648) ---- */

static const char b32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

int sw_base32_encode(const uint8_t *in, size_t n, char *out, size_t outlen)
{
	if (n > (SIZE_MAX - 5) / 8 || outlen < SW_BASE32_LEN(n) + 1)
		return -EINVAL;
	size_t o = 0;
	uint32_t acc = 0;
	unsigned bits = 0;
	for (size_t i = 0; i < n; i++) {
		acc = (acc << 8) | in[i];
		bits += 8;
		while (bits >= 5) {
			bits -= 5;
			out[o++] = b32[(acc >> bits) & 31];
		}
	}
	if (bits > 0)
		out[o++] = b32[(acc << (5 - bits)) & 31];
	out[o] = '\0';
	return 0;
}

/* Value of a base32 character in either case, or -1. */
static int b32_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a';
	if (c >= '2' && c <= '7')
		return c - '2' + 26;
	return -1;
}

int sw_base32_decode(struct sw_str in, uint8_t *out, size_t outlen, size_t *ret_len)
{
	size_t o = 0, chars = 0, pad = 0;
	uint32_t acc = 0;
	unsigned bits = 0;
	for (size_t i = 0; i < in.len; i++) {
		unsigned char c = (unsigned char)in.ptr[i];
		if (c == ' ')
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		int v = b32_value(c);
		if (v < 0 || pad > 0)
			return -EBADMSG; /* a foreign character, or data after padding */
		chars++;
		acc = (acc << 5) | (uint32_t)v;
		bits += 5;
		if (bits >= 8) {
			bits -= 8;
			if (o == outlen)
				return -ENOBUFS;
			out[o++] = (uint8_t)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	/* 5 or more bits left would be a character that encodes no byte. */
	if (bits >= 5 || acc != 0)
		return -EBADMSG;
	if (pad > 0 && (pad > 6 || (chars + pad) % 8 != 0))
		return -EBADMSG;
	*ret_len = o;
	return 0;
}
