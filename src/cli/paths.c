#include "cli/paths.h"

#include "core/util.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int has_library(const char *dir)
{
    char probe[PATH_MAX];
    if (snprintf(probe, sizeof probe, "%s/kernbench/init.lua", dir) >= (int)sizeof probe)
        return 0;
    return access(probe, R_OK) == 0;
}

/* Directory of the running executable, via /proc (Linux) or argv[0]. */
static char *exe_dir(const char *argv0)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) {
        buf[n] = '\0';
    } else if (!argv0 || !realpath(argv0, buf)) {
        return NULL;
    }
    return kb_xstrdup(dirname(buf));
}

char *kb_find_lua_dir(const char *argv0, char *err, size_t errn)
{
    const char *env = getenv("KERNBENCH_PATH");
    if (env && *env) {
        if (has_library(env))
            return kb_xstrdup(env);
        snprintf(err, errn, "KERNBENCH_PATH=%s does not contain kernbench/init.lua", env);
        return NULL;
    }
    char *dir = exe_dir(argv0);
    if (dir) {
        char *candidate = kb_asprintf("%s/../share/kernbench/lua", dir);
        free(dir);
        char resolved[PATH_MAX];
        if (has_library(candidate) && realpath(candidate, resolved)) {
            free(candidate);
            return kb_xstrdup(resolved);
        }
        snprintf(err, errn,
                 "the kernbench Lua library was not found in %s (looked for kernbench/init.lua); "
                 "install with 'make install' or set KERNBENCH_PATH to the library directory",
                 candidate);
        free(candidate);
        return NULL;
    }
    snprintf(err, errn, "cannot locate the kernbench executable to find its Lua library; "
                        "set KERNBENCH_PATH to the library directory");
    return NULL;
}
