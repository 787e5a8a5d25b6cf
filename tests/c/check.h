/* String assertions shared by the C tests (include after <cmocka.h>). */
#ifndef KB_TEST_CHECK_H
#define KB_TEST_CHECK_H

#include <string.h>

static inline void assert_has(const char *s, const char *needle)
{
    if (!s || !strstr(s, needle))
        fail_msg("\"%s\" does not contain \"%s\"", s ? s : "(null)", needle);
}

static inline void assert_prefix(const char *s, const char *prefix)
{
    if (!s || strncmp(s, prefix, strlen(prefix)) != 0)
        fail_msg("\"%s\" does not start with \"%s\"", s ? s : "(null)", prefix);
}

#endif
