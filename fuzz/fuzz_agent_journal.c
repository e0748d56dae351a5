/* libFuzzer harness for the replay of the agent's journal
 * (src/agent/journal.c): the bytes of journal.log as a crash, a full disk
 * or a damaged sector may leave them.
 *
 * The input is written as journal.log in a scratch directory (on /dev/shm
 * when it exists, so fdatasync is cheap) and opened with small bounds (8
 * entries, 4 KiB). Checks, beyond "no crash, no UB": the open succeeds;
 * the file is then exactly as long as the journal says (the damaged tail
 * cut off, restart results appended); at most 8 commands are kept; a
 * second open changes nothing (the same count and size: replay is
 * idempotent once repaired); and a new command can be begun and finished
 * on what was recovered. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "steward/agent/journal.h"
#include "fuzz.h"

static char dir[64];

static off_t file_size(void)
{
	char path[96];
	snprintf(path, sizeof(path), "%s/journal.log", dir);
	struct stat st;
	ASSERT(stat(path, &st) == 0);
	return st.st_size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/sw-fuzz-journal-XXXXXX",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
		ASSERT(mkdtemp(dir));
	}
	char path[96];
	snprintf(path, sizeof(path), "%s/journal.log", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT(fd >= 0);
	ASSERT(size == 0 || write(fd, data, size) == (ssize_t)size);
	close(fd);

	struct sw_agent_journal *j;
	ASSERT(sw_agent_journal_open(dir, 8, 4096, &j) == 0);
	size_t count = sw_agent_journal_count(j), bytes = sw_agent_journal_bytes(j);
	ASSERT(count <= 8);
	ASSERT((off_t)bytes == file_size());
	sw_agent_journal_close(j);

	ASSERT(sw_agent_journal_open(dir, 8, 4096, &j) == 0);
	ASSERT(sw_agent_journal_count(j) == count);
	ASSERT(sw_agent_journal_bytes(j) == bytes);
	uint8_t digest[32] = { 1 };
	const char *r;
	if (sw_agent_journal_lookup(j, "fuzz-new", digest, &r) == SW_AGENT_JOURNAL_NEW) {
		ASSERT(sw_agent_journal_begin(j, "fuzz-new", digest) == 0);
		ASSERT(sw_agent_journal_finish(j, "fuzz-new", "{\"ok\":true}") == 0);
		ASSERT(sw_agent_journal_lookup(j, "fuzz-new", digest, &r) == SW_AGENT_JOURNAL_DONE);
		ASSERT(strcmp(r, "{\"ok\":true}") == 0);
	}
	ASSERT((off_t)sw_agent_journal_bytes(j) == file_size());
	sw_agent_journal_close(j);
	return 0;
}
