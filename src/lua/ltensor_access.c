/* Element access of `kernbench.tensor_c`: indexing (__index, __newindex,
 * __len), get/set/item/tolist, sizes, copies and dtype conversions, and the
 * raw bytes (bytes, hash, block, set_block, fill_, zero_, copy_). */
#include "lua/ltensor_internal.h"

#include <string.h>

/* ==== elements ==== */

static int64_t check_index(lua_State *L, const char *fn, lua_Integer i, int dim, int64_t size)
{
    if (i < -size || i >= size)
        luaL_error(L, "%s: index %I is out of bounds for dimension %d with size %I", fn, i, dim, (lua_Integer)size);
    return i < 0 ? i + size : i;
}

/* A header (not a Lua value) describing a region of t. */
static ltensor sub_of(const ltensor *t, int64_t off, int ndim, const int64_t *shape)
{
    ltensor s;
    memset(&s, 0, sizeof s);
    s.dtype = t->dtype;
    s.ndim = ndim;
    if (ndim > 0)
        memcpy(s.shape, shape, (size_t)ndim * sizeof *shape);
    s.numel = ltensor_prod(shape, 0, ndim);
    s.data = eptr(t, off);
    return s;
}

static void push_elem(lua_State *L, const ltensor *t, int64_t off)
{
    double v = kb_dtype_load(t->dtype, eptr(t, off));
    if (t->dtype == KB_BOOL)
        lua_pushboolean(L, v != 0);
    else if (kb_dtype_is_float(t->dtype))
        lua_pushnumber(L, v);
    else
        lua_pushinteger(L, (lua_Integer)v);
}

/* ==== indexing ==== */

/* The element offset of t[idx[0]]...[idx[n-1]]. */
static int64_t prefix_offset(lua_State *L, const char *fn, const ltensor *t, int n, const lua_Integer *idx)
{
    if (n > t->ndim)
        luaL_error(L, "%s: too many indices (%d) for a %d-d tensor", fn, n, t->ndim);
    int64_t st[MAXD], off = 0;
    ltensor_strides(t->ndim, t->shape, st);
    for (int d = 0; d < n; d++)
        off += check_index(L, fn, idx[d], d, t->shape[d]) * st[d];
    return off;
}

/* Reads the index key at idx (an integer or a table of integers). */
static int read_key(lua_State *L, int idx, lua_Integer *out)
{
    if (lua_type(L, idx) == LUA_TNUMBER) {
        out[0] = ltensor_check_int(L, idx, "index", "an index");
        return 1;
    }
    lua_Unsigned n = lua_rawlen(L, idx);
    if (n > MAXD)
        luaL_error(L, "index: %I indices (at most %d)", (lua_Integer)n, MAXD);
    for (int i = 0; i < (int)n; i++) {
        lua_rawgeti(L, idx, i + 1);
        out[i] = ltensor_check_int(L, -1, "index", "an index");
        lua_pop(L, 1);
    }
    return (int)n;
}

/* t[key]: with as many indices as dimensions an element, else a view. */
static int index_get(lua_State *L, const ltensor *t)
{
    lua_Integer idx[MAXD];
    int n = read_key(L, 2, idx);
    int64_t off = prefix_offset(L, "index", t, n, idx);
    if (n == t->ndim)
        push_elem(L, t, off);
    else
        ltensor_push_view(L, 1, t, off, t->ndim - n, t->shape + n);
    return 1;
}

static void push_shape(lua_State *L, const ltensor *t)
{
    lua_createtable(L, t->ndim, 0);
    for (int d = 0; d < t->ndim; d++) {
        lua_pushinteger(L, (lua_Integer)t->shape[d]);
        lua_rawseti(L, -2, d + 1);
    }
}

/* __index: integers and index tables select; strings are methods or the
 * fields shape, dtype, ndim. Upvalue 1: the method table. */
int ltensor_index(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int ty = lua_type(L, 2);
    if (ty == LUA_TNUMBER || ty == LUA_TTABLE)
        return index_get(L, t);
    if (ty != LUA_TSTRING) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
        return 1;
    const char *k = lua_tostring(L, 2);
    if (strcmp(k, "shape") == 0)
        push_shape(L, t);
    else if (strcmp(k, "dtype") == 0)
        lua_pushstring(L, kb_dtype_name(t->dtype));
    else if (strcmp(k, "ndim") == 0)
        lua_pushinteger(L, t->ndim);
    else
        lua_pushnil(L);
    return 1;
}

static int t_newindex(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int ty = lua_type(L, 2);
    if (ty != LUA_TNUMBER && ty != LUA_TTABLE)
        return luaL_error(L, "tensor: cannot set field '%s' (only elements and sub-tensors can be assigned)",
                          luaL_tolstring(L, 2, NULL));
    lua_Integer idx[MAXD];
    int n = read_key(L, 2, idx);
    int64_t off = prefix_offset(L, "index", t, n, idx);
    ltensor sub = sub_of(t, off, t->ndim - n, t->shape + n);
    ltensor_assign(L, "index", &sub, 3);
    return 0;
}

static int t_len(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    if (t->ndim == 0)
        return luaL_error(L, "len() of a 0-d tensor");
    lua_pushinteger(L, (lua_Integer)t->shape[0]);
    return 1;
}

/* t:get(i, j, ...): one index per dimension. */
static int m_get(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int n = lua_gettop(L) - 1;
    if (n != t->ndim)
        return luaL_error(L, "get: a %d-d tensor needs %d indices, got %d", t->ndim, t->ndim, n);
    lua_Integer idx[MAXD];
    for (int d = 0; d < n; d++)
        idx[d] = ltensor_check_int(L, d + 2, "get", "an index");
    push_elem(L, t, prefix_offset(L, "get", t, n, idx));
    return 1;
}

/* t:set(i, j, ..., v) */
static int m_set(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int top = lua_gettop(L), n = top - 2;
    if (n != t->ndim)
        return luaL_error(L, "set: a %d-d tensor needs %d indices and a value, got %d arguments", t->ndim, t->ndim,
                          top - 1);
    double v;
    if (!ltensor_to_scalar(L, top, &v))
        return luaL_error(L, "set: the value must be a number or a boolean, got %s", luaL_typename(L, top));
    lua_Integer idx[MAXD];
    for (int d = 0; d < n; d++)
        idx[d] = ltensor_check_int(L, d + 2, "set", "an index");
    kb_dtype_store(t->dtype, eptr(t, prefix_offset(L, "set", t, n, idx)), v);
    return 0;
}

static int m_item(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    if (t->numel != 1)
        return luaL_error(L, "item: a tensor of shape %s has %I elements, not 1", ltensor_tshape(L, t),
                          (lua_Integer)t->numel);
    push_elem(L, t, 0);
    return 1;
}

static void push_list(lua_State *L, const ltensor *t, const int64_t *st, int dim, int64_t off)
{
    if (dim == t->ndim) {
        push_elem(L, t, off);
        return;
    }
    luaL_checkstack(L, 3, "tolist");
    int64_t n = t->shape[dim];
    lua_createtable(L, n < 0x7fffffff ? (int)n : 0, 0);
    for (int64_t i = 0; i < n; i++) {
        push_list(L, t, st, dim + 1, off + i * st[dim]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

static int m_tolist(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int64_t st[MAXD];
    ltensor_strides(t->ndim, t->shape, st);
    push_list(L, t, st, 0, 0);
    return 1;
}

/* ==== sizes ==== */

static int m_numel(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)ltensor_check(L, 1)->numel);
    return 1;
}

static int m_dim(lua_State *L)
{
    lua_pushinteger(L, ltensor_check(L, 1)->ndim);
    return 1;
}

/* t:size() -> shape table; t:size(d) -> size of dimension d */
static int m_size(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    if (lua_isnoneornil(L, 2)) {
        push_shape(L, t);
        return 1;
    }
    int d = ltensor_check_dim(L, "size", ltensor_check_int(L, 2, "size", "dim"), t->ndim);
    lua_pushinteger(L, (lua_Integer)t->shape[d]);
    return 1;
}

static int m_nbytes(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)nbytes_of(ltensor_check(L, 1)));
    return 1;
}

static int m_element_size(lua_State *L)
{
    lua_pushinteger(L, esize(ltensor_check(L, 1)->dtype));
    return 1;
}

static int m_self(lua_State *L)
{
    ltensor_check(L, 1);
    lua_settop(L, 1);
    return 1;
}

/* ==== copies and conversions ==== */

static int l_clone(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    ltensor_push_copy(L, t, t->dtype);
    return 1;
}

static int convert_to(lua_State *L, kb_dtype dt)
{
    const ltensor *t = ltensor_check(L, 1);
    if (t->dtype == dt) { /* torch: to() returns the tensor itself */
        lua_settop(L, 1);
        return 1;
    }
    ltensor_push_copy(L, t, dt);
    return 1;
}

/* t:to(dtype) or t:to{dtype = ...}; t:to("cpu") is t. */
static int m_to(lua_State *L)
{
    ltensor_check(L, 1);
    if (lua_type(L, 2) == LUA_TSTRING && strcmp(lua_tostring(L, 2), "cpu") == 0) {
        lua_settop(L, 1);
        return 1;
    }
    if (lua_isnoneornil(L, 2))
        return luaL_error(L, "to: expected a dtype such as \"f16\"");
    return convert_to(L, ltensor_opt_dtype(L, 2, "to", KB_F32));
}

static int m_float(lua_State *L) { return convert_to(L, KB_F32); }
static int m_half(lua_State *L) { return convert_to(L, KB_F16); }
static int m_bfloat16(lua_State *L) { return convert_to(L, KB_BF16); }
static int m_int(lua_State *L) { return convert_to(L, KB_I32); }
static int m_short(lua_State *L) { return convert_to(L, KB_I16); }
static int m_char(lua_State *L) { return convert_to(L, KB_I8); }
static int m_byte(lua_State *L) { return convert_to(L, KB_U8); }
static int m_bool(lua_State *L) { return convert_to(L, KB_BOOL); }

static int m_bytes(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    lua_pushlstring(L, t->data, nbytes_of(t));
    return 1;
}

/* t:hash() -> 64-bit FNV-1a of the bytes (an integer), to compare large
 * tensors without keeping both. */
static int m_hash(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    const unsigned char *p = t->data;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0, n = nbytes_of(t); i < n; i++)
        h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    lua_pushinteger(L, (lua_Integer)h);
    return 1;
}

static int m_fill(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    double v;
    if (!ltensor_to_scalar(L, 2, &v))
        return luaL_error(L, "fill_: the value must be a number or a boolean, got %s", luaL_typename(L, 2));
    ltensor_fill(t, v);
    lua_settop(L, 1);
    return 1;
}

static int m_zero(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    memset(t->data, 0, nbytes_of(t));
    lua_settop(L, 1);
    return 1;
}

/* t:copy_(src): src (a tensor broadcastable to t, or a number) into t. */
static int m_copy(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    ltensor_assign(L, "copy_", t, 2);
    lua_settop(L, 1);
    return 1;
}

/* ---- blocks of the 2-D view (rows = all dimensions but the last) ---- */

static void view_2d(const ltensor *t, int64_t *rows, int64_t *cols)
{
    *cols = t->ndim ? t->shape[t->ndim - 1] : 1;
    *rows = *cols ? t->numel / *cols : 0;
}

static void check_block(lua_State *L, const char *fn, const ltensor *t, const int64_t *b)
{
    int64_t rows, cols;
    view_2d(t, &rows, &cols);
    if (b[0] < 0 || b[1] < 0 || b[2] < 0 || b[3] < 0 || b[0] + b[1] > rows || b[2] + b[3] > cols)
        luaL_error(L, "%s: block rows %I+%I, cols %I+%I outside the %I x %I view of %s", fn, (lua_Integer)b[0],
                   (lua_Integer)b[1], (lua_Integer)b[2], (lua_Integer)b[3], (lua_Integer)rows, (lua_Integer)cols,
                   ltensor_tshape(L, t));
}

/* t:block(row0, rows, col0, cols) -> the block's bytes, row-major. */
static int m_block(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int64_t b[4];
    for (int i = 0; i < 4; i++)
        b[i] = ltensor_check_int(L, i + 2, "block", "a block bound");
    check_block(L, "block", t, b);
    int64_t rows, cols;
    view_2d(t, &rows, &cols);
    size_t es = kb_dtype_size(t->dtype), rowb = (size_t)b[3] * es;
    luaL_Buffer buf;
    char *out = luaL_buffinitsize(L, &buf, (size_t)b[1] * rowb);
    for (int64_t r = 0; r < b[1]; r++)
        memcpy(out + (size_t)r * rowb, eptr(t, (b[0] + r) * cols + b[2]), rowb);
    luaL_pushresultsize(&buf, (size_t)b[1] * rowb);
    return 1;
}

/* t:set_block(row0, rows, col0, cols, bytes) */
static int m_set_block(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int64_t b[4];
    for (int i = 0; i < 4; i++)
        b[i] = ltensor_check_int(L, i + 2, "set_block", "a block bound");
    size_t len;
    const char *src = luaL_checklstring(L, 6, &len);
    check_block(L, "set_block", t, b);
    int64_t rows, cols;
    view_2d(t, &rows, &cols);
    size_t es = kb_dtype_size(t->dtype), rowb = (size_t)b[3] * es;
    if (len != (size_t)b[1] * rowb)
        return luaL_error(L, "set_block: %I bytes for a %I x %I block of %s", (lua_Integer)len, (lua_Integer)b[1],
                          (lua_Integer)b[3], kb_dtype_name(t->dtype));
    for (int64_t r = 0; r < b[1]; r++)
        memcpy(eptr(t, (b[0] + r) * cols + b[2]), src + (size_t)r * rowb, rowb);
    return 0;
}

/* ==== registration (see luaopen_kb_tensor) ==== */

const luaL_Reg ltensor_access_funcs[] = {{"clone", l_clone}, {NULL, NULL}};

const luaL_Reg ltensor_access_methods[] = {
    {"numel", m_numel},     {"dim", m_dim},       {"size", m_size},       {"nbytes", m_nbytes},
    {"element_size", m_element_size},             {"item", m_item},       {"get", m_get},
    {"set", m_set},         {"tolist", m_tolist}, {"to", m_to},           {"float", m_float},
    {"half", m_half},       {"bfloat16", m_bfloat16},                     {"int", m_int},
    {"short", m_short},     {"char", m_char},     {"byte", m_byte},       {"bool", m_bool},
    {"clone", l_clone},     {"contiguous", m_self}, {"cpu", m_self},      {"bytes", m_bytes},
    {"hash", m_hash},       {"block", m_block},   {"set_block", m_set_block},
    {"fill_", m_fill},      {"zero_", m_zero},    {"copy_", m_copy},      {NULL, NULL}};

const luaL_Reg ltensor_access_meta[] = {{"__newindex", t_newindex}, {"__len", t_len}, {NULL, NULL}};
