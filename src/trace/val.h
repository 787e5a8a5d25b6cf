/* A small tree of JSON-like values, built once and written out as JSON or
 * handed to Lua as tables (src/lua). Statistics and op-log records use it,
 * so a figure has one definition whatever reads it.
 *
 * Ownership: a container owns its children and copies of its keys and
 * strings; kb_val_free frees a whole tree. Object keys keep insertion
 * order, so output is deterministic. */
#ifndef KB_TRACE_VAL_H
#define KB_TRACE_VAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum kb_vtype { KB_V_NULL, KB_V_BOOL, KB_V_INT, KB_V_NUM, KB_V_STR, KB_V_ARR, KB_V_OBJ } kb_vtype;

typedef struct kb_val {
    kb_vtype type;
    union {
        bool b;
        int64_t i;
        double d;
        char *s;
        struct {
            struct kb_val **items;
            char **keys; /* objects only */
            size_t n, cap;
        } c;
    } u;
} kb_val;

kb_val *kb_val_obj(void);
kb_val *kb_val_arr(void);
kb_val *kb_val_int(int64_t i);
kb_val *kb_val_str(const char *s); /* copied */
void kb_val_free(kb_val *v);

/* Setters on an object (key copied); each returns the new child. */
kb_val *kb_obj_int(kb_val *obj, const char *key, int64_t i);
kb_val *kb_obj_num(kb_val *obj, const char *key, double d);
kb_val *kb_obj_str(kb_val *obj, const char *key, const char *s);
kb_val *kb_obj_bool(kb_val *obj, const char *key, bool b);
kb_val *kb_obj_put(kb_val *obj, const char *key, kb_val *child); /* takes child */
/* Moves every entry of object src to the end of obj and frees src. */
void kb_obj_take_all(kb_val *obj, kb_val *src);
/* Appends to an array; returns the child. */
kb_val *kb_arr_push(kb_val *arr, kb_val *child); /* takes child */

/* Lookup by key (NULL if absent or not an object). */
const kb_val *kb_obj_get(const kb_val *obj, const char *key);

/* JSON text on one line: numbers as the shortest decimal that reads back to
 * the same double (integral doubles keep a ".0"), strings escaped. */
void kb_val_write_json(const kb_val *v, FILE *out);
/* Writes a JSON string literal. */
void kb_json_write_string(FILE *out, const char *s);
/* Writes a double as kb_val_write_json does. */
void kb_json_write_number(FILE *out, double d);

#endif
