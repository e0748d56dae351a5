/* A connection taken over after "101 Switching Protocols": the face that
 * lets a protocol above http (the agents' WebSocket, src/agent/session.c)
 * own a connection without knowing the state machine (src/http/conn.h).
 *
 * The handler of the upgrading request calls sw_http_upgrade(): it answers
 * 101 with the head lines given, and from then on the connection's bytes
 * belong to the owner's ops, all called on the request's loop:
 * - input(arg, in): bytes arrived in *in (those that came with the request
 *   first); the owner consumes what it used (sw_buf_consume()) and bounds
 *   the rest itself;
 * - drained(arg): optional, everything queued so far has been written;
 * - timeout(arg): the timer armed with sw_http_upgraded_timer() fired;
 * - shutdown(arg): optional, the server is stopping: say goodbye and
 *   sw_http_upgraded_end(); NULL ends at once;
 * - closed(arg): exactly once, last, never inside a call of this face: the
 *   connection is gone (the peer left, an I/O error, the owner's end). The
 *   handle is invalid once it returns; the owner frees its state there.
 * An upgraded connection never returns to HTTP. */
#ifndef STEWARD_HTTP_UPGRADE_H
#define STEWARD_HTTP_UPGRADE_H

#include "steward/base/base.h"
#include "steward/base/buf.h"

struct sw_loop;
struct sw_http_request;
struct sw_http_upgraded;

struct sw_http_upgrade_ops {
	void (*input)(void *arg, struct sw_buf *in);
	void (*drained)(void *arg);
	void (*timeout)(void *arg);
	void (*shutdown)(void *arg);
	void (*closed)(void *arg);
};

/* Answers req with "101 Switching Protocols" followed by head_lines
 * ("Name: value\r\n" each; Upgrade, Connection and the protocol's own)
 * and hands the connection to ops. NULL when req was answered already or
 * its client is gone, or out of memory (then req is answered 500): ops are
 * then never called. */
struct sw_http_upgraded *sw_http_upgrade(struct sw_http_request *req, const char *head_lines,
					 const struct sw_http_upgrade_ops *ops, void *arg);
/* Queues n bytes and starts writing them. Ignored once the connection is
 * ending. */
void sw_http_upgraded_write(struct sw_http_upgraded *u, const void *p, size_t n);
/* Bytes queued and not yet taken by the socket. */
size_t sw_http_upgraded_pending(const struct sw_http_upgraded *u);
/* Arms the connection's one timer: timeout() in ms. */
void sw_http_upgraded_timer(struct sw_http_upgraded *u, unsigned ms);
/* Ends the connection once what is queued is written; closed() follows. */
void sw_http_upgraded_end(struct sw_http_upgraded *u);
/* Ends the connection at once, dropping what is queued (a peer that does
 * not read); closed() follows. */
void sw_http_upgraded_abort(struct sw_http_upgraded *u);
/* The peer's address, as the access log writes it. */
const char *sw_http_upgraded_peer(const struct sw_http_upgraded *u);
struct sw_loop *sw_http_upgraded_loop(const struct sw_http_upgraded *u);

#endif
