/* JSON-like value trees and their JSON writer. */
#include "trace/val.h"

#include "core/util.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static kb_val *node(kb_vtype t)
{
    kb_val *v = kb_xcalloc(1, sizeof *v);
    v->type = t;
    return v;
}

kb_val *kb_val_obj(void) { return node(KB_V_OBJ); }
kb_val *kb_val_arr(void) { return node(KB_V_ARR); }

kb_val *kb_val_int(int64_t i)
{
    kb_val *v = node(KB_V_INT);
    v->u.i = i;
    return v;
}

kb_val *kb_val_str(const char *s)
{
    kb_val *v = node(KB_V_STR);
    v->u.s = kb_xstrdup(s);
    return v;
}

void kb_val_free(kb_val *v)
{
    if (!v)
        return;
    if (v->type == KB_V_STR)
        free(v->u.s);
    if (v->type == KB_V_ARR || v->type == KB_V_OBJ) {
        for (size_t i = 0; i < v->u.c.n; i++) {
            kb_val_free(v->u.c.items[i]);
            if (v->u.c.keys)
                free(v->u.c.keys[i]);
        }
        free(v->u.c.items);
        free(v->u.c.keys);
    }
    free(v);
}

static kb_val *append(kb_val *c, const char *key, kb_val *child)
{
    if (c->u.c.n == c->u.c.cap) {
        c->u.c.cap = c->u.c.cap ? 2 * c->u.c.cap : 8;
        c->u.c.items = kb_xrealloc(c->u.c.items, c->u.c.cap * sizeof *c->u.c.items);
        if (c->type == KB_V_OBJ)
            c->u.c.keys = kb_xrealloc(c->u.c.keys, c->u.c.cap * sizeof *c->u.c.keys);
    }
    if (c->type == KB_V_OBJ)
        c->u.c.keys[c->u.c.n] = kb_xstrdup(key);
    c->u.c.items[c->u.c.n++] = child;
    return child;
}

kb_val *kb_obj_put(kb_val *obj, const char *key, kb_val *child) { return append(obj, key, child); }
kb_val *kb_arr_push(kb_val *arr, kb_val *child) { return append(arr, NULL, child); }

void kb_obj_take_all(kb_val *obj, kb_val *src)
{
    for (size_t i = 0; i < src->u.c.n; i++) {
        append(obj, src->u.c.keys[i], src->u.c.items[i]);
        free(src->u.c.keys[i]);
    }
    src->u.c.n = 0;
    kb_val_free(src);
}

kb_val *kb_obj_int(kb_val *obj, const char *key, int64_t i)
{
    kb_val *v = node(KB_V_INT);
    v->u.i = i;
    return append(obj, key, v);
}

kb_val *kb_obj_num(kb_val *obj, const char *key, double d)
{
    kb_val *v = node(KB_V_NUM);
    v->u.d = d;
    return append(obj, key, v);
}

kb_val *kb_obj_str(kb_val *obj, const char *key, const char *s)
{
    kb_val *v = node(KB_V_STR);
    v->u.s = kb_xstrdup(s ? s : "");
    return append(obj, key, v);
}

kb_val *kb_obj_bool(kb_val *obj, const char *key, bool b)
{
    kb_val *v = node(KB_V_BOOL);
    v->u.b = b;
    return append(obj, key, v);
}

const kb_val *kb_obj_get(const kb_val *obj, const char *key)
{
    if (!obj || obj->type != KB_V_OBJ)
        return NULL;
    for (size_t i = 0; i < obj->u.c.n; i++)
        if (strcmp(obj->u.c.keys[i], key) == 0)
            return obj->u.c.items[i];
    return NULL;
}

void kb_json_write_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

void kb_json_write_number(FILE *out, double d)
{
    if (!isfinite(d)) { /* JSON has no inf/nan */
        fputs("null", out);
        return;
    }
    char buf[40];
    /* the shortest %.Ng that reads back: for a normal double %.15g is it
     * whenever at most 15 digits suffice; a subnormal one may need fewer
     * (the same digits as kernbench.json.number) */
    for (int prec = fabs(d) < DBL_MIN ? 1 : 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    fputs(buf, out);
    if (!strpbrk(buf, ".eE"))
        fputs(".0", out);
}

void kb_val_write_json(const kb_val *v, FILE *out)
{
    switch (v->type) {
    case KB_V_NULL: fputs("null", out); break;
    case KB_V_BOOL: fputs(v->u.b ? "true" : "false", out); break;
    case KB_V_INT: fprintf(out, "%lld", (long long)v->u.i); break;
    case KB_V_NUM: kb_json_write_number(out, v->u.d); break;
    case KB_V_STR: kb_json_write_string(out, v->u.s); break;
    case KB_V_ARR:
    case KB_V_OBJ: {
        bool obj = v->type == KB_V_OBJ;
        fputc(obj ? '{' : '[', out);
        for (size_t i = 0; i < v->u.c.n; i++) {
            if (i)
                fputc(',', out);
            if (obj) {
                kb_json_write_string(out, v->u.c.keys[i]);
                fputc(':', out);
            }
            kb_val_write_json(v->u.c.items[i], out);
        }
        fputc(obj ? '}' : ']', out);
        break;
    }
    }
}
