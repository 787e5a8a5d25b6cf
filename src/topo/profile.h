/* Laying a profile over a topology document (src/topo/profile.c). */
#ifndef KB_TOPO_PROFILE_H
#define KB_TOPO_PROFILE_H

#include "topo/ydoc.h"

#include <stdbool.h>

/* If the document's top level names a `profile:` other than `default`,
 * lays that profile's overlay over it. `topo_path` (the topology file, may
 * be NULL) and `shipped` (the shipped topologies' directory, may be NULL)
 * are where a bare profile name is looked up. False with *err set (naming
 * the `profile:` line) when the profile cannot be found, read or laid. */
bool kb_topo_apply_profile(kb_ydoc *doc, const char *topo_path, const char *shipped, char **err);

#endif
