/* Reductions of `kernbench.tensor_c`: sum, mean, max and min over all
 * elements or along a dimension (max/min with their indices), and softmax. */
#include "lua/ltensor_internal.h"

#include <math.h>

typedef enum red { R_SUM, R_MEAN, R_MAX, R_MIN } red;

/* Reduces the n elements base, base+stride, ...; *arg: index of the max/min
 * (the first one; a NaN wins and propagates, as in torch). */
static double reduce_lane(const ltensor *t, int64_t base, int64_t stride, int64_t n, red r, int64_t *arg)
{
    double buf[RUN], acc = r == R_MAX ? -INFINITY : r == R_MIN ? INFINITY : 0.0;
    int64_t best = 0;
    for (int64_t s = 0; s < n; s += RUN) {
        int64_t m = n - s < RUN ? n - s : RUN;
        ltensor_load_run(t, base + s * stride, stride, buf, m);
        for (int64_t i = 0; i < m; i++) {
            double v = buf[i];
            if (r == R_SUM || r == R_MEAN)
                acc += v;
            else if (!isnan(acc) && (isnan(v) || (r == R_MAX ? v > acc : v < acc))) {
                acc = v;
                best = s + i;
            }
        }
    }
    if (r == R_MEAN)
        acc /= (double)n;
    if (arg)
        *arg = best;
    return acc;
}

/* (t) or (t, dim[, keepdim]) or (t, {dim=, keepdim=}). */
static bool red_args(lua_State *L, const char *fn, const ltensor *t, int *dim, bool *keepdim)
{
    bool has = false;
    *keepdim = false;
    if (lua_type(L, 2) == LUA_TTABLE) {
        if (lua_getfield(L, 2, "dim") != LUA_TNIL) {
            has = true;
            *dim = ltensor_check_dim(L, fn, ltensor_check_int(L, -1, fn, "dim"), t->ndim);
        }
        lua_getfield(L, 2, "keepdim");
        *keepdim = lua_toboolean(L, -1);
        lua_pop(L, 2);
        return has;
    }
    if (!lua_isnoneornil(L, 2)) {
        has = true;
        *dim = ltensor_check_dim(L, fn, ltensor_check_int(L, 2, fn, "dim"), t->ndim);
    }
    *keepdim = lua_toboolean(L, 3);
    return has;
}

/* Without dim: a Lua number (integer for integer and bool tensors, except
 * mean). With dim: a tensor (max/min also return the indices, as i32). */
static int reduce(lua_State *L, red r, const char *fn)
{
    const ltensor *t = ltensor_check(L, 1);
    int dim = 0;
    bool keepdim, has_dim = red_args(L, fn, t, &dim, &keepdim);
    bool arg = r == R_MAX || r == R_MIN;
    kb_dtype dt = t->dtype;
    if (r == R_SUM && !kb_dtype_is_float(dt))
        dt = KB_I32;
    if (r == R_MEAN && !kb_dtype_is_float(dt))
        return luaL_error(L, "mean: needs a floating-point tensor, got %s (convert with :float())",
                          kb_dtype_name(dt));
    int64_t outer = 1, n = t->numel, inner = 1;
    if (has_dim) {
        outer = ltensor_prod(t->shape, 0, dim);
        n = t->shape[dim];
        inner = ltensor_prod(t->shape, dim + 1, t->ndim);
    }
    if (arg && n == 0 && outer * inner > 0)
        return luaL_error(L, "%s: cannot reduce over %s elements (shape %s)", fn, has_dim ? "a dimension of 0" : "0",
                          ltensor_tshape(L, t));
    if (!has_dim) {
        double v = reduce_lane(t, 0, 1, n, r, NULL);
        if (dt == KB_BOOL)
            lua_pushboolean(L, v != 0);
        else if (r == R_MEAN || kb_dtype_is_float(dt))
            lua_pushnumber(L, v);
        else
            lua_pushinteger(L, (lua_Integer)v);
        return 1;
    }
    int ond = 0;
    int64_t oshape[MAXD];
    for (int d = 0; d < t->ndim; d++)
        if (d != dim)
            oshape[ond++] = t->shape[d];
        else if (keepdim)
            oshape[ond++] = 1;
    const ltensor *vals = ltensor_new(L, dt, ond, oshape, false);
    const ltensor *idx = arg ? ltensor_new(L, KB_I32, ond, oshape, false) : NULL;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t best;
            double v = reduce_lane(t, o * n * inner + i, inner, n, r, &best);
            kb_dtype_store(dt, eptr(vals, o * inner + i), v);
            if (idx)
                kb_dtype_store(KB_I32, eptr(idx, o * inner + i), (double)best);
        }
    return arg ? 2 : 1;
}

static int l_sum(lua_State *L) { return reduce(L, R_SUM, "sum"); }
static int l_mean(lua_State *L) { return reduce(L, R_MEAN, "mean"); }
static int l_max(lua_State *L) { return reduce(L, R_MAX, "max"); }
static int l_min(lua_State *L) { return reduce(L, R_MIN, "min"); }

/* softmax(t, dim): exp(x - max) / sum, per lane along dim, in double. */
static int l_softmax(lua_State *L)
{
    const ltensor *t = ltensor_check(L, 1);
    if (lua_isnoneornil(L, 2))
        return luaL_error(L, "softmax: dim is required");
    int dim = ltensor_check_dim(L, "softmax", ltensor_check_int(L, 2, "softmax", "dim"), t->ndim);
    ltensor *out = ltensor_new(L, kb_dtype_is_float(t->dtype) ? t->dtype : KB_F32, t->ndim, t->shape, false);
    int64_t outer = ltensor_prod(t->shape, 0, dim), n = t->shape[dim], inner = ltensor_prod(t->shape, dim + 1, t->ndim);
    double buf[RUN];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i;
            double m = reduce_lane(t, base, inner, n, R_MAX, NULL), sum = 0;
            for (int64_t s = 0; s < n; s += RUN) {
                int64_t c = n - s < RUN ? n - s : RUN;
                ltensor_load_run(t, base + s * inner, inner, buf, c);
                for (int64_t j = 0; j < c; j++)
                    sum += exp(buf[j] - m);
            }
            for (int64_t s = 0; s < n; s += RUN) {
                int64_t c = n - s < RUN ? n - s : RUN;
                ltensor_load_run(t, base + s * inner, inner, buf, c);
                for (int64_t j = 0; j < c; j++)
                    buf[j] = exp(buf[j] - m) / sum;
                ltensor_store_run(out, base + s * inner, inner, buf, c);
            }
        }
    return 1;
}

/* ==== registration (see luaopen_kb_tensor) ==== */

const luaL_Reg ltensor_reduce_funcs[] = {
    {"sum", l_sum}, {"mean", l_mean}, {"max", l_max}, {"min", l_min}, {"softmax", l_softmax}, {NULL, NULL}};
