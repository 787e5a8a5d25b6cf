/* Random host tensors: a seeded generator and rand / randn into tensors
 * (docs/torch.md, "Random numbers"). The numbers are part of every bench's
 * inputs: any change to them changes results.
 *
 * The generator is xoshiro256** (Blackman and Vigna), its 256-bit state
 * seeded with four successive outputs of splitmix64 started at the seed.
 * The caller owns the kb_rng (the binding keeps it in a userdata). */
#ifndef KB_TENSOR_RANDOM_H
#define KB_TENSOR_RANDOM_H

#include "tensor/tensor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kb_rng {
    uint64_t s[4];
    uint64_t seed;
} kb_rng;

void kb_rng_seed(kb_rng *g, uint64_t seed);
uint64_t kb_rng_next(kb_rng *g);
/* The state as 32 bytes: s[0] .. s[3], each little-endian. */
void kb_rng_state(const kb_rng *g, unsigned char *out);
/* Restores a state of get_state; the all-zero state is refused. */
bool kb_rng_set_state(kb_rng *g, const unsigned char *b, size_t len, char **err);

/* rand and randn fill float tensors only: another dtype is an error
 * ("randn: dtype i32 is not a floating-point type") and draws nothing.
 *
 * Uniform [0, 1): one output per element, its top bits scaled to the
 * dtype's significand (24 bits f32, 11 f16, 8 bf16): exact, never 1. */
bool kb_tensor_rand(kb_rng *g, const kb_tensor *t, char **err);
/* Standard normal, Marsaglia's polar method: a pair of outputs gives
 * u, v = (x >> 11) * 2^-52 - 1 in [-1, 1); pairs with q = u^2 + v^2
 * outside (0, 1) are drawn again; elements 2j and 2j+1 are u*f and v*f
 * with f = sqrt(-2 ln q / q), rounded to the dtype through f32 (an odd
 * count drops the last v*f). */
bool kb_tensor_randn(kb_rng *g, const kb_tensor *t, char **err);

#endif
