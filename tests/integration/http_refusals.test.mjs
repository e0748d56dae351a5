// Every refusal of the strict request parser, each its own test: the
// answer is the error envelope with the right status and code, it says
// Connection: close, and the server really closes the socket.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as h from './harness.mjs';

h.stewarddPath();
const pg = await h.startPostgres();
const srv = await h.startStewardd({ db: pg });
after(h.cleanupAll);

const HOST = 'Host: 127.0.0.1\r\n';
const JSON_CT = 'Content-Type: application/json\r\n';

async function refused(bytes, status = 400, code = 'MALFORMED_REQUEST') {
	const r = await h.raw(srv.port, bytes, { timeoutMs: 5000 });
	const res = h.assertRefusedAndClosed(r, status, code);
	h.assertCommonHeaders(res);
	assert.equal(r.responses.filter((x) => x.status >= 200).length, 1, 'exactly one response');
	return res;
}

const cases400 = [
	// Framing: Content-Length and Transfer-Encoding
	['content_length_with_transfer_encoding_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`],
	['transfer_encoding_before_content_length_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n2\r\n{}\r\n0\r\n\r\n`],
	['two_equal_content_length_fields_are_400_and_close',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}`],
	['differing_content_length_fields_are_400_and_close',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{} `],
	['content_length_list_in_one_field_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Content-Length: 2, 2\r\n\r\n{}`],
	['non_numeric_content_length_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Content-Length: 2x\r\n\r\n{}`],
	['signed_content_length_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Content-Length: +2\r\n\r\n{}`],
	['negative_content_length_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Content-Length: -1\r\n\r\n{}`],
	['empty_content_length_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Content-Length: \r\n\r\n{}`],
	['transfer_coding_gzip_alone_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Transfer-Encoding: gzip\r\n\r\n2\r\n{}\r\n0\r\n\r\n`],
	['transfer_coding_after_chunked_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Transfer-Encoding: chunked, gzip\r\n\r\n2\r\n{}\r\n0\r\n\r\n`],
	['transfer_coding_after_chunked_in_second_field_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n2\r\n{}\r\n0\r\n\r\n`],
	['transfer_coding_other_than_chunked_before_chunked_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`],
	['chunked_twice_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Transfer-Encoding: chunked, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`],
	// Chunked bodies
	['chunk_size_that_is_not_hex_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`],
	['empty_chunk_size_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Transfer-Encoding: chunked\r\n\r\n\r\n{}\r\n0\r\n\r\n`],
	['negative_chunk_size_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Transfer-Encoding: chunked\r\n\r\n-2\r\n{}\r\n0\r\n\r\n`],
	['chunk_size_overflow_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Transfer-Encoding: chunked\r\n\r\n1${'0'.repeat(16)}\r\n{}\r\n0\r\n\r\n`],
	['chunk_size_overflow_to_small_value_is_400_and_closes',
		// 2^64 + 2 wraps to 2 in 64-bit arithmetic: must not be read as "2".
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Transfer-Encoding: chunked\r\n\r\n1${'0'.repeat(15)}2\r\n{}\r\n0\r\n\r\n`],
	['chunk_data_not_followed_by_crlf_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Transfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n`],
	['chunked_trailer_with_obs_fold_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nX-T: a\r\n b\r\n\r\n`],
	// Header syntax
	['obsolete_line_folding_is_400_and_closes',
		`GET /health HTTP/1.1\r\n${HOST}X-Folded: one\r\n two\r\n\r\n`],
	['obsolete_line_folding_with_tab_is_400_and_closes',
		`GET /health HTTP/1.1\r\n${HOST}X-Folded: one\r\n\ttwo\r\n\r\n`],
	['space_between_header_name_and_colon_is_400_and_closes',
		`GET /health HTTP/1.1\r\n${HOST}X-Space : value\r\n\r\n`],
	['tab_between_header_name_and_colon_is_400_and_closes',
		`GET /health HTTP/1.1\r\n${HOST}X-Tab\t: value\r\n\r\n`],
	['space_before_colon_on_content_length_is_400_and_closes',
		`POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Content-Length : 2\r\n\r\n{}`],
	['bare_cr_in_header_value_is_400_and_closes',
		`GET /health HTTP/1.1\r\n${HOST}X-Cr: a\rb\r\n\r\n`],
	['bare_cr_ending_the_request_line_is_400_and_closes',
		`GET /health HTTP/1.1\r${HOST}\r\n`],
	['bare_cr_in_target_is_400_and_closes',
		`GET /hea\rlth HTTP/1.1\r\n${HOST}\r\n`],
	['bare_lf_line_endings_are_400_and_close',
		`GET /health HTTP/1.1\nHost: 127.0.0.1\n\n`],
	['nul_in_header_value_is_400_and_closes',
		`GET /health HTTP/1.1\r\n${HOST}X-Nul: a\x00b\r\n\r\n`],
	['nul_in_header_name_is_400_and_closes',
		`GET /health HTTP/1.1\r\n${HOST}X-N\x00ul: ab\r\n\r\n`],
	['nul_in_target_is_400_and_closes',
		`GET /health\x00 HTTP/1.1\r\n${HOST}\r\n`],
	['nul_in_method_is_400_and_closes',
		`G\x00ET /health HTTP/1.1\r\n${HOST}\r\n`],
	['control_character_in_header_value_is_400_and_closes',
		`GET /health HTTP/1.1\r\n${HOST}X-Ctl: a\x01b\r\n\r\n`],
	['invalid_character_in_header_name_is_400_and_closes',
		`GET /health HTTP/1.1\r\n${HOST}X(Bad): value\r\n\r\n`],
	['non_ascii_header_name_is_400_and_closes',
		`GET /health HTTP/1.1\r\n${HOST}X-B\xe4d: value\r\n\r\n`],
	['empty_header_name_is_400_and_closes',
		`GET /health HTTP/1.1\r\n${HOST}: value\r\n\r\n`],
	['header_line_without_colon_is_400_and_closes',
		`GET /health HTTP/1.1\r\n${HOST}X-No-Colon\r\n\r\n`],
	// Request line
	['invalid_character_in_method_is_400_and_closes',
		`GE(T /health HTTP/1.1\r\n${HOST}\r\n`],
	['non_ascii_method_is_400_and_closes',
		`G\xc9T /health HTTP/1.1\r\n${HOST}\r\n`],
	['space_in_target_is_400_and_closes',
		`GET /hea lth HTTP/1.1\r\n${HOST}\r\n`],
	['control_character_in_target_is_400_and_closes',
		`GET /hea\x01lth HTTP/1.1\r\n${HOST}\r\n`],
	['del_in_target_is_400_and_closes',
		`GET /hea\x7flth HTTP/1.1\r\n${HOST}\r\n`],
	['non_ascii_byte_in_target_is_400_and_closes',
		`GET /h\xffealth HTTP/1.1\r\n${HOST}\r\n`],
	['target_not_starting_with_slash_is_400_and_closes',
		`GET health HTTP/1.1\r\n${HOST}\r\n`],
	['absolute_form_target_is_400_and_closes',
		`GET http://127.0.0.1/health HTTP/1.1\r\n${HOST}\r\n`],
	['asterisk_target_with_get_is_400_and_closes',
		`GET * HTTP/1.1\r\n${HOST}\r\n`],
	// Versions
	['http_0_9_request_is_400_and_closes',
		`GET /health\r\n\r\n`],
	['http_0_9_version_is_400_and_closes',
		`GET /health HTTP/0.9\r\n${HOST}\r\n`],
	['http_1_2_is_400_and_closes',
		`GET /health HTTP/1.2\r\n${HOST}\r\n`],
	['http_2_0_is_400_and_closes',
		`GET /health HTTP/2.0\r\n${HOST}\r\n`],
	['http_1_10_is_400_and_closes',
		`GET /health HTTP/1.10\r\n${HOST}\r\n`],
	['lower_case_http_version_is_400_and_closes',
		`GET /health http/1.1\r\n${HOST}\r\n`],
	['space_after_version_is_400_and_closes',
		`GET /health HTTP/1.1 \r\n${HOST}\r\n`],
	// Host
	['missing_host_in_http_1_1_is_400_and_closes',
		`GET /health HTTP/1.1\r\nX-Other: 1\r\n\r\n`],
	['repeated_host_in_http_1_1_is_400_and_closes',
		`GET /health HTTP/1.1\r\n${HOST}${HOST}\r\n`],
];

for (const [name, bytes] of cases400) {
	test(name, async () => {
		await refused(bytes);
	});
}

test('content_length_overflow_is_refused_and_closes', async () => {
	// Not a number that fits in 64 bits: a framing error (400) or, read as
	// "too large", 413; either way the connection must not survive.
	const r = await h.raw(srv.port, `POST /setup HTTP/1.1\r\n${HOST}${JSON_CT}Content-Length: 99999999999999999999999\r\n\r\n{}`);
	assert.ok(r.responses.length >= 1, `a response: ${r.text}`);
	const res = r.responses[0];
	assert.ok(res.status === 400 || res.status === 413, `400 or 413, got ${res.status}`);
	h.assertError(res, res.status, res.status === 400 ? 'MALFORMED_REQUEST' : 'PAYLOAD_TOO_LARGE');
	assert.match(String(res.headers.connection), /close/i);
	assert.ok(r.closed, 'closed');
});

test('expect_other_than_100_continue_is_417', async () => {
	const r = await h.raw(srv.port, `GET /health HTTP/1.1\r\n${HOST}Expect: 200-ok\r\nConnection: close\r\n\r\n`);
	assert.ok(r.responses.length >= 1, `a response: ${r.text}`);
	const res = r.responses[0];
	h.assertError(res, 417, 'EXPECTATION_FAILED');
	h.assertCommonHeaders(res);
});

test('request_pipelined_after_a_refused_one_is_not_served', async () => {
	const bytes = `GET /health HTTP/1.1\r\n${HOST}X-Folded: one\r\n two\r\n\r\n` +
		`GET /health HTTP/1.1\r\n${HOST}\r\n`;
	const r = await h.raw(srv.port, bytes);
	h.assertRefusedAndClosed(r, 400, 'MALFORMED_REQUEST');
	assert.equal(r.responses.length, 1, `only the refusal, got:\n${r.text}`);
	assert.equal(r.responses.rest.length, 0, 'nothing after the refusal');
});

test('refusal_after_a_good_request_on_the_same_connection_closes_it', async () => {
	const bytes = `GET /health HTTP/1.1\r\n${HOST}\r\n` +
		`GET /health HTTP/1.1\r\n${HOST}X-Bad : 1\r\n\r\n`;
	const r = await h.raw(srv.port, bytes);
	assert.equal(r.responses.length, 2, r.text);
	assert.equal(r.responses[0].status, 200);
	h.assertError(r.responses[1], 400, 'MALFORMED_REQUEST');
	assert.match(String(r.responses[1].headers.connection), /close/i);
	assert.ok(r.closed);
});

test('server_still_serves_after_the_refusals', async () => {
	const res = await h.request(srv.port, 'GET', '/health');
	assert.equal(res.status, 200);
	assert.ok(srv.proc.exitCode === null && srv.proc.signalCode === null, 'stewardd is still running');
});
