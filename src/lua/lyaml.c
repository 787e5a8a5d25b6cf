/* `kernbench.yaml_c`: a YAML file as plain Lua data, read by the topology's
 * position-keeping reader (src/topo/ydoc.h) so configuration files other
 * than topologies (ccl.yaml) get the same limits and can name
 * file:line:col and the key path in their errors.
 *
 *   doc, err = yaml_c.load(path)
 *   doc.value      -- the data: maps are tables with string keys, lists arrays
 *   doc.marks      -- [key path] = "file:line:col" of every value, "" the root
 *   doc.key_marks  -- [key path] = "file:line:col" of every map key
 *   yaml_c.null    -- a null item of a list (a null map value is left out)
 *
 * Key paths are ydoc's: "algorithms.lrab.n_elem", "list[1].x" (from 0).
 * Scalars follow the YAML 1.2 core schema, typed only when unquoted:
 * integers (decimal, 0x hex, 0o octal; beyond 64 bits a float), floats
 * (1.5, 1e3, .inf, .nan), true/false (also True, TRUE ...), null (~, null,
 * empty); everything else, and every quoted scalar, is a string. */
#include "lua/lyaml.h"

#include "luasim/lbind.h"
#include "topo/ydoc.h"

#include <lauxlib.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LYAML_DOC_MT "kernbench.yaml_c.doc"
#define DIGITS "0123456789"

/* The parsed document while it is turned into Lua data: a userdata owns
 * it, so a Lua error (out of memory) part way cannot leak it. */
typedef struct doc_box {
    kb_ydoc *doc;
} doc_box;

static int doc_gc(lua_State *L)
{
    doc_box *b = luaL_checkudata(L, 1, LYAML_DOC_MT);
    kb_ydoc_free(b->doc);
    b->doc = NULL;
    return 0;
}

static bool one_of(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (strcmp(s, *words) == 0)
            return true;
    return false;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, the core schema's
 * decimal integers and floats. */
static bool decimal_number(const char *s)
{
    const char *p = s + (*s == '+' || *s == '-');
    size_t whole = strspn(p, DIGITS), frac = 0;
    p += whole;
    if (*p == '.') {
        frac = strspn(++p, DIGITS);
        p += frac;
    }
    if (whole == 0 && frac == 0)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        p += *p == '+' || *p == '-';
        size_t e = strspn(p, DIGITS);
        if (e == 0)
            return false;
        p += e;
    }
    return *p == '\0';
}

/* 0x[0-9a-fA-F]+ or 0o[0-7]+: an integer, or a float beyond 64 bits. */
static bool push_radix(lua_State *L, const char *s)
{
    unsigned base = s[0] == '0' && s[1] == 'x' ? 16 : s[0] == '0' && s[1] == 'o' ? 8 : 0;
    const char *digits = base == 16 ? DIGITS "abcdefABCDEF" : "01234567";
    if (!base || !s[2] || s[2 + strspn(s + 2, digits)] != '\0')
        return false;
    uint64_t v = 0;
    double d = 0;
    bool fits = true;
    for (const char *p = s + 2; *p; p++) {
        unsigned k = *p <= '9' ? (unsigned)(*p - '0') : (unsigned)((*p | 0x20) - 'a' + 10);
        if (v > (UINT64_MAX - k) / base || v * base + k > (uint64_t)INT64_MAX)
            fits = false;
        v = v * base + k;
        d = d * base + k;
    }
    if (fits)
        lua_pushinteger(L, (lua_Integer)v);
    else
        lua_pushnumber(L, (lua_Number)d);
    return true;
}

/* Pushes a scalar's value; false (nothing pushed) for a null. */
static bool push_scalar(lua_State *L, const kb_ynode *n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", NULL};
    static const char *const falses[] = {"false", "False", "FALSE", NULL};
    static const char *const infs[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
    static const char *const neg_infs[] = {"-.inf", "-.Inf", "-.INF", NULL};
    static const char *const nans[] = {".nan", ".NaN", ".NAN", NULL};
    const char *s = n->text;
    if (!n->plain)
        lua_pushstring(L, s);
    else if (one_of(s, nulls))
        return false;
    else if (one_of(s, trues) || one_of(s, falses))
        lua_pushboolean(L, one_of(s, trues));
    else if (one_of(s, infs) || one_of(s, neg_infs))
        lua_pushnumber(L, one_of(s, infs) ? (lua_Number)HUGE_VAL : -(lua_Number)HUGE_VAL);
    else if (one_of(s, nans))
        lua_pushnumber(L, (lua_Number)NAN);
    else if (push_radix(L, s))
        return true;
    /* Lua reads the grammar's numbers as YAML does: a point or an exponent
     * makes a float, a decimal integer beyond 64 bits becomes one */
    else if (!decimal_number(s) || lua_stringtonumber(L, s) == 0)
        lua_pushstring(L, s);
    return true;
}

static void set_mark(lua_State *L, int marks, const char *path, const kb_ymark *m)
{
    lua_pushfstring(L, "%s:%d:%d", m->src, m->line, m->col);
    lua_setfield(L, marks, path);
}

/* Pushes node n as Lua data, recording its marks (and its entries' key
 * marks); false (nothing pushed) for a null scalar. The recursion is as
 * deep as the document, which ydoc limits to KB_YDOC_MAX_DEPTH. */
static bool push_node(lua_State *L, const kb_ynode *n, int marks, int key_marks)
{
    luaL_checkstack(L, 4, "YAML document nested too deep");
    set_mark(L, marks, n->path, &n->mark);
    switch (n->type) {
    case KB_Y_SCALAR:
        return push_scalar(L, n);
    case KB_Y_MAP:
        lua_createtable(L, 0, n->n > INT32_MAX ? 0 : (int)n->n);
        for (size_t i = 0; i < n->n; i++) {
            const kb_yentry *e = &n->items[i];
            set_mark(L, key_marks, e->val->path, &e->key_mark);
            if (push_node(L, e->val, marks, key_marks))
                lua_setfield(L, -2, e->key);
        }
        return true;
    case KB_Y_SEQ:
        lua_createtable(L, n->n > INT32_MAX ? 0 : (int)n->n, 0);
        for (size_t i = 0; i < n->n; i++) {
            if (!push_node(L, n->items[i].val, marks, key_marks))
                lua_pushlightuserdata(L, NULL); /* yaml_c.null: a hole would end the list */
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        return true;
    }
    return false;
}

/* yaml_c.load(path) -> {value, marks, key_marks} | nil, "file:line:col: message" */
static int l_load(lua_State *L)
{
    const char *path = lbind_checkstr(L, 1, "yaml_c.load", "path");
    doc_box *box = lua_newuserdatauv(L, sizeof *box, 0);
    box->doc = NULL;
    luaL_setmetatable(L, LYAML_DOC_MT);
    char *err = NULL;
    box->doc = kb_ydoc_load_file(path, &err);
    if (!box->doc) {
        lua_pushnil(L);
        lua_pushstring(L, err ? err : "cannot read YAML file");
        free(err);
        /* ydoc's messages are written for topologies */
        luaL_gsub(L, lua_tostring(L, -1), "topology file", "YAML file");
        lua_remove(L, -2);
        return 2;
    }
    lua_createtable(L, 0, 3);
    int result = lua_gettop(L);
    lua_newtable(L);
    int marks = lua_gettop(L);
    lua_newtable(L);
    int key_marks = lua_gettop(L);
    if (push_node(L, kb_ydoc_root(box->doc), marks, key_marks))
        lua_setfield(L, result, "value");
    lua_setfield(L, result, "key_marks");
    lua_setfield(L, result, "marks");
    kb_ydoc_free(box->doc); /* now, rather than at the next collection */
    box->doc = NULL;
    return 1;
}

int luaopen_kb_yaml(lua_State *L)
{
    luaL_newmetatable(L, LYAML_DOC_MT);
    lua_pushcfunction(L, doc_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    static const luaL_Reg lib[] = {{"load", l_load}, {NULL, NULL}};
    luaL_newlib(L, lib);
    lua_pushlightuserdata(L, NULL);
    lua_setfield(L, -2, "null");
    return 1;
}
