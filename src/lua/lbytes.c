/* kb_data sources and sinks from Lua values. */
#include "lua/lbytes.h"

#include "core/util.h"
#include "lua/ltensor.h"
#include "luasim/lbind.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>

/* A tensor's reference, released when the operation lets go of it. */
typedef struct tensor_ref {
    lua_State *main; /* for releasing the reference from anywhere */
    int ref;
} tensor_ref;

static void unref_tensor(void *owner)
{
    tensor_ref *r = owner;
    if (lua_checkstack(r->main, 6)) {
        lua_rawgeti(r->main, LUA_REGISTRYINDEX, r->ref);
        ltensor_hold(r->main, -1, -1);
        lua_pop(r->main, 1);
    }
    luaL_unref(r->main, LUA_REGISTRYINDEX, r->ref);
    free(r);
}

static int64_t block_field(lua_State *L, int idx, int k, const char *call)
{
    char what[16];
    snprintf(what, sizeof what, "block[%d]", k);
    lua_rawgeti(L, idx, k);
    int64_t v = ltensor_check_int(L, -1, call, what);
    lua_pop(L, 1);
    return v;
}

static kb_data *tensor_source(lua_State *L, int tbl, int tidx, const char *call, uint64_t nbytes)
{
    const kb_tensor *t = ltensor_check(L, tidx);
    int64_t rows, cols;
    kb_tensor_rows_cols(t, &rows, &cols);
    int64_t b[4] = {0, rows, 0, cols};
    lua_getfield(L, tbl, "block");
    if (!lua_isnil(L, -1)) {
        luaL_checktype(L, -1, LUA_TTABLE);
        for (int k = 0; k < 4; k++)
            b[k] = block_field(L, lua_gettop(L), k + 1, call);
    }
    lua_pop(L, 1);
    char *err;
    if (!kb_tensor_block_check(t, call, b, &err))
        lbind_raise_where(L, err);
    uint64_t have = (uint64_t)(b[1] * b[3]) * kb_dtype_size(t->dtype);
    if (have != nbytes)
        luaL_error(L, "%s: the tensor block holds %I bytes, nbytes is %I", call, (lua_Integer)have,
                   (lua_Integer)nbytes);
    tensor_ref *r = kb_xmalloc(sizeof *r);
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    r->main = lua_tothread(L, -1);
    lua_pop(L, 1);
    lua_pushvalue(L, tidx);
    r->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    ltensor_hold(L, tidx, 1);
    return kb_data_tensor_block(t, b, unref_tensor, r);
}

bool lbytes_is_buffer(const kb_data *d) { return d && !kb_data_is_tensor_block(d); }

kb_data *lbytes_from_args(lua_State *L, int idx, const char *call, bool write, uint64_t nbytes)
{
    kb_data *d = NULL;
    lua_getfield(L, idx, write ? "dst" : "src"); /* the other direction's field: a mistake */
    if (!lua_isnil(L, -1))
        luaL_error(L, "%s: '%s' is for %s; use '%s'", call, write ? "dst" : "src",
                   write ? "reads" : "writes", write ? "src" : "dst");
    lua_pop(L, 1);
    lua_getfield(L, idx, write ? "src" : "dst");
    if (!lua_isnil(L, -1))
        d = tensor_source(L, idx, lua_gettop(L), call, nbytes);
    lua_pop(L, 1);
    if (d)
        return d;
    lua_getfield(L, idx, "data");
    if (write && !lua_isnil(L, -1)) {
        size_t len;
        if (lua_type(L, -1) != LUA_TSTRING)
            luaL_error(L, "%s: data must be a string of nbytes bytes", call);
        const char *s = lua_tolstring(L, -1, &len);
        if (len != nbytes)
            luaL_error(L, "%s: data holds %I bytes, nbytes is %I", call, (lua_Integer)len, (lua_Integer)nbytes);
        d = kb_data_buffer(s, nbytes);
    } else if (!write && !lua_isnil(L, -1)) {
        if (!lua_isboolean(L, -1))
            luaL_error(L, "%s: field 'data' must be a boolean (true: the bytes read back), got %s", call,
                       luaL_typename(L, -1));
        if (lua_toboolean(L, -1))
            d = kb_data_buffer(NULL, nbytes);
    }
    lua_pop(L, 1);
    return d;
}
