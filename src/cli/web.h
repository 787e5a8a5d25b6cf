/* `kernbench web`'s HTTP server (libmicrohttpd), as the Lua module
 * kernbench.httpd. The page, the JSON endpoints and the command line are
 * lua/kernbench/web.lua's; this file only listens on 127.0.0.1, bounds
 * requests and hands each one to a Lua function, always on the thread
 * that called serve (docs/web.md). */
#ifndef KB_CLI_WEB_H
#define KB_CLI_WEB_H

#include <lua.h>

/* Puts kernbench.httpd in package.preload. */
void kb_web_preload(lua_State *L);

/* The module: serve{port =, handler =, on_ready =} (web.c). */
int luaopen_kb_httpd(lua_State *L);

#endif
