/* Helpers shared by the binding modules (lbind.h). */
#include "lua/lbind.h"

#include <stdlib.h>

int lbind_raise(lua_State *L, char *msg)
{
    lua_pushstring(L, msg ? msg : "error without a message");
    free(msg);
    return lua_error(L);
}
