/* Shape operations of `kernbench.tensor_c`: the views reshape, view and
 * flatten (shared data), and the copies narrow, transpose, T and cat. */
#include "lua/ltensor_internal.h"

#include <string.h>

/* ==== views ==== */

/* reshape(t, shape...) / view: same elements, shared data; one size may be -1. */
static int l_reshape(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int nd, infer = -1;
    int64_t shape[MAXD];
    ltensor_read_shape(L, 2, "reshape", &nd, shape, true);
    int64_t known = 1;
    for (int d = 0; d < nd; d++) {
        if (shape[d] == -1) {
            if (infer >= 0)
                return luaL_error(L, "reshape: only one size may be -1, got %s", ltensor_shape_str(L, nd, shape));
            infer = d;
        } else {
            known *= shape[d];
        }
    }
    if (infer >= 0 && known != 0 && t->numel % known == 0)
        shape[infer] = t->numel / known;
    if ((infer >= 0 && shape[infer] == -1) || ltensor_prod(shape, 0, nd) != t->numel) {
        const char *want = ltensor_shape_str(L, nd, shape), *have = ltensor_tshape(L, t);
        return luaL_error(L, "reshape: shape %s is invalid for a tensor of %I elements (shape %s)", want,
                          (lua_Integer)t->numel, have);
    }
    ltensor_push_view(L, 1, t, 0, nd, shape);
    return 1;
}

static int m_flatten(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    ltensor_push_view(L, 1, t, 0, 1, &t->numel);
    return 1;
}

/* ==== slicing, transposition, concatenation (all copies) ==== */

/* narrow(t, dim, start, length): the rows start .. start+length-1 of dim. */
static int l_narrow(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int dim = ltensor_check_dim(L, "narrow", ltensor_check_int(L, 2, "narrow", "dim"), t->ndim);
    lua_Integer start = ltensor_check_int(L, 3, "narrow", "start"), len = ltensor_check_int(L, 4, "narrow", "length");
    int64_t size = t->shape[dim];
    if (start < 0 && start >= -size)
        start += size;
    if (start < 0 || len < 0 || start > size || len > size - start)
        return luaL_error(L, "narrow: start %I and length %I do not fit dimension %d of size %I (shape %s)",
                          ltensor_check_int(L, 3, "narrow", "start"), len, dim, (lua_Integer)size,
                          ltensor_tshape(L, t));
    int64_t shape[MAXD];
    memcpy(shape, t->shape, sizeof shape);
    shape[dim] = len;
    ltensor *out = ltensor_new(L, t->dtype, t->ndim, shape, false);
    int64_t outer = ltensor_prod(t->shape, 0, dim), inner = ltensor_prod(t->shape, dim + 1, t->ndim);
    size_t chunk = (size_t)(len * inner * esize(t->dtype));
    for (int64_t o = 0; o < outer; o++)
        memcpy(eptr(out, o * len * inner), eptr(t, (o * size + start) * inner), chunk);
    return 1;
}

static int l_transpose(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    int d0 = ltensor_check_dim(L, "transpose", ltensor_check_int(L, 2, "transpose", "dim0"), t->ndim);
    int d1 = ltensor_check_dim(L, "transpose", ltensor_check_int(L, 3, "transpose", "dim1"), t->ndim);
    ltensor_push_transposed(L, t, d0, d1);
    return 1;
}

/* t:T(): the transpose of a 2-D tensor; 0-d and 1-D tensors are copied. */
static int m_T(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    if (t->ndim > 2)
        return luaL_error(L, "T: expects a tensor of at most 2 dimensions, got shape %s (use transpose(d0, d1))",
                          ltensor_tshape(L, t));
    if (t->ndim < 2)
        ltensor_push_copy(L, t, t->dtype);
    else
        ltensor_push_transposed(L, t, 0, 1);
    return 1;
}

static const ltensor *cat_item(lua_State *L, lua_Integer i)
{
    lua_geti(L, 1, i);
    const ltensor *t = ltensor_test(L, -1);
    if (!t)
        luaL_error(L, "cat: list[%I] is a %s, expected a tensor", i, luaL_typename(L, -1));
    lua_pop(L, 1); /* the list keeps it alive */
    return t;
}

/* cat(list, dim=0): sizes must match except along dim; dtypes promote. */
static int l_cat(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer cnt = luaL_len(L, 1);
    if (cnt == 0)
        return luaL_error(L, "cat: expected a non-empty list of tensors");
    const ltensor *first = cat_item(L, 1);
    if (first->ndim == 0)
        return luaL_error(L, "cat: list[1] is a 0-d tensor and cannot be concatenated");
    int dim =
        ltensor_check_dim(L, "cat", lua_isnoneornil(L, 2) ? 0 : ltensor_check_int(L, 2, "cat", "dim"), first->ndim);
    int64_t shape[MAXD];
    memcpy(shape, first->shape, sizeof shape);
    shape[dim] = 0;
    kb_dtype dt = first->dtype;
    for (lua_Integer i = 1; i <= cnt; i++) {
        const ltensor *t = cat_item(L, i);
        bool ok = t->ndim == first->ndim;
        for (int d = 0; ok && d < t->ndim; d++)
            ok = d == dim || t->shape[d] == first->shape[d];
        if (!ok) {
            const char *s1 = ltensor_tshape(L, first), *si = ltensor_tshape(L, t);
            return luaL_error(L, "cat: list[1] has shape %s and list[%I] has shape %s; they may differ only in "
                                 "dimension %d", s1, i, si, dim);
        }
        shape[dim] += t->shape[dim];
        dt = ltensor_promote(dt, t->dtype);
    }
    ltensor *out = ltensor_new(L, dt, first->ndim, shape, false);
    int64_t outer = ltensor_prod(shape, 0, dim), inner = ltensor_prod(shape, dim + 1, first->ndim), col = 0;
    double buf[RUN];
    for (lua_Integer i = 1; i <= cnt; i++) {
        const ltensor *t = cat_item(L, i);
        int64_t run = t->shape[dim] * inner;
        for (int64_t o = 0; o < outer; o++) {
            int64_t src = o * run, dst = (o * shape[dim] + col) * inner;
            if (t->dtype == dt) {
                memcpy(eptr(out, dst), eptr(t, src), (size_t)(run * esize(dt)));
                continue;
            }
            for (int64_t s = 0; s < run; s += RUN) {
                int64_t m = run - s < RUN ? run - s : RUN;
                ltensor_load_run(t, src + s, 1, buf, m);
                ltensor_store_run(out, dst + s, 1, buf, m);
            }
        }
        col += t->shape[dim];
    }
    return 1;
}

/* ==== registration (see luaopen_kb_tensor) ==== */

const luaL_Reg ltensor_shape_funcs[] = {
    {"reshape", l_reshape}, {"narrow", l_narrow}, {"transpose", l_transpose}, {"cat", l_cat}, {NULL, NULL}};

const luaL_Reg ltensor_shape_methods[] = {{"reshape", l_reshape}, {"view", l_reshape},         {"flatten", m_flatten},
                                          {"narrow", l_narrow},   {"transpose", l_transpose}, {"T", m_T},
                                          {NULL, NULL}};
