/* A reference to bytes owned elsewhere: whoever is handed one calls
 * release() exactly once, when it no longer reads the bytes. One ref may be
 * handed to many holders at once (a refcounted chunk whose release drops one
 * reference), so one copy of a log chunk serves every reader. A memory
 * primitive: the HTTP server's outputs, the deployment log hub and any other
 * producer of shared bytes use the same shape. */
#ifndef STEWARD_BASE_REF_H
#define STEWARD_BASE_REF_H

struct sw_ref {
	void (*release)(struct sw_ref *ref);
};

#endif
