/* The typed readers of a topology file: numbers, integers, strings, maps and
 * lists under a key, and component blocks `{ kind, impl, attrs }` checked
 * against the registry. Every builder (build_system.c, build_graph.c) reads
 * through them, so range errors read alike and every value read is recorded
 * for --dump-config (config.c). topo.c drives the builders. */
#include "topo/build_internal.h"

#include "core/util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool failed(const kb_builder *b) { return b->err != NULL; }

/* v outside lo..hi (lo itself excluded when lo_open). */
static bool out_of_range(double v, double lo, bool lo_open, double hi)
{
    return (lo_open ? !(v > lo) : v < lo) || v > hi;
}

/* The message for a number at n outside its range (unit: NULL or e.g. "ns"). */
static char *range_error(const kb_ynode *n, double v, double lo, bool lo_open, double hi, const char *unit)
{
    const char *sep = unit ? " " : "";
    unit = unit ? unit : "";
    if (hi < INFINITY)
        return kb_yerr(n, "%g is out of range (%s %.15g .. %.15g%s%s)", v, lo_open ? ">" : ">=", lo, hi, sep, unit);
    return kb_yerr(n, "%g is out of range (must be %s %.15g%s%s)", v, lo_open ? ">" : ">=", lo, sep, unit);
}

static double read_number(kb_builder *b, kb_ynode *map, const char *key, double dflt, double lo, bool lo_open,
                          double hi, const char *unit);

double kb_max_bw_gbs(const kb_builder *b) { return (double)b->t->p.flit_bytes * 1000.0; }

/* The message for a bandwidth outside KB_TOPO_MIN_BW_GBS .. kb_max_bw_gbs. */
static char *bw_error(const kb_builder *b, const kb_ynode *n, double v, bool zero_ok)
{
    return kb_yerr(n, "%g is out of range (%s%.15g .. %.15g GB/s: at most flit_bytes x 1000, so that a "
                      "%d-byte flit takes at least 1 ps)", v, zero_ok ? "0, or " : "", KB_TOPO_MIN_BW_GBS,
                   kb_max_bw_gbs(b), b->t->p.flit_bytes);
}

static bool bw_ok(const kb_builder *b, double v, bool zero_ok)
{
    return (zero_ok && v == 0) || (v >= KB_TOPO_MIN_BW_GBS && v <= kb_max_bw_gbs(b));
}

double kb_rd_bw(kb_builder *b, kb_ynode *map, const char *key, double dflt, bool zero_ok)
{
    if (failed(b))
        return dflt;
    kb_ynode *n = kb_ymap_get(map, key);
    if (!n) {
        char text[40];
        kb_cfg_num_text(dflt, text, sizeof text);
        kb_cfg_note(b, map, key, NULL, text);
        if (!bw_ok(b, dflt, zero_ok)) /* a default beyond a small flit's limit */
            b->err = kb_yerr_key(map, key, "the default %g GB/s is out of range (%s%.15g .. %.15g GB/s: at "
                                 "most flit_bytes x 1000, so that a %d-byte flit takes at least 1 ps); "
                                 "give it", dflt, zero_ok ? "0, or " : "", KB_TOPO_MIN_BW_GBS,
                                 kb_max_bw_gbs(b), b->t->p.flit_bytes);
        return dflt;
    }
    double v;
    if (!kb_yas_number(n, &v, &b->err))
        return dflt;
    kb_cfg_note(b, map, key, n, NULL);
    if (!bw_ok(b, v, zero_ok)) {
        b->err = bw_error(b, n, v, zero_ok);
        return dflt;
    }
    return v;
}

double kb_rd_mm(kb_builder *b, kb_ynode *map, const char *key, double dflt)
{
    return read_number(b, map, key, dflt, 0, false, KB_TOPO_MAX_MM, "mm");
}

static double read_number(kb_builder *b, kb_ynode *map, const char *key, double dflt, double lo, bool lo_open,
                          double hi, const char *unit)
{
    if (failed(b))
        return dflt;
    kb_ynode *n = kb_ymap_get(map, key);
    if (!n) {
        /* a default outside the range is a "not set" marker, not a value */
        if (!out_of_range(dflt, lo, lo_open, hi)) {
            char text[40];
            kb_cfg_num_text(dflt, text, sizeof text);
            kb_cfg_note(b, map, key, NULL, text);
        }
        return dflt;
    }
    double v;
    if (!kb_yas_number(n, &v, &b->err))
        return dflt;
    kb_cfg_note(b, map, key, n, NULL);
    if (out_of_range(v, lo, lo_open, hi)) {
        b->err = range_error(n, v, lo, lo_open, hi, unit);
        return dflt;
    }
    return v;
}

double kb_rd_number(kb_builder *b, kb_ynode *map, const char *key, double dflt, double lo,
                    bool lo_open, double hi)
{
    return read_number(b, map, key, dflt, lo, lo_open, hi, NULL);
}

int kb_rd_int(kb_builder *b, kb_ynode *map, const char *key, int dflt, int lo, int hi)
{
    if (failed(b))
        return dflt;
    kb_ynode *n = kb_ymap_get(map, key);
    if (!n) {
        if (dflt >= lo && dflt <= hi) { /* else a "not set" marker */
            char text[24];
            snprintf(text, sizeof text, "%d", dflt);
            kb_cfg_note(b, map, key, NULL, text);
        }
        return dflt;
    }
    int64_t v;
    if (!kb_yas_int(n, &v, &b->err))
        return dflt;
    kb_cfg_note(b, map, key, n, NULL);
    if (v < lo || v > hi) {
        b->err = kb_yerr(n, "%lld is out of range (%d .. %d)", (long long)v, lo, hi);
        return dflt;
    }
    return (int)v;
}

const char *kb_rd_string(kb_builder *b, kb_ynode *map, const char *key, const char *dflt)
{
    if (failed(b))
        return dflt;
    kb_ynode *n = kb_ymap_get(map, key);
    const char *s = dflt;
    if (n && !kb_yas_string(n, &s, &b->err))
        return dflt;
    kb_cfg_note(b, map, key, n, n ? NULL : dflt);
    return s;
}

/* The id rule (docs/topology.md "Ids"): a segment of a node id is one or
 * more ASCII letters, digits, '_' and '-'; a graph node's id is segments
 * joined by single dots. The first character that breaks it, or NULL. */
static bool id_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static const char *id_problem(const char *s, bool dotted)
{
    if (!s[0])
        return "it is empty";
    for (size_t i = 0; s[i]; i++) {
        if (id_char(s[i]))
            continue;
        if (dotted && s[i] == '.' && i > 0 && s[i + 1] && s[i + 1] != '.')
            continue;
        if (s[i] == '.')
            return dotted ? "it has an empty segment between dots" : "it contains '.'";
        return "it contains a character other than A-Z, a-z, 0-9, '_' and '-'";
    }
    return NULL;
}

bool kb_id_check(kb_builder *b, const kb_ynode *at, const char *what, const char *id, bool dotted)
{
    if (b->err)
        return false;
    const char *why = id_problem(id, dotted);
    if (!why)
        return true;
    b->err = kb_yerr(at, "%s '%s' is not a valid id: %s (%s of letters, digits, '_' and '-'%s; it becomes part of "
                     "node ids such as sip0.io0.pcie_ep)", what, id, why, dotted ? "segments" : "one segment",
                     dotted ? ", joined by single dots" : "");
    return false;
}

const char *kb_rd_id(kb_builder *b, kb_ynode *map, const char *key, const char *dflt, const char *what, bool dotted)
{
    const char *s = kb_rd_string(b, map, key, dflt);
    if (b->err || !s)
        return s;
    kb_ynode *n = kb_ymap_get(map, key);
    kb_id_check(b, n ? n : map, what, s, dotted);
    return s;
}

/* The node at map.key if it is of the kind `as` checks; NULL when absent
 * or on error. */
static kb_ynode *read_node(kb_builder *b, kb_ynode *map, const char *key, bool (*as)(const kb_ynode *, char **))
{
    if (failed(b))
        return NULL;
    kb_ynode *n = kb_ymap_get(map, key);
    return n && as(n, &b->err) ? n : NULL;
}

kb_ynode *kb_rd_map(kb_builder *b, kb_ynode *map, const char *key)
{
    kb_ynode *n = read_node(b, map, key, kb_yas_map);
    if (n || failed(b))
        return n;
    n = kb_ynode_absent(map, key);
    b->absent = kb_xrealloc(b->absent, (b->nabsent + 1) * sizeof *b->absent);
    b->absent[b->nabsent++] = n;
    return n;
}

kb_ynode *kb_rd_seq(kb_builder *b, kb_ynode *map, const char *key) { return read_node(b, map, key, kb_yas_seq); }

static bool is_pow2(double v) { return v >= 1 && v == floor(v) && ((uint64_t)v & ((uint64_t)v - 1)) == 0; }

int kb_rd_flit(kb_builder *b, kb_ynode *system)
{
    int f = kb_rd_int(b, system, "flit_bytes", 256, INT_MIN, INT_MAX);
    if (!failed(b) && (f < KB_TOPO_MIN_FLIT || f > KB_TOPO_MAX_FLIT || !is_pow2(f)))
        b->err = kb_yerr(kb_ymap_get(system, "flit_bytes"), "%d is not allowed (a power of two, %d .. %d "
                         "bytes: no element is split across flits and an aligned flit never straddles an "
                         "HBM burst or a page)", f, KB_TOPO_MIN_FLIT, KB_TOPO_MAX_FLIT);
    return failed(b) ? 256 : f;
}

/* Bytes per unit of a size ("bytes", "KiB", "MiB", "GiB"); 0: not a size. */
static double size_unit_bytes(const char *unit)
{
    static const struct { const char *unit; double bytes; } units[] = {
        {"bytes", 1}, {"KiB", 1024}, {"MiB", 1048576}, {"GiB", 1073741824}};
    for (size_t i = 0; unit && i < sizeof units / sizeof units[0]; i++)
        if (strcmp(unit, units[i].unit) == 0)
            return units[i].bytes;
    return 0;
}

bool kb_size_check(kb_builder *b, const kb_ynode *at, double v, const char *unit)
{
    double per = size_unit_bytes(unit);
    if (b->err || per == 0)
        return !b->err;
    /* v x a power of two is exact, so the test is too (v is range-checked). */
    double bytes = v * per;
    if (bytes == floor(bytes))
        return true;
    char vt[40], lo[40], hi[40]; /* each the shortest text that reads back the same */
    kb_cfg_num_text(v, vt, sizeof vt);
    kb_cfg_num_text(floor(bytes) / per, lo, sizeof lo);
    kb_cfg_num_text(ceil(bytes) / per, hi, sizeof hi);
    if (floor(bytes) == 0)
        b->err = kb_yerr(at, "%s %s is %.6g bytes, less than one: a size is a whole number of bytes "
                         "(the smallest above 0 is %s %s)", vt, unit, bytes, hi, unit);
    else
        b->err = kb_yerr(at, "%s %s is %.15g bytes, not a whole number: a size is a whole number of bytes "
                         "(%s or %s %s are the nearest)", vt, unit, bytes, lo, hi, unit);
    return false;
}

static void read_attr(kb_builder *b, kb_ynode *n, const kb_attr_def *a, double *out)
{
    double v;
    if (a->type == KB_ATTR_BOOL) {
        bool bv;
        if (!kb_yas_bool(n, &bv, &b->err))
            return;
        *out = bv;
        return;
    }
    if (a->type == KB_ATTR_INT) {
        int64_t iv;
        if (!kb_yas_int(n, &iv, &b->err))
            return;
        v = (double)iv;
    } else if (!kb_yas_number(n, &v, &b->err)) {
        return;
    }
    if (out_of_range(v, a->min, a->min_open, a->max)) {
        b->err = range_error(n, v, a->min, a->min_open, a->max, a->unit);
        return;
    }
    /* A bandwidth attribute is bounded by the flit like every link's. */
    if (a->unit && strcmp(a->unit, "GB/s") == 0 && !bw_ok(b, v, a->min == 0 && !a->min_open)) {
        b->err = bw_error(b, n, v, a->min == 0 && !a->min_open);
        return;
    }
    if (a->pow2 && !is_pow2(v)) {
        b->err = kb_yerr(n, "%g must be a power of two", v);
        return;
    }
    /* A size (unit bytes, KiB, MiB, GiB) is a whole number of bytes: 1e-300
     * MiB would be a 0-byte memory, 2.7 KiB 2764.8 bytes. */
    if (!kb_size_check(b, n, v, a->unit))
        return;
    *out = v;
}

static kb_comp_spec *new_spec(kb_builder *b, const char *role, const char *kind, const kb_impl *impl)
{
    kb_topo *t = b->t;
    if (t->nspecs == b->cap_specs) {
        b->cap_specs = b->cap_specs ? 2 * b->cap_specs : 32;
        t->specs = kb_xrealloc(t->specs, b->cap_specs * sizeof *t->specs);
    }
    kb_comp_spec *s = kb_xcalloc(1, sizeof *s);
    s->role = kb_xstrdup(role);
    s->kind = kb_xstrdup(kind);
    s->impl = impl;
    s->vals = kb_xcalloc(impl->nattrs ? impl->nattrs : 1, sizeof *s->vals);
    for (size_t i = 0; i < impl->nattrs; i++)
        s->vals[i] = impl->attrs[i].dflt;
    t->specs[t->nspecs++] = s;
    return s;
}

kb_comp_spec *kb_rd_component_block(kb_builder *b, kb_ynode *blk, kb_ynode *parent,
                                    const char *role, const char *kind, const char *default_impl)
{
    if (failed(b))
        return NULL;
    const char *impl_name = default_impl;
    kb_ynode *impl_node = NULL;
    if (blk && !blk->absent) {
        const char *k = kb_rd_string(b, blk, "kind", kind);
        if (!failed(b) && strcmp(k, kind) != 0)
            b->err = kb_yerr(kb_ymap_get(blk, "kind"), "this component is a %s, not a %s", kind, k);
        impl_node = kb_ymap_get(blk, "impl");
        if (impl_node && !kb_yas_string(impl_node, &impl_name, &b->err))
            return NULL;
    } else if (blk) {
        kb_cfg_note(b, blk, "kind", NULL, kind);
    }
    char *rerr = NULL;
    const kb_impl *impl = failed(b) ? NULL : kb_registry_lookup(b->reg, impl_name, &rerr);
    if (rerr) { /* a Lua implementation that does not load */
        b->err = kb_yerr(impl_node ? impl_node : parent, "%s", rerr);
        free(rerr);
    }
    if (!failed(b) && !impl) {
        char *names = kb_registry_names(b->reg);
        b->err = impl_node
                     ? kb_yerr(impl_node, "unknown implementation '%s' (known: %s)", impl_name, names)
                     : kb_yerr(parent, "%s: default implementation '%s' is not registered (known: %s)",
                               role, impl_name, names);
        free(names);
    }
    if (!failed(b) && !kb_impl_serves(impl, kind))
        b->err = kb_yerr(impl_node ? impl_node : parent, "%s cannot serve as a %s (it implements: %s)",
                         impl_name, kind, impl->kinds);
    if (failed(b))
        return NULL;
    kb_comp_spec *s = new_spec(b, role, kind, impl);
    kb_cfg_note(b, blk, "impl", impl_node, impl_node ? NULL : impl_name);
    kb_ynode *lat = blk && !blk->absent ? kb_ymap_get(blk, "latency_model") : NULL;
    if (lat) { /* a Lua function in place of the implementation's timing formula */
        const char *m = NULL;
        if (!kb_yas_string(lat, &m, &b->err))
            return NULL;
        if (strncmp(m, "lua:", 4) != 0 || !m[4])
            b->err = kb_yerr(lat, "latency_model must be lua:MODULE (a Lua module returning the model), got '%s'",
                             m);
        else if (!impl->latency)
            b->err = kb_yerr(lat, "%s has no latency formula a model could replace", impl->name);
        else
            s->latency_model = kb_xstrdup(m + 4);
        kb_cfg_note(b, blk, "latency_model", lat, NULL);
        if (failed(b))
            return NULL;
    }
    kb_ynode *attrs = blk ? kb_rd_map(b, blk, "attrs") : NULL;
    for (size_t i = 0; i < impl->nattrs && !failed(b); i++) {
        kb_ynode *n = attrs ? kb_ymap_get(attrs, impl->attrs[i].name) : NULL;
        if (n)
            read_attr(b, n, &impl->attrs[i], &s->vals[i]);
        char text[40];
        if (impl->attrs[i].type == KB_ATTR_BOOL)
            snprintf(text, sizeof text, "%s", s->vals[i] != 0 ? "true" : "false");
        else if (impl->attrs[i].type == KB_ATTR_INT)
            snprintf(text, sizeof text, "%.0f", s->vals[i]);
        else
            kb_cfg_num_text(s->vals[i], text, sizeof text);
        if (attrs)
            kb_cfg_note(b, attrs, impl->attrs[i].name, n, n ? NULL : text);
    }
    if (attrs && !attrs->absent) {
        if (!failed(b)) {
            char *unk = kb_ymap_unknown(attrs);
            if (unk) {
                b->err = kb_asprintf("%s (%s has no such attribute)", unk, impl->name);
                free(unk);
            }
        }
    }
    return failed(b) ? NULL : s;
}

kb_comp_spec *kb_rd_component(kb_builder *b, kb_ynode *map, const char *key, const char *kind,
                              const char *default_impl)
{
    if (failed(b))
        return NULL;
    kb_ynode *blk = kb_rd_map(b, map, key);
    if (failed(b))
        return NULL;
    char *role = map && map->path && map->path[0] ? kb_asprintf("%s.%s", map->path, key)
                                                  : kb_xstrdup(key);
    kb_comp_spec *s = kb_rd_component_block(b, blk, map, role, kind, default_impl);
    free(role);
    return s;
}

double kb_spec_attr(const kb_comp_spec *spec, const char *name)
{
    int i = kb_impl_attr_index(spec->impl, name);
    return i >= 0 ? spec->vals[i] : 0.0;
}
