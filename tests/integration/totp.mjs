// TOTP codes computed in the test (RFC 6238: HMAC-SHA-1, 6 digits,
// 30-second steps) from the base32 key the server returns at enrolment.
// Shared by two_factor.test.mjs and the dashboard's browser test.
import crypto from 'node:crypto';
import { sleep } from './harness.mjs';

export function base32Decode(s) {
	const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
	let bits = 0, acc = 0;
	const out = [];
	for (const ch of s.replace(/=+$/, '')) {
		const v = alphabet.indexOf(ch.toUpperCase());
		if (v < 0) throw new Error(`not base32: ${s}`);
		acc = (acc << 5) | v;
		bits += 5;
		if (bits >= 8) {
			bits -= 8;
			out.push((acc >> bits) & 0xff);
		}
	}
	return Buffer.from(out);
}

export function totp(secret, step) {
	const msg = Buffer.alloc(8);
	msg.writeBigUInt64BE(BigInt(step));
	const mac = crypto.createHmac('sha1', base32Decode(secret)).update(msg).digest();
	const off = mac[19] & 15;
	const bin = mac.readUInt32BE(off) & 0x7fffffff;
	return String(bin % 1000000).padStart(6, '0');
}

export const stepNow = () => Math.floor(Date.now() / 1000 / 30);

// The server computes its own step: stay clear of a step boundary so that
// both sides agree on "now" during the next few requests.
export async function awayFromBoundary(marginS = 4) {
	const into = (Date.now() / 1000) % 30;
	if (into > 30 - marginS) await sleep((30 - into) * 1000 + 300);
}
