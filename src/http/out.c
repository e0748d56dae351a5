/* Output generations: what a connection has to write, as pieces of its
 * own buffer (copied bytes) or references to bytes that live elsewhere
 * (static bodies, shared log chunks). Data only: the state machine
 * (conn.c) writes gen[wi] with writev while the other accumulates. */
#include <errno.h>
#include <stdlib.h>
#include "http/conn.h"

struct outgen *conn_acc(struct sw_conn *c)
{
	if (!c->out) {
		struct sw_server *srv = c->srv;
		if (srv->free_outs) {
			c->out = srv->free_outs;
			srv->free_outs = c->out->next_free;
			srv->nfree_outs--;
			c->out->next_free = NULL;
		} else if (!(c->out = calloc(1, sizeof(*c->out)))) {
			c->close_after_write = true;
			return NULL;
		}
	}
	return &c->out->gen[c->out->wi ^ 1];
}

void sw_conn_out_free(struct conn_out *o)
{
	sw_buf_release(&o->gen[0].buf);
	sw_buf_release(&o->gen[1].buf);
	free(o);
}

void sw_conn_out_drop(struct sw_conn *c)
{
	if (!c->out)
		return;
	sw_conn_gen_reset(&c->out->gen[c->out->wi ^ 1]);
	if (!c->write_active)
		sw_conn_gen_reset(&c->out->gen[c->out->wi]);
}

void sw_conn_out_idle(struct sw_conn *c)
{
	struct conn_out *o = c->out;
	if (!o || c->write_active || (c->producer && c->state != CONN_UPGRADED) || o->gen[0].npieces ||
	    o->gen[1].npieces)
		return;
	c->out = NULL;
	struct sw_server *srv = c->srv;
	if (srv->nfree_outs >= OUT_FREE_MAX || srv->stopping) {
		sw_conn_out_free(o);
		return;
	}
	/* Empty (no piece, so no reference); small buffers are kept. */
	for (unsigned i = 0; i < 2; i++) {
		o->gen[i].bytes = 0;
		o->gen[i].buf.len = 0;
		if (o->gen[i].buf.cap > 4096)
			sw_buf_release(&o->gen[i].buf);
	}
	o->wi = 0;
	o->next_free = srv->free_outs;
	srv->free_outs = o;
	srv->nfree_outs++;
}

void sw_conn_out_bytes(struct sw_conn *c, const void *p, size_t n)
{
	struct outgen *g = conn_acc(c);
	if (!g)
		return;
	size_t off = g->buf.len;
	if (sw_buf_append(&g->buf, p, n) < 0) {
		c->close_after_write = true; /* out of memory: give up on this connection */
		return;
	}
	struct piece *last = g->npieces ? &g->pieces[g->npieces - 1] : NULL;
	if (last && !last->ptr && last->off + last->len == off) {
		last->len += n;
	} else if (g->npieces < OUT_MAX_PIECES) {
		g->pieces[g->npieces++] = (struct piece){ NULL, off, n, NULL };
	} else {
		/* No piece left: fold everything into the buffer. Only happens
		 * with many static bodies queued at once. */
		c->close_after_write = true;
		return;
	}
	g->bytes += n;
}

void sw_conn_out_static(struct sw_conn *c, const char *p, size_t n)
{
	struct outgen *g = conn_acc(c);
	if (!g)
		return;
	if (n < 4096 || g->npieces >= OUT_MAX_PIECES - 1) {
		sw_conn_out_bytes(c, p, n);
		return;
	}
	g->pieces[g->npieces++] = (struct piece){ p, 0, n, NULL };
	g->bytes += n;
}

void sw_conn_out_ref(struct sw_conn *c, const char *p, size_t n, struct sw_ref *ref)
{
	struct outgen *g = conn_acc(c);
	if (!g) {
		if (ref)
			ref->release(ref);
		return;
	}
	if (SW_NEVER(g->npieces >= OUT_MAX_PIECES)) {
		if (ref)
			ref->release(ref);
		c->close_after_write = true;
		return;
	}
	g->pieces[g->npieces++] = (struct piece){ p, 0, n, ref };
	g->bytes += n;
}

void sw_conn_gen_reset(struct outgen *g)
{
	for (unsigned i = 0; i < g->npieces; i++)
		if (g->pieces[i].ref)
			g->pieces[i].ref->release(g->pieces[i].ref);
	g->npieces = 0;
	g->bytes = 0;
	g->buf.len = 0;
	if (g->buf.cap > 64 * 1024)
		sw_buf_release(&g->buf);
}

void sw_conn_gen_consume(struct outgen *g, size_t n)
{
	SW_ASSERT(n <= g->bytes);
	g->bytes -= n;
	unsigned i = 0;
	while (i < g->npieces && n >= g->pieces[i].len) {
		n -= g->pieces[i].len;
		if (g->pieces[i].ref)
			g->pieces[i].ref->release(g->pieces[i].ref);
		i++;
	}
	if (i < g->npieces) {
		if (g->pieces[i].ptr)
			g->pieces[i].ptr += n;
		else
			g->pieces[i].off += n;
		g->pieces[i].len -= n;
	} else {
		SW_ASSERT(n == 0);
	}
	memmove(g->pieces, g->pieces + i, (g->npieces - i) * sizeof(g->pieces[0]));
	g->npieces -= i;
}
