/* A floor to measure the Lua process benchmark against: the process bodies
 * of benches/perf/lua_processes.lua run on the same Lua 5.4 library with
 * nothing of a simulator around them.
 *
 *   lua_floor [--table-objects] [pairs] [sleepers] [rounds]
 *
 * Defaults are lua_processes.lua's: 100 pairs, 100 sleepers, 10000 rounds.
 * --table-objects makes each store a table whose put, get and sleep are C
 * closures over it (a method is then found in the object itself, not
 * through a metatable), the cheapest objects Lua offers for `o:m()`.
 *
 * What is kept: the bench's Lua functions, character for character except
 * that `s:sleep(1)` is a method of the same kind of object as the stores'
 * (`z:sleep(1)`); one coroutine per process; stores that are full userdata
 * whose methods are found through their metatable's `__index` table; every
 * put, get and sleep yields from C once and is resumed once, as in
 * kernbench, which follows SimPy's order (docs/decisions.md "SimPy's order
 * within one instant"), so the resume count is kernbench's (with a single
 * pair kernbench's shortcut, described there, saves one resume at the end).
 *
 * What is left out, which kernbench must do: simulated time and its event
 * queue (a ready process goes to the back of one FIFO), type and argument
 * checks, error context, stats, traces and deadlock reports. Resumption is
 * the cheapest Lua allows: `lua_yield` with no continuation, the value a get
 * returns passed as the resume's argument. Lua 5.4 still yields from C with
 * a `longjmp` and enters every resume through `setjmp` (ldo.c).
 *
 * Prints one line like lua_processes.lua's, wall_s being the wall time of
 * the resume loop (kernbench's stats time s:run() the same way). */
#define _POSIX_C_SOURCE 200809L

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One ready process: its coroutine, and the value a get it waits in
 * returns (has_value 0: a put or sleep, nothing returned). */
typedef struct ready_entry {
    lua_State *co;
    lua_Integer value;
    int has_value;
} ready_entry;

/* The run queue, a ring of ready processes (each process is in it at most
 * once, so `cap` entries suffice). Found through the Lua state's extra
 * space, not a global. */
typedef struct run_queue {
    ready_entry *ring;
    unsigned cap, head, tail;
} run_queue;

/* A store of capacity 1 as the bench uses it: at most one item, at most
 * one waiting getter. */
typedef struct floor_store {
    int has_item;
    lua_Integer item;
    lua_State *getter;
} floor_store;

static run_queue *queue_of(lua_State *L) { return *(run_queue **)lua_getextraspace(L); }

static void make_ready(run_queue *q, lua_State *co, int has_value, lua_Integer value)
{
    q->ring[q->tail++ & (q->cap - 1)] = (ready_entry){co, value, has_value};
}

static int put_to(lua_State *L, floor_store *s)
{
    lua_Integer v = lua_tointegerx(L, 2, NULL);
    run_queue *q = queue_of(L);
    if (s->getter) {
        make_ready(q, s->getter, 1, v);
        s->getter = NULL;
    } else if (s->has_item) {
        return luaL_error(L, "lua_floor: put to a full store (the floor models only the bench's pattern)");
    } else {
        s->has_item = 1;
        s->item = v;
    }
    make_ready(q, L, 0, 0);
    return lua_yield(L, 0);
}

static int get_from(lua_State *L, floor_store *s)
{
    if (s->has_item) {
        s->has_item = 0;
        make_ready(queue_of(L), L, 1, s->item);
    } else {
        s->getter = L;
    }
    return lua_yield(L, 0);
}

static int store_sleep(lua_State *L)
{
    (void)lua_tointegerx(L, 2, NULL);
    make_ready(queue_of(L), L, 0, 0);
    return lua_yield(L, 0);
}

/* Methods of a userdata store (self is argument 1) and of a table store
 * (--table-objects: the store is the closure's upvalue). */
static int ud_put(lua_State *L) { return put_to(L, lua_touserdata(L, 1)); }
static int ud_get(lua_State *L) { return get_from(L, lua_touserdata(L, 1)); }
static int up_put(lua_State *L) { return put_to(L, lua_touserdata(L, lua_upvalueindex(1))); }
static int up_get(lua_State *L) { return get_from(L, lua_touserdata(L, lua_upvalueindex(1))); }

static const luaL_Reg UD_METHODS[] = {{"put", ud_put}, {"get", ud_get}, {"sleep", store_sleep}, {NULL, NULL}};
static const luaL_Reg TABLE_METHODS[] = {{"put", up_put}, {"get", up_get}, {"sleep", store_sleep}, {NULL, NULL}};

static void push_store(lua_State *L, int table_objects)
{
    if (table_objects)
        lua_createtable(L, 0, 3);
    floor_store *s = lua_newuserdatauv(L, sizeof *s, 0);
    *s = (floor_store){0, 0, NULL};
    if (table_objects) {
        luaL_setfuncs(L, TABLE_METHODS, 1); /* pops the store: each method's upvalue */
        return;
    }
    luaL_setmetatable(L, "lua_floor.store");
}

/* The bench's process bodies; PROCESSES(ping, pong, z) returns the pinger,
 * the ponger and the sleeper of one pair. */
static const char PROCESSES[] =
    "local rounds = ...\n"
    "return function(ping, pong, z)\n"
    "  return function()\n"
    "    for i = 1, rounds do\n"
    "      ping:put(i)\n"
    "      pong:get()\n"
    "    end\n"
    "  end, function()\n"
    "    for _ = 1, rounds do\n"
    "      pong:put(ping:get())\n"
    "    end\n"
    "  end, function()\n"
    "    for _ = 1, rounds do z:sleep(1) end\n"
    "  end\n"
    "end\n";

static long arg_or(int argc, char **argv, int i, long dflt)
{
    if (argc <= i || !argv[i])
        return dflt;
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*end || v < 0 || v > 100000000) {
        fprintf(stderr, "lua_floor: argument '%s' must be an integer in 0 .. 1e8\n"
                        "usage: lua_floor [--table-objects] [pairs] [sleepers] [rounds]\n", argv[i]);
        exit(2);
    }
    return v;
}

/* Spawns the process made by the function at the top of L's stack (popped)
 * and anchors its coroutine in the table at index `anchor`. */
static void spawn(lua_State *L, run_queue *q, int anchor)
{
    lua_State *co = lua_newthread(L);
    lua_insert(L, -2);
    lua_xmove(L, co, 1);
    lua_rawseti(L, anchor, (lua_Integer)lua_rawlen(L, anchor) + 1);
    make_ready(q, co, 0, 0);
}

int main(int argc, char **argv)
{
    int table_objects = argc > 1 && strcmp(argv[1], "--table-objects") == 0;
    if (table_objects) { /* the sizes follow it */
        argv++;
        argc--;
    }
    long pairs = arg_or(argc, argv, 1, 100), sleepers = arg_or(argc, argv, 2, 100),
         rounds = arg_or(argc, argv, 3, 10000);
    lua_State *L = luaL_newstate();
    if (!L) {
        fprintf(stderr, "lua_floor: out of memory\n");
        return 1;
    }
    luaL_openlibs(L);
    run_queue q = {NULL, 1, 0, 0};
    while (q.cap < (unsigned)(2 * pairs + sleepers + 1))
        q.cap *= 2;
    q.ring = calloc(q.cap, sizeof *q.ring);
    if (!q.ring) {
        fprintf(stderr, "lua_floor: out of memory\n");
        return 1;
    }
    *(run_queue **)lua_getextraspace(L) = &q;

    luaL_newmetatable(L, "lua_floor.store");
    luaL_newlib(L, UD_METHODS);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);

    if (luaL_loadstring(L, PROCESSES) != LUA_OK) {
        fprintf(stderr, "lua_floor: %s\n", lua_tostring(L, -1));
        return 1;
    }
    lua_pushinteger(L, rounds);
    lua_call(L, 1, 1); /* the maker of one pair's processes */
    int maker = lua_gettop(L);
    lua_newtable(L); /* keeps every coroutine alive */
    int anchor = lua_gettop(L);
    for (long p = 0; p < pairs; p++) {
        lua_pushvalue(L, maker);
        push_store(L, table_objects);
        push_store(L, table_objects);
        lua_pushnil(L);
        lua_call(L, 3, 2);
        lua_insert(L, -2);
        spawn(L, &q, anchor); /* the pinger first, as the bench spawns it */
        spawn(L, &q, anchor);
    }
    for (long i = 0; i < sleepers; i++) {
        lua_pushvalue(L, maker);
        lua_pushnil(L);
        lua_pushnil(L);
        push_store(L, table_objects);
        lua_call(L, 3, 3);
        lua_replace(L, -3);
        lua_pop(L, 1);
        spawn(L, &q, anchor);
    }

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long long resumes = 0;
    while (q.head != q.tail) {
        ready_entry e = q.ring[q.head++ & (q.cap - 1)];
        if (e.has_value)
            lua_pushinteger(e.co, e.value);
        int nres, status = lua_resume(e.co, L, e.has_value, &nres);
        resumes++;
        if (status != LUA_OK && status != LUA_YIELD) {
            fprintf(stderr, "lua_floor: %s\n", lua_tostring(e.co, -1));
            return 1;
        }
        lua_pop(e.co, nres);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("lua_floor objects=%s pairs=%ld sleepers=%ld rounds=%ld resumes=%lld wall_s=%.3f resumes_per_s=%.0f\n",
           table_objects ? "table" : "userdata", pairs,
           sleepers, rounds, resumes, wall, wall > 0 ? (double)resumes / wall : 0.0);
    lua_close(L);
    free(q.ring);
    return 0;
}
