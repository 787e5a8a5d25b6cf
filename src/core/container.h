/* Container: an amount of matter between 0 and a capacity (SimPy's
 * Container), a shared object (shared.h). A put of `amount` is served when
 * the room left holds it, a get when the level does; each queue is served
 * from its head for as long as requests fit, the first that does not
 * stopping the rest. Amounts and levels are doubles, as Python's floats
 * (whole numbers are exact up to 2^53). */
#ifndef KB_CORE_CONTAINER_H
#define KB_CORE_CONTAINER_H

#include "core/shared.h"

/* capacity > 0 (INFINITY: unbounded), 0 <= init <= capacity: the caller
 * checks. */
kb_shared *kb_container_new(kb_sim *sim, const char *name, double capacity, double init);
double kb_container_level(const kb_shared *sh);
double kb_container_capacity(const kb_shared *sh);
/* Requests of `amount` > 0 (the caller checks). */
void kb_container_put(kb_shared *sh, kb_request *r, double amount);
void kb_container_get(kb_shared *sh, kb_request *r, double amount);

#endif
