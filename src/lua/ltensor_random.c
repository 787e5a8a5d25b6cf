/* Random tensors of `kernbench.tensor_c`: the generator userdata
 * (new_generator, manual_seed, initial_seed, get_state, set_state) and
 * rand, randn.
 *
 * xoshiro256** (Blackman and Vigna), its 256-bit state seeded with four
 * successive outputs of splitmix64 started at the seed. */
#include "lua/ltensor_internal.h"

#include <math.h>
#include <string.h>

#define GEN_MT "kernbench.generator"

typedef struct lgen {
    uint64_t s[4];
    uint64_t seed;
} lgen;

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t xoshiro_next(uint64_t *s)
{
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

static void gen_seed(lgen *g, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) {
        uint64_t z = (x += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        g->s[i] = z ^ (z >> 31);
    }
    g->seed = seed;
}

static lgen *check_gen(lua_State *L, int idx) { return luaL_checkudata(L, idx, GEN_MT); }

static int l_new_generator(lua_State *L)
{
    lua_Integer seed = lua_isnoneornil(L, 1) ? 0 : ltensor_check_int(L, 1, "new_generator", "seed");
    lgen *g = lua_newuserdatauv(L, sizeof *g, 0);
    gen_seed(g, (uint64_t)seed);
    luaL_setmetatable(L, GEN_MT);
    return 1;
}

static int g_manual_seed(lua_State *L)
{
    gen_seed(check_gen(L, 1), (uint64_t)ltensor_check_int(L, 2, "manual_seed", "seed"));
    lua_settop(L, 1);
    return 1;
}

static int g_initial_seed(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)check_gen(L, 1)->seed);
    return 1;
}

/* The state as 32 bytes: s[0] .. s[3], each little-endian. */
static int g_get_state(lua_State *L)
{
    lgen *g = check_gen(L, 1);
    char b[32];
    for (int i = 0; i < 32; i++)
        b[i] = (char)(g->s[i / 8] >> (8 * (i % 8)));
    lua_pushlstring(L, b, sizeof b);
    return 1;
}

static int g_set_state(lua_State *L)
{
    lgen *g = check_gen(L, 1);
    size_t len;
    const unsigned char *b = (const unsigned char *)luaL_checklstring(L, 2, &len);
    if (len != 32)
        return luaL_error(L, "set_state: a state is 32 bytes, got %I", (lua_Integer)len);
    uint64_t s[4] = {0};
    for (int i = 0; i < 32; i++)
        s[i / 8] |= (uint64_t)b[i] << (8 * (i % 8));
    if (!(s[0] | s[1] | s[2] | s[3]))
        return luaL_error(L, "set_state: the all-zero state is not valid for xoshiro256**");
    memcpy(g->s, s, sizeof s);
    lua_settop(L, 1);
    return 1;
}

static int g_tostring(lua_State *L)
{
    lua_pushfstring(L, "Generator(seed=%I)", (lua_Integer)check_gen(L, 1)->seed);
    return 1;
}

/* Uniform [0, 1): one 64-bit output per element, its top bits scaled to the
 * dtype's significand (24 bits for f32, 11 for f16, 8 for bf16), so every
 * value is exact in the dtype and 1.0 never occurs. */
static void gen_uniform(lgen *g, const ltensor *t)
{
    uint64_t s[4];
    memcpy(s, g->s, sizeof s);
    int64_t n = t->numel;
    if (t->dtype == KB_F32) {
        float *p = t->data;
        for (int64_t i = 0; i < n; i++)
            p[i] = (float)(xoshiro_next(s) >> 40) * 0x1p-24f;
    } else if (t->dtype == KB_F16) {
        uint16_t tab[2048], *p = t->data;
        for (int k = 0; k < 2048; k++)
            tab[k] = kb_f32_to_f16((float)k * 0x1p-11f);
        for (int64_t i = 0; i < n; i++)
            p[i] = tab[xoshiro_next(s) >> 53];
    } else {
        uint16_t tab[256], *p = t->data;
        for (int k = 0; k < 256; k++)
            tab[k] = kb_f32_to_bf16((float)k * 0x1p-8f);
        for (int64_t i = 0; i < n; i++)
            p[i] = tab[xoshiro_next(s) >> 56];
    }
    memcpy(g->s, s, sizeof s);
}

/* Standard normal by Marsaglia's polar method: a pair of outputs gives
 * u, v uniform in [-1, 1) (53 bits: (x >> 11) * 2^-52 - 1); pairs with
 * q = u^2 + v^2 outside (0, 1) are rejected and the next pair is drawn;
 * otherwise elements 2j and 2j+1 are u*f and v*f with f = sqrt(-2 ln q / q),
 * rounded to the dtype. An odd count drops the last v*f. */
static void gen_normal(lgen *g, const ltensor *t)
{
    uint64_t s[4];
    memcpy(s, g->s, sizeof s);
    double buf[RUN]; /* RUN is even: pairs never straddle chunks */
    for (int64_t c = 0; c < t->numel; c += RUN) {
        int64_t m = t->numel - c < RUN ? t->numel - c : RUN;
        for (int64_t i = 0; i < m; i += 2) {
            double u, v, q;
            do {
                u = (double)(xoshiro_next(s) >> 11) * 0x1p-52 - 1.0;
                v = (double)(xoshiro_next(s) >> 11) * 0x1p-52 - 1.0;
                q = u * u + v * v;
            } while (q >= 1.0 || q == 0.0);
            double f = sqrt(-2.0 * log(q) / q);
            buf[i] = u * f;
            if (i + 1 < m)
                buf[i + 1] = v * f;
        }
        ltensor_store_run(t, c, 1, buf, m);
    }
    memcpy(g->s, s, sizeof s);
}

/* rand(shape..., [opts,] generator): the generator follows the shape and the
 * (optional, possibly nil) options, or is opts.generator. */
static int random_tensor(lua_State *L, bool normal)
{
    const char *fn = normal ? "randn" : "rand";
    int nd;
    int64_t shape[MAXD];
    int next = ltensor_read_shape(L, 1, fn, &nd, shape, false);
    kb_dtype dt = KB_F32;
    lgen *g = luaL_testudata(L, next, GEN_MT);
    if (!g) {
        dt = ltensor_opt_dtype(L, next, fn, KB_F32);
        g = luaL_testudata(L, next + 1, GEN_MT);
        if (!g && lua_type(L, next) == LUA_TTABLE) {
            lua_getfield(L, next, "generator");
            g = luaL_testudata(L, -1, GEN_MT);
            lua_pop(L, 1); /* still referenced by the options table */
        }
    }
    if (!g)
        return luaL_error(L, "%s: needs a generator (new_generator(seed)) after the shape and options", fn);
    if (!kb_dtype_is_float(dt))
        return luaL_error(L, "%s: dtype %s is not a floating-point type", fn, kb_dtype_name(dt));
    ltensor *t = ltensor_new(L, dt, nd, shape, false);
    if (normal)
        gen_normal(g, t);
    else
        gen_uniform(g, t);
    return 1;
}

static int l_rand(lua_State *L) { return random_tensor(L, false); }
static int l_randn(lua_State *L) { return random_tensor(L, true); }

/* ==== registration (see luaopen_kb_tensor) ==== */

const luaL_Reg ltensor_random_funcs[] = {
    {"rand", l_rand}, {"randn", l_randn}, {"new_generator", l_new_generator}, {NULL, NULL}};

static const luaL_Reg gen_methods[] = {{"manual_seed", g_manual_seed}, {"initial_seed", g_initial_seed},
                                       {"get_state", g_get_state},     {"set_state", g_set_state},
                                       {NULL, NULL}};

void ltensor_open_random(lua_State *L)
{
    luaL_newmetatable(L, GEN_MT);
    luaL_newlib(L, gen_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, g_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
}
