/* libFuzzer harness for the agent protocol's decoder (src/agent/protocol.c):
 * every message an agent sends the control plane and the control plane
 * sends an agent.
 *
 * Checks, beyond "no crash, no UB": a refusal always comes with a
 * sentence of printable ASCII or UTF-8 and no control character; an
 * accepted message is written back by the encoder (which checks the same
 * table) without error, that text decodes to a message of the same type
 * (and command kind), and writing it once more gives the same bytes. */
#include <stdlib.h>
#include <string.h>
#include "steward/agent/protocol.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sw_agent_msg m;
	char err[256];
	int rc = sw_agent_msg_decode((const char *)data, size, &m, err, sizeof(err));
	if (rc != 0) {
		ASSERT(err[0] != '\0');
		for (const char *c = err; *c; c++)
			ASSERT((unsigned char)*c >= 0x20);
		return 0;
	}
	struct sw_buf once = { 0 }, twice = { 0 };
	ASSERT(sw_agent_msg_encode(&once, &m) == 0);
	struct sw_agent_msg back;
	ASSERT(sw_agent_msg_decode(once.data, once.len, &back, err, sizeof(err)) == 0);
	ASSERT(back.type == m.type);
	ASSERT(m.type != SW_AGENT_MSG_COMMAND || back.kind == m.kind);
	if (m.type == SW_AGENT_MSG_COMMAND) {
		uint8_t d1[32], d2[32];
		ASSERT(sw_agent_cmd_digest(&m, d1) == 0 && sw_agent_cmd_digest(&back, d2) == 0);
		ASSERT(memcmp(d1, d2, 32) == 0);
	}
	ASSERT(sw_agent_msg_encode(&twice, &back) == 0);
	ASSERT(once.len == twice.len && memcmp(once.data, twice.data, once.len) == 0);
	sw_agent_msg_release(&back);
	sw_agent_msg_release(&m);
	sw_buf_release(&once);
	sw_buf_release(&twice);
	return 0;
}
