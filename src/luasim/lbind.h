/* What every binding module shares: raising a C layer's error message,
 * reading integer fields of argument tables, simulated times in ns, and
 * value trees (src/trace/val.h) as Lua tables. */
#ifndef KB_LUASIM_LBIND_H
#define KB_LUASIM_LBIND_H

#include "core/types.h"
#include "trace/val.h"

#include <lua.h>

/* Raises `msg` (allocated by a C module, freed here) as a Lua error; does
 * not return. Written as `return lbind_raise(L, err);` in C functions. */
int lbind_raise(lua_State *L, char *msg);
/* The same with the calling Lua code's position in front ("file:12: msg"),
 * as luaL_error does: for bindings whose messages always had it. */
int lbind_raise_where(lua_State *L, char *msg);
/* The same with "prefix: " in front. */
int lbind_raise_prefixed(lua_State *L, const char *prefix, char *msg);
/* For functions that answer a failure with `nil, message` rather than an
 * error: pushes both (msg freed here); `return lbind_fail(L, err);`. */
int lbind_fail(lua_State *L, char *msg);

/* Strings from Lua for C: luaL_checklstring (numbers are converted as
 * there) that also refuses a string with a NUL byte, which C would read as
 * shorter ("f32\0x" as "f32"). Errors name the call and the argument:
 * "tl.load: argument 3 (dtype) must be a string without NUL bytes" and
 * "... must be a string, got nil". `what` may be NULL. */
const char *lbind_checkstr(lua_State *L, int idx, const char *call, const char *what);
/* The same, with `dflt` for nil or no value. */
const char *lbind_optstr(lua_State *L, int idx, const char *call, const char *what, const char *dflt);
/* The same check for a string already read (a table field, a key): the
 * value at idx if it is a string without NUL bytes, else an error
 * "CALL: WHAT must be a string without NUL bytes". */
const char *lbind_tostr(lua_State *L, int idx, const char *call, const char *what);
/* Raises "CALL: call it with ':' (argument 1 must be a WHAT, got TYPE)"
 * for a method whose self (argument 1) is not its object. */
int lbind_bad_self(lua_State *L, const char *call, const char *what);
/* The name of the running C function for a message: its module and key
 * when it is in package.loaded (with lbind_name_metatables, methods too:
 * "kernbench.sim.run"), else the name Lua gives the call, else "?". Pushes
 * the string (for a message about to be raised). */
const char *lbind_fname(lua_State *L);
/* Makes Lua's own argument errors ("bad argument #2 to 'NAME'") name the
 * functions of every metatable registered so far when they are called
 * from C (pcall(obj.method, ...)), where Lua has no name for them and
 * writes '?': each metatable's functions and methods are listed in
 * package.loaded under the metatable's __name ("sim.store.put"), or
 * "<NAME>" when a module is loaded under the name ("<kernbench.alloc>.free"). */
void lbind_name_metatables(lua_State *L);
/* getmetatable(obj) of every metatable registered so far that has a __gc
 * or __close gives a public view (its __metatable): the same fields but
 * those two, so that Lua code cannot free a live object by calling its
 * finalizer by hand (it crashed the process). C code and Lua's own calls
 * of __gc, __close and <close> still use the real metatable. */
void lbind_hide_finalizers(lua_State *L);
/* Pushes the registry's table under `key` (a static address), made on
 * first use with weak keys: what it says of an object goes with it. */
void lbind_push_weak_keyed(lua_State *L, const void *key);

/* Integer field `key` of the table at idx: stores it in *out and returns
 * true; returns false, *out untouched, when the field is nil (so *out may
 * hold a default). A value that is not an integer (a string, a float with
 * a fraction) or lies outside min..max raises an error naming the call,
 * the key, the range and the value given, e.g. "s:mmu_map{}: field 'sip'
 * must be >= 0 and <= 2147483647, got 4294967296". */
bool lbind_field_int(lua_State *L, int idx, const char *call, const char *key, lua_Integer min,
                     lua_Integer max, lua_Integer *out);
/* The same for a field that must be there ("CALL: missing field 'KEY'"). */
lua_Integer lbind_need_int(lua_State *L, int idx, const char *call, const char *key, lua_Integer min,
                           lua_Integer max);

/* Refuses a key of the options table at idx that is not in `known` (a
 * NULL-ended list): a key nobody reads (a typo) would otherwise quietly
 * give the default. The error names the call, the key and the known keys:
 * "s:store(): unknown option 'capcity' (its options are {capacity =, name =})";
 * a key that is not a string reads "unknown option [1]" (numbers, booleans)
 * or "unknown option (a table key)". `what` says whose keys they are ("its
 * options" when NULL, "a target's fields": then "unknown field"). */
void lbind_check_keys(lua_State *L, int idx, const char *call, const char *what, const char *const *known);
/* Boolean field `key` of the table at idx: `dflt` when nil, else it must
 * be a boolean ("CALL: field 'KEY' must be a boolean, got TYPE"). */
bool lbind_field_bool(lua_State *L, int idx, const char *call, const char *key, bool dflt);

/* luaL_testudata / luaL_checkudata for hot paths: the metatable of a
 * type name is looked up once per state and then compared by address
 * (luaL_testudata fetches it from the registry by name on every call,
 * which costs more than the operations checked). The cache is keyed by
 * the address of `tname`, so pass the same string constant each time.
 * Without lbind_init_state these are luaL_testudata / luaL_checkudata. */
void *lbind_testudata(lua_State *L, int idx, const char *tname);
void *lbind_checkudata(lua_State *L, int idx, const char *tname);
/* A cheaper check still, for the calls every process resume makes (a
 * store's put and get, s:sleep): the value at idx if it is a full userdata
 * of exactly `size` bytes whose first field is `tag`, the address of a
 * static that only its type's constructor writes there; else NULL (then
 * lbind_checkudata raises the usual message). Two API calls instead of a
 * metatable comparison (docs/decisions.md, "Lua process fast path"). */
static inline void *lbind_test_tagged(lua_State *L, int idx, const void *tag, size_t size)
{
    void *p = lua_touserdata(L, idx); /* light userdata: rawlen is 0 */
    if (!p || lua_rawlen(L, idx) != size || *(const void *const *)p != tag)
        return NULL;
    return p;
}

/* Gives the state the cache lbind_testudata uses (in the state's extra
 * space, which coroutines inherit): call once, right after creating it. */
void lbind_init_state(lua_State *L);

/* Simulated times (ps) as Lua numbers of ns. Two forms, each kept where it
 * was first used since results print them differently: a time is an
 * integer when it falls on a whole ns (else a float); an "ns" figure is
 * always a float (as a division of ps by 1000 in Lua). */
void lbind_push_time(lua_State *L, kb_time ps);
/* t[k] = ... for the table on the top of the stack. */
void lbind_set_time(lua_State *L, const char *k, kb_time ps);
void lbind_set_ns(lua_State *L, const char *k, kb_time ps);
void lbind_set_int(lua_State *L, const char *k, lua_Integer v);
void lbind_set_num(lua_State *L, const char *k, lua_Number v);
void lbind_set_str(lua_State *L, const char *k, const char *v);
/* Pushes v as Lua values: objects become tables with string keys, arrays
 * sequences, null nil. */
void lbind_push_val(lua_State *L, const kb_val *v);

#endif
