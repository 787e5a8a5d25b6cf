/* Element types of tensors and of the memory store, with exact f16 and
 * bf16 conversions (round to nearest even; overflow to inf; NaN stays NaN;
 * subnormals both ways; -0 kept). Pure functions. */
#ifndef KB_MEM_DTYPE_H
#define KB_MEM_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum kb_dtype { KB_F32, KB_F16, KB_BF16, KB_I32, KB_I16, KB_I8, KB_U8, KB_BOOL, KB_NDTYPES } kb_dtype;

/* "f32", "f16", ... */
const char *kb_dtype_name(kb_dtype t);
/* torch's name without "torch.": "float32", "float16", "bfloat16", ... */
const char *kb_dtype_torch_name(kb_dtype t);
/* Parses a name or a torch alias ("float16", "bfloat16", "int32", "uint8",
 * "float", "half", "bool", ...). False if unknown. */
bool kb_dtype_parse(const char *name, kb_dtype *out);
size_t kb_dtype_size(kb_dtype t);
bool kb_dtype_is_float(kb_dtype t);

uint16_t kb_f32_to_f16(float f);
float kb_f16_to_f32(uint16_t h);
uint16_t kb_f32_to_bf16(float f);
float kb_bf16_to_f32(uint16_t h);

/* One element at p as a double. */
double kb_dtype_load(kb_dtype t, const void *p);
/* Stores v at p in type t: floats round to nearest even (f16/bf16 via f32,
 * which is exact for values already representable); integers truncate
 * toward zero and wrap modulo 2^bits like a torch cast (NaN and infinities
 * store 0); bool stores v != 0. */
void kb_dtype_store(kb_dtype t, void *p, double v);

#endif
