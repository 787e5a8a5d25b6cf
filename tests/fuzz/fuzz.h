/* Shared by the fuzz harnesses of tests/fuzz (see its README.md).
 *
 * Each harness defines LLVMFuzzerTestOneInput and is built twice: with
 * libFuzzer (`make fuzz`, clang, -fsanitize=fuzzer,address,undefined) and
 * as a plain executable with replay_main.c, which feeds it the seed corpus
 * and the regression inputs (the ctest entries fuzz.<harness>). A finding
 * is a crash, a sanitizer report, a hang, or a broken invariant, which
 * FUZZ_CHECK turns into an abort (assert would vanish under NDEBUG). */
#ifndef KB_FUZZ_H
#define KB_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                                  \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "%s:%d: invariant broken: %s\n  ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fputc('\n', stderr);                                                               \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

#endif
