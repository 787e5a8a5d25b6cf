/* Random host tensors (src/tensor/random.h). Benches depend on these
 * numbers: the FNV-1a hashes below were taken from the implementation that
 * lived in src/lua/ltensor_random.c before the move, so the C module is
 * checked bit for bit against it. */
#include "tensor/random.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "check.h"
#include "tensor_fixture.h"

/* Seed 7: rand of 1000 elements, then randn of 100001 (odd: the last v*f
 * is dropped), per dtype. */
static void test_streams_match_the_former_binding_bit_for_bit(void **state)
{
    (void)state;
    static const struct {
        kb_dtype dt;
        uint64_t rand_hash, randn_hash;
    } want[] = {{KB_F32, UINT64_C(0x6e82d8e1133d7cbd), UINT64_C(0xd7d9c72e722e4b81)},
                {KB_F16, UINT64_C(0xb96abb56e2bcfbbe), UINT64_C(0xd2f511a67ab3e272)},
                {KB_BF16, UINT64_C(0xf743659e85df6aa1), UINT64_C(0x7b98851aa06ca0a2)}};
    for (size_t i = 0; i < 3; i++) {
        kb_rng g;
        kb_rng_seed(&g, 7);
        kb_tensor u = tf_new(want[i].dt, 1, (int64_t[]){1000}), n = tf_new(want[i].dt, 1, (int64_t[]){100001});
        char *err = NULL;
        assert_true(kb_tensor_rand(&g, &u, &err));
        assert_true(kb_tensor_randn(&g, &n, &err));
        assert_true(kb_tensor_hash(&u) == want[i].rand_hash);
        assert_true(kb_tensor_hash(&n) == want[i].randn_hash);
        tf_free(&u), tf_free(&n);
    }
}

/* Seed 42, f32: the values of docs/torch.md (from an independent Python
 * implementation), top 24 bits of each output. */
static void test_rand_values_of_seed_42(void **state)
{
    (void)state;
    kb_rng g;
    kb_rng_seed(&g, 42);
    kb_tensor u = tf_new(KB_F32, 1, (int64_t[]){4});
    char *err = NULL;
    assert_true(kb_tensor_rand(&g, &u, &err));
    double want[4] = {0.08386296033859253, 0.37898021936416626, 0.6800433993339539, 0.9246929287910461};
    for (int i = 0; i < 4; i++)
        assert_true(kb_tensor_get(&u, i) == want[i]);
    tf_free(&u);
}

static void test_state_round_trips_and_errors(void **state)
{
    (void)state;
    kb_rng g, h;
    kb_rng_seed(&g, 3);
    unsigned char s[32];
    kb_rng_next(&g);
    kb_rng_state(&g, s);
    char *err;
    kb_rng_seed(&h, 0);
    assert_true(kb_rng_set_state(&h, s, 32, &err));
    assert_true(kb_rng_next(&h) == kb_rng_next(&g));
    TF_FAILS(kb_rng_set_state(&h, s, 31, &err), err, "set_state: a state is 32 bytes, got 31");
    memset(s, 0, sizeof s);
    TF_FAILS(kb_rng_set_state(&h, s, 32, &err), err, "set_state: the all-zero state is not valid for xoshiro256**");
}

/* rand and randn refuse an integer tensor, write nothing and draw nothing. */
static void test_random_tensors_are_float_only(void **state)
{
    (void)state;
    kb_rng g, fresh;
    kb_rng_seed(&g, 5);
    kb_rng_seed(&fresh, 5);
    kb_tensor t = tf_new(KB_I32, 1, (int64_t[]){3});
    char *err;
    TF_FAILS(kb_tensor_randn(&g, &t, &err), err, "randn: dtype i32 is not a floating-point type");
    TF_FAILS(kb_tensor_rand(&g, &t, &err), err, "rand: dtype i32 is not a floating-point type");
    for (int i = 0; i < 3; i++)
        assert_true(kb_tensor_get(&t, i) == 0);
    assert_true(kb_rng_next(&g) == kb_rng_next(&fresh));
    tf_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streams_match_the_former_binding_bit_for_bit),
        cmocka_unit_test(test_rand_values_of_seed_42),
        cmocka_unit_test(test_state_round_trips_and_errors),
        cmocka_unit_test(test_random_tensors_are_float_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
