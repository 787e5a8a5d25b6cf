/* What reusing `tl` handles would cost: a handle made per call, as
 * src/lua/ltl_tensor.c makes them (a full userdata with a metatable and one
 * user value), against handles kept in a pool and reused, where the only way
 * Lua tells that a handle is unreachable is a `__gc` finalizer (which puts
 * it back in the pool; taking it out marks it for finalization again).
 *
 *   handle_pool [N]
 *
 * Each way runs a Lua loop `for i = 1, N do local h = make() end` (N =
 * 1 000 000 by default) in its own Lua state, the two alternating five
 * times; prints the median wall time per handle of each, the collector's
 * work included, and how many of the pooled run's handles were reused.
 * docs/decisions.md ("Lua process fast path") gives the conclusion. */
#define _POSIX_C_SOURCE 200809L

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HANDLE_BYTES 64 /* about an ltl_tensor */
#define RUNS 5

/* Upvalues of make: 1 the metatable, 2 the user value (the kernel's
 * context in ltl_tensor.c), 3 the pool (a sequence), 4 the reuse count
 * (a full userdata holding a long). */
static void new_handle(lua_State *L)
{
    memset(lua_newuserdatauv(L, HANDLE_BYTES, 1), 0, HANDLE_BYTES);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_setmetatable(L, -2);
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_setiuservalue(L, -2, 1);
}

static int make_plain(lua_State *L)
{
    new_handle(L);
    return 1;
}

static int make_pooled(lua_State *L)
{
    int pool = lua_upvalueindex(3);
    lua_Integer n = (lua_Integer)lua_rawlen(L, pool);
    if (n == 0) {
        new_handle(L);
        return 1;
    }
    lua_rawgeti(L, pool, n);
    lua_pushnil(L);
    lua_rawseti(L, pool, n);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_setmetatable(L, -2); /* marks it for finalization again */
    (*(long *)lua_touserdata(L, lua_upvalueindex(4)))++;
    return 1;
}

static int finalize_to_pool(lua_State *L)
{
    int pool = lua_upvalueindex(1);
    lua_pushvalue(L, 1);
    lua_rawseti(L, pool, (lua_Integer)lua_rawlen(L, pool) + 1);
    return 0;
}

/* One run: seconds for n handles; *reused gets the pooled run's count. */
static double run(int pooled, long n, long *reused)
{
    lua_State *L = luaL_newstate();
    if (!L) {
        fprintf(stderr, "handle_pool: out of memory\n");
        exit(1);
    }
    luaL_openlibs(L);
    lua_newtable(L); /* 1: metatable */
    lua_newtable(L); /* 2: user value */
    lua_newtable(L); /* 3: pool */
    long *count = lua_newuserdatauv(L, sizeof(long), 0); /* 4 */
    *count = 0;
    if (pooled) {
        lua_pushvalue(L, 3);
        lua_pushcclosure(L, finalize_to_pool, 1);
        lua_setfield(L, 1, "__gc");
    }
    for (int i = 1; i <= 4; i++)
        lua_pushvalue(L, i);
    lua_pushcclosure(L, pooled ? make_pooled : make_plain, 4);
    lua_setglobal(L, "make");
    char code[128];
    snprintf(code, sizeof code, "local make = make for i = 1, %ld do local h = make() end", n);
    if (luaL_loadstring(L, code) != LUA_OK) {
        fprintf(stderr, "handle_pool: %s\n", lua_tostring(L, -1));
        exit(1);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    lua_call(L, 0, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *reused = *count;
    lua_close(L);
    return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long n = 1000000;
    if (argc > 1) {
        char *end;
        n = strtol(argv[1], &end, 10);
        if (*end || n < 1 || n > 1000000000) {
            fprintf(stderr, "handle_pool: N must be an integer in 1 .. 1e9 (got '%s')\nusage: handle_pool [N]\n",
                    argv[1]);
            return 2;
        }
    }
    double plain[RUNS], pooled[RUNS];
    long reused = 0, unused;
    for (int r = 0; r < RUNS; r++) {
        plain[r] = run(0, n, &unused);
        pooled[r] = run(1, n, &reused);
    }
    qsort(plain, RUNS, sizeof *plain, by_value);
    qsort(pooled, RUNS, sizeof *pooled, by_value);
    double a = plain[RUNS / 2] * 1e9 / (double)n, b = pooled[RUNS / 2] * 1e9 / (double)n;
    printf("handle_pool n=%ld made_per_call_ns=%.1f pooled_ns=%.1f pooled_over_made=%.2f reused=%ld\n", n, a, b,
           a > 0 ? b / a : 0.0, reused);
    return 0;
}
