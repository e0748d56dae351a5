/* The agent's journal of commands, on disk: a command id seen again is
 * answered with its recorded result and never run twice, and the same id
 * with another payload is refused.
 *
 * An append-only log (journal.log in the agent's data directory): each
 * record is a header (magic, length, the first 8 bytes of the SHA-256 of
 * the body) and a body (begun or finished, the id, the command's digest,
 * the result). A record is written with one write() and made durable with
 * fdatasync() before the call returns, so a command is journaled as begun
 * before it runs and its result before it is reported. On open, the log
 * is read up to the first record that is cut short or does not match its
 * checksum (a crash in the middle of a write) and truncated there; a
 * command begun but never finished was cut off by a crash, and is
 * finished with an AGENT_RESTARTED failure rather than run again. The
 * journal keeps at most max_entries commands (the oldest finished ones
 * are forgotten first) and rewrites the log with only those (a temporary
 * file, fsync, rename, fsync of the directory) once it grows past
 * max_bytes. One thread uses a journal at a time. */
#ifndef STEWARD_AGENT_JOURNAL_H
#define STEWARD_AGENT_JOURNAL_H

#include "steward/base/base.h"

struct sw_agent_journal;

/* The result recorded for a command a crash interrupted. */
#define SW_AGENT_JOURNAL_RESTARTED \
	"{\"ok\":false,\"error\":{\"code\":\"AGENT_RESTARTED\",\"message\":\"the agent restarted while the command ran; it was not run again\"}}"

/* Opens (creating it 0600 if needed) dir/journal.log and replays it.
 * 0 with *ret, or -errno (-EINVAL for a zero bound). */
int sw_agent_journal_open(const char *dir, size_t max_entries, size_t max_bytes,
			  struct sw_agent_journal **ret);
void sw_agent_journal_close(struct sw_agent_journal *j);

enum sw_agent_journal_seen {
	SW_AGENT_JOURNAL_NEW,      /* never seen: begin it, then run it */
	SW_AGENT_JOURNAL_RUNNING,  /* begun, no result yet: do not run it again */
	SW_AGENT_JOURNAL_DONE,     /* finished: answer with the recorded result */
	SW_AGENT_JOURNAL_CONFLICT, /* the id was used for another payload: refuse */
};

/* What the journal knows of id with this digest. For DONE, *ret_result
 * is the recorded result (NUL-terminated, owned by the journal, valid
 * until the next begin or finish). */
enum sw_agent_journal_seen sw_agent_journal_lookup(struct sw_agent_journal *j, const char *id,
						   const uint8_t digest[32], const char **ret_result);

/* Records that the command id (at most 255 bytes) begins; durable on
 * return. -EEXIST when id is already known; -EIO, -ENOSPC or another
 * -errno when it could not be made durable (then do not run it). */
int sw_agent_journal_begin(struct sw_agent_journal *j, const char *id, const uint8_t digest[32]);
/* Records the result of a begun command (text, at most
 * SW_AGENT_MAX_RESULT bytes); durable on return. -ENOENT when id was not
 * begun; -EALREADY when it already has a result; -E2BIG; -errno. */
int sw_agent_journal_finish(struct sw_agent_journal *j, const char *id, const char *result);

/* Commands remembered, and the log's size in bytes. */
size_t sw_agent_journal_count(const struct sw_agent_journal *j);
size_t sw_agent_journal_bytes(const struct sw_agent_journal *j);

#endif
