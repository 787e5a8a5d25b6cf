/* Internal to lsim_shared.c and lsim_presource.c: the userdata of the
 * shared objects (core/shared.h) and the helpers both files use. */
#ifndef KB_LUASIM_LSIM_SHARED_H
#define KB_LUASIM_LSIM_SHARED_H

#include "core/shared.h"
#include "luasim/lsim.h"

#define LCONT_MT "kernbench.container"
#define LPSTORE_MT "kernbench.priority_store"
#define LFSTORE_MT "kernbench.filter_store"
#define LPRES_MT "kernbench.priority_resource"

typedef struct lshared {
    kb_shared *sh;
    lsim *S;
    lua_Integer next_key;
    lua_Integer *free_keys;
    size_t nfree, free_cap;
    lua_State *Lcall; /* set while a binding calls the core (hooks run there) */
    int Lcall_sim;    /* the sim userdata's index on Lcall */
} lshared;

enum { LSH_UV_SIM = 1, LSH_UV_ITEMS, LSH_NUV = LSH_UV_ITEMS };

/* The object at 1 of metatable mt (else an error naming call and what). */
lshared *lsh_check(lua_State *L, const char *mt, const char *call, const char *what);
/* Any of the four kinds at idx, or NULL. */
lshared *lsh_any(lua_State *L, int idx);
/* Where a hook runs: the calling binding's state, else the run's. */
lua_State *lsh_hook_state(lshared *s, int *sim_idx);
/* Around a core call from a binding (object at 1): hooks run on L; returns
 * the index of the sim userdata it pushed. */
int lsh_enter(lua_State *L, lshared *s);
void lsh_leave(lshared *s);
lreq *lsh_new_request(lua_State *L, lshared *s, int sim_idx, levent_kind kind);
double lsh_opt_priority(lua_State *L, int idx, const char *call);
int lsh_queue_len(lua_State *L, const char *mt, const char *what, const char *call, bool puts);
int lsh_push_name(lua_State *L, lshared *s);
lshared *lsh_push_new(lua_State *L, const char *mt);
const char *lsh_name_of(lua_State *L, const char *given, const char *kind, char *buf, size_t n);
const char *lsh_parse_cap(lua_State *L, const char *call, lua_Number *cap, bool integer);
/* The same with the keys an options table may hold (lbind_check_keys). */
const char *lsh_parse_cap_of(lua_State *L, const char *call, lua_Number *cap, bool integer,
                             const char *const *known);

/* lsim_presource.c: registers the resources' metatable with `meta`. */
void lsim_open_presource(lua_State *L, const luaL_Reg *meta);

#endif
