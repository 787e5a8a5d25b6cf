/* kernbench.httpd: the HTTP server of `kernbench web` (web.h).
 *
 * libmicrohttpd runs without threads of its own: serve() waits in select()
 * and calls MHD_run on the thread that called it, so every call into Lua
 * (the handler) happens on that thread, between two Lua instructions of
 * the caller, as any C function's would. A Lua error in the handler never
 * unwinds through libmicrohttpd: the handler runs under lua_pcall, and its
 * error becomes a 500 response. The stop flag of the session (SIGINT,
 * SIGTERM, --timeout) ends the loop within WEB_POLL_MS. */
#include "cli/web.h"

#include "luasim/session.h"

#include <arpa/inet.h>
#include <errno.h>
#include <lauxlib.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

/* Bounds on what a client can make the server hold (docs/web.md). */
#define WEB_MEMORY_LIMIT (32 * 1024) /* per connection: request line + headers (else 414/431) */
#define WEB_MAX_CONNECTIONS 64u
#define WEB_TIMEOUT_S 15u  /* an idle connection is closed after this */
#define WEB_MAX_ARGS 32    /* query parameters per request */
#define WEB_POLL_MS 200    /* how soon a stop (signal, --timeout) is seen */

typedef struct web_server {
    lua_State *L;
    int handler; /* registry reference of the Lua handler */
} web_server;

/* A request in progress: *req_cls points here after the headers. */
static int headers_seen;

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *ctype, const char *body,
                               size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    /* The page uses its own files only (no CDN), and nothing may frame it. */
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                            "frame-ancestors 'none'");
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

/* A JSON error: msg must not need escaping (a constant). */
static enum MHD_Result respond_error(struct MHD_Connection *c, unsigned status, const char *msg)
{
    char body[512];
    int n = snprintf(body, sizeof body, "{\"error\":\"%s\",\"status\":%u}\n", msg, status);
    return respond(c, status, "application/json", body, n > 0 && (size_t)n < sizeof body ? (size_t)n : 0);
}

/* The Host header names this machine: a page of another site that got its
 * name to resolve to 127.0.0.1 (DNS rebinding) is refused. No header
 * (HTTP/1.0) is fine; libmicrohttpd refuses HTTP/1.1 without one. */
static bool host_is_local(const char *host)
{
    if (!host)
        return true;
    size_t n;
    if (host[0] == '[') {
        const char *end = strchr(host, ']');
        if (!end)
            return false;
        return (size_t)(end - host) == 4 && strncmp(host, "[::1", 4) == 0;
    }
    const char *colon = strchr(host, ':');
    n = colon ? (size_t)(colon - host) : strlen(host);
    return (n == 9 && strncmp(host, "127.0.0.1", 9) == 0) || (n == 9 && strncasecmp(host, "localhost", 9) == 0);
}

typedef struct request {
    web_server *w;
    struct MHD_Connection *c;
    const char *method, *url;
    int nargs;
} request;

static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    request *rq = cls;
    lua_State *L = rq->w->L;
    if (!key)
        return MHD_YES;
    if (++rq->nargs > WEB_MAX_ARGS)
        return MHD_NO; /* stops the iteration; dispatch says why */
    if (lua_getfield(L, -1, key) == LUA_TNIL) { /* the first of repeated keys wins */
        lua_pushstring(L, value ? value : "");
        lua_setfield(L, -3, key);
    }
    lua_pop(L, 1);
    return MHD_YES;
}

/* Under lua_pcall: handler(method, path, args) -> status, content type, body. */
static int dispatch(lua_State *L)
{
    request *rq = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, rq->w->handler);
    lua_pushstring(L, rq->method);
    lua_pushstring(L, rq->url);
    lua_createtable(L, 0, 4);
    MHD_get_connection_values(rq->c, MHD_GET_ARGUMENT_KIND, add_arg, rq);
    if (rq->nargs > WEB_MAX_ARGS) {
        lua_pushinteger(L, 400);
        lua_pushliteral(L, "application/json");
        lua_pushfstring(L, "{\"error\":\"more than %d query parameters\",\"status\":400}\n", WEB_MAX_ARGS);
        return 3;
    }
    lua_call(L, 3, 3);
    return 3;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **req_cls)
{
    (void)version;
    (void)upload;
    web_server *w = cls;
    bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0, head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    if (*req_cls == NULL) { /* the headers: refuse early, before any body is read */
        *req_cls = &headers_seen;
        if (!get && !head)
            return respond_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD are served");
        if (!host_is_local(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)))
            return respond_error(c, MHD_HTTP_FORBIDDEN, "the Host header does not name this machine");
        const char *length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if ((length && strcmp(length, "0") != 0) ||
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
            return respond_error(c, MHD_HTTP_BAD_REQUEST, "a GET request has no body");
        return MHD_YES;
    }
    if (*upload_size != 0) { /* not reached: bodies are refused above */
        *upload_size = 0;
        return MHD_YES;
    }
    lua_State *L = w->L;
    int top = lua_gettop(L);
    if (!lua_checkstack(L, 8))
        return respond_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of Lua stack");
    request rq = {.w = w, .c = c, .method = method, .url = url};
    lua_pushcfunction(L, dispatch);
    lua_pushlightuserdata(L, &rq);
    enum MHD_Result ok;
    if (lua_pcall(L, 1, 3, 0) != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        fprintf(stderr, "kernbench web: %s %s: %s\n", method, url, msg ? msg : "(error object is not a string)");
        ok = respond_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error (the server's log on stderr says which)");
    } else {
        lua_Integer status = lua_isinteger(L, -3) ? lua_tointeger(L, -3) : 0;
        const char *ctype = lua_tostring(L, -2);
        size_t len = 0;
        const char *body = lua_tolstring(L, -1, &len);
        if (status < 100 || status > 599 || !ctype || !body)
            ok = respond_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "the handler returned no status, type and body");
        else
            ok = respond(c, (unsigned)status, ctype, body, len);
    }
    lua_settop(L, top);
    return ok;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decodes the path and query values in place, as libmicrohttpd's
 * own does, except %00: a NUL would cut the C string the handler gets
 * ("/app.js%00.png" read as "/app.js"), so it stays "%00" and names
 * nothing. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    char *out = s;
    for (const char *in = s; *in; in++) {
        int hi, lo;
        if (in[0] == '%' && (hi = hex_digit(in[1])) >= 0 && (lo = hex_digit(in[2])) >= 0 && (hi || lo)) {
            *out++ = (char)(hi * 16 + lo);
            in += 2;
        } else {
            *out++ = *in;
        }
    }
    *out = '\0';
    return (size_t)(out - s);
}

/* Listens on 127.0.0.1:port; the socket, or -1 with a message in err. */
static int listen_local(int port, char *err, size_t errn)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errn, "cannot create a socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one); /* a port in TIME_WAIT can be reused */
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 32) != 0) {
        int e = errno;
        if (e == EADDRINUSE)
            snprintf(err, errn, "port %d is in use on 127.0.0.1 (another server listens there)", port);
        else
            snprintf(err, errn, "cannot listen on 127.0.0.1:%d: %s", port, strerror(e));
        close(fd);
        return -1;
    }
    return fd;
}

/* serve{port = N, handler = f, on_ready = g}: serves until the session's
 * stop flag goes up. g(port) is called once listening (port: the one bound,
 * for port 0). Returns the stop's name ("sigint", "sigterm"), having
 * cleared the stop (a signal is how a server is meant to end); other stops
 * (--timeout) are left raised, for the command line to report. Returns
 * nil, message when it cannot listen. */
static int l_serve(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "port");
    lua_Integer port = luaL_optinteger(L, -1, 8765);
    luaL_argcheck(L, port >= 0 && port <= 65535, 1, "port must be between 0 and 65535");
    lua_getfield(L, 1, "handler");
    luaL_argexpected(L, lua_isfunction(L, -1), 1, "a table with a handler function");
    lua_getfield(L, 1, "on_ready");
    lua_settop(L, 4); /* 2 port, 3 handler, 4 on_ready (or nil) */

    char err[256];
    int fd = listen_local((int)port, err, sizeof err);
    if (fd < 0) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    struct sockaddr_in bound;
    socklen_t blen = sizeof bound;
    int actual = (int)port;
    if (getsockname(fd, (struct sockaddr *)&bound, &blen) == 0)
        actual = ntohs(bound.sin_port);

    web_server w = {.L = L};
    lua_pushvalue(L, 3);
    w.handler = luaL_ref(L, LUA_REGISTRYINDEX);
    struct MHD_Daemon *d =
        MHD_start_daemon(0, 0, NULL, NULL, on_request, &w, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
                         MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)WEB_MEMORY_LIMIT, MHD_OPTION_CONNECTION_LIMIT,
                         WEB_MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT, WEB_TIMEOUT_S,
                         MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL, MHD_OPTION_END);
    if (!d) {
        close(fd);
        luaL_unref(L, LUA_REGISTRYINDEX, w.handler);
        lua_pushnil(L);
        lua_pushfstring(L, "cannot start the HTTP server on 127.0.0.1:%d", actual);
        return 2;
    }
    if (lua_isfunction(L, 4)) {
        lua_pushvalue(L, 4);
        lua_pushinteger(L, actual);
        if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
            MHD_stop_daemon(d);
            luaL_unref(L, LUA_REGISTRYINDEX, w.handler);
            return lua_error(L);
        }
    }

    kb_session *s = kb_session_of(L);
    const char *failure = NULL;
    while (!(s && s->ctl.stop)) {
        fd_set rs, ws, es;
        MHD_socket max = 0;
        FD_ZERO(&rs);
        FD_ZERO(&ws);
        FD_ZERO(&es);
        if (MHD_get_fdset(d, &rs, &ws, &es, &max) != MHD_YES) {
            failure = "cannot watch the server's sockets";
            break;
        }
        struct timeval tv = {0, WEB_POLL_MS * 1000};
        MHD_UNSIGNED_LONG_LONG ms;
        if (MHD_get_timeout(d, &ms) == MHD_YES && ms < WEB_POLL_MS)
            tv.tv_usec = (suseconds_t)(ms * 1000);
        int n = select((int)max + 1, &rs, &ws, &es, &tv);
        if (n < 0 && errno != EINTR) {
            failure = "select failed";
            break;
        }
        if (n < 0) /* a signal: the sets say nothing */
            MHD_run(d);
        else
            MHD_run_from_select(d, &rs, &ws, &es);
    }
    MHD_stop_daemon(d); /* closes the listening socket and every connection */
    luaL_unref(L, LUA_REGISTRYINDEX, w.handler);
    if (failure)
        return luaL_error(L, "kernbench web: %s", failure);
    int stop = s ? (int)s->ctl.stop : KB_STOP_NONE;
    if (stop == KB_STOP_SIGINT || stop == KB_STOP_SIGTERM) {
        s->ctl.stop = KB_STOP_NONE; /* the armed hooks remove themselves */
        s->stopped_where[0] = '\0';
    }
    lua_pushstring(L, kb_stop_name(stop));
    return 1;
}

int luaopen_kb_httpd(lua_State *L)
{
    static const luaL_Reg fns[] = {{"serve", l_serve}, {NULL, NULL}};
    luaL_newlib(L, fns);
    lua_pushstring(L, MHD_get_version());
    lua_setfield(L, -2, "version");
    return 1;
}

void kb_web_preload(lua_State *L)
{
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    lua_pushcfunction(L, luaopen_kb_httpd);
    lua_setfield(L, -2, "kernbench.httpd");
    lua_pop(L, 1);
}
