/* Fuzz harness: the Lua-facing argument parsing of the torch runtime and of
 * the `tl` kernel language (lua/kernbench/torch.lua, tl.lua, src/lua/).
 *
 * The input is not Lua: it drives a small grammar that writes a bench, so
 * every program is well formed and the fuzzer spends its time on the
 * arguments. A program is a list of statements; each calls one torch
 * function, tensor method or operator (or launches a kernel whose body is
 * a list of tl calls) with arguments drawn from: integers at the edges
 * (0, -1, 2^31, 2^53, 2^62, 2^63-1, math.mininteger ...), floats (NaN,
 * inf, -0.0, 1e308, subnormals), dtype and op names, nil, booleans, shapes
 * such as {2^31, 2^31, 2^31}, option tables, DPPolicy tables, composite
 * specs, nested tables, and earlier results (tensors, device tensors,
 * handles). Every call is wrapped in pcall: a Lua error is an answer; a
 * crash, a sanitizer report or a hang is a finding, and so is one of Lua's
 * internal messages ("attempt to index a nil value", "bad argument #1 to
 * '?'", ...) unless the generated program's own code raised it (its
 * position is fuzz_program or fuzz_driver): a bound function or the
 * runtime must answer a mistake with a message naming it.
 *
 * Besides the torch and tl calls, statements call any bound function at
 * all (CALL/KCALL): every C function and metamethod of the loaded modules
 * and of the metatables in the registry (found by walking them, so a new
 * binding is fuzzed without editing this file), or in a kernel every tl
 * function and handle method, with the right self, another object's self
 * or none, and arguments of any kind, too few or too many.
 *
 * One Lua state (kb_lua_open, as the command line makes it) and the two
 * small topologies are made once; each input gets a new runtime
 * (kernbench.torch.new: a new simulation) that is closed afterwards.
 *
 * The work budget of a program. A hang (libFuzzer's -timeout, 10 s in
 * run.sh) is a finding, so a legitimate program must stay far below it on
 * a slow, busy machine under the sanitizers; two bounds keep it so, both
 * counted, never timed, so an input does the same wherever it runs:
 *
 * - Memory: the state's allocator is capped at MEM_HEADROOM (2 MiB) above
 *   what the setup uses. A larger tensor is Lua's "not enough memory"
 *   error, not an out-of-memory report; and as every host tensor fits in
 *   it, so does every operand of a host operation: at most 24 (MAX_STMTS)
 *   operations on at most 2 MiB each (24 allclose of a 1M-element i8
 *   tensor, the costliest measured: 0.8 s), and no matrix product of
 *   10^9 multiply-adds ({1024, 1024} i8 times itself needs 2 MiB plus the
 *   runtime). The cap was 24 MiB: a 1024^3 product took 3.4 s, 8
 *   multiplications of a 4 MiB tensor 2 s.
 * - Simulation: a simulation past EVENT_BUDGET (2^20) events stops the
 *   program as Ctrl-C stops a line of the REPL (the session's stop flag
 *   and hooks: its runs return "stopped: --max-events reached" and its Lua
 *   code ends); the driver then closes the runtime with the stop cleared,
 *   as the REPL's next line would. 2^20 events of flit delivery take
 *   0.3 s. The memory cap alone does not bound them: one 2 MiB host
 *   tensor copied into 8 replicas is 625,000 events, and a program may
 *   copy it 24 times (a {16, 64, 4096} tensor replicated over 8 PEs, 5
 *   million events, took 10 s under load with the 24 MiB cap). The budget
 *   is checked every 65,536 events (KB_SIM_PROGRESS_EVERY) and only stops
 *   a simulation whose clock has moved since the previous check: one
 *   stuck at an instant (a livelock) runs on into -timeout, still a hang.
 *
 * What is left: a hang inside one event, in host code or in the bindings
 * never reaches a check and stays a finding; kernels' own arithmetic (tl.dot
 * and composites on tiles) is bounded by the PE scratch (1 MiB), 8 PEs and
 * 3 launches of 16 statements. The fuzz build also leaves libFuzzer's
 * comparison tracing out of the simulator's hot loops (CMakeLists.txt),
 * where it took 69 to 83 % of such programs' time. The slowest inputs
 * before and after are in tests/fuzz/README.md.
 *
 * Input bytes: the first picks the topology (bit 0: small_1cube_8pe, else
 * small_1cube_1pe), data mode (bit 1) and, with bits 2-4 all set, the
 * statements calling any bound function (so that inputs written before
 * them still make the same programs); then each statement takes a byte
 * for its form and one per choice below it. Set KB_FUZZ_PRINT=1 to print
 * each generated program (to read a reproducer), KB_FUZZ_INTERNAL_GO_ON=1
 * to print internal errors and go on (to list them over a corpus). */
#include "fuzz.h"

#include "core/util.h"
#include "lua/state.h"
#include "luasim/session.h"
#include "trace/val.h"

#include <lauxlib.h>
#include <string.h>

#define MAX_STMTS 24        /* bench statements per program */
#define MAX_KERNEL_STMTS 16 /* tl statements per kernel */
#define MAX_LAUNCHES 3
#define MAX_DEPTH 3         /* nesting of generated tables */
#define POOL 8              /* V[1..POOL] (bench) and K[1..POOL] (kernel) hold results */
/* the work budget (see the top) */
#define MEM_HEADROOM (2u << 20)          /* Lua memory above the setup's */
#define EVENT_BUDGET (UINT64_C(1) << 20) /* events per simulation */

/* ---- reading the input ---- */

typedef struct gen {
    const uint8_t *p;
    size_t n;
    kb_buf out;
    bool in_kernel;
    bool bound; /* the statements calling any bound function are in the grammar */
    int launches;
} gen;

static unsigned pick(gen *g, unsigned n)
{
    if (!g->n)
        return 0;
    g->n--;
    return *g->p++ % n;
}

#define PICK(g, arr) (arr)[pick(g, sizeof(arr) / sizeof((arr)[0]))]
#define EMIT(g, ...) kb_buf_printf(&(g)->out, __VA_ARGS__)

/* ---- the vocabulary ---- */

static const char *const ints[] = {
    "0", "1", "2", "3", "4", "8", "16", "32", "64", "-1", "-2", "7", "1024", "4096", "65536",
    "2147483647", "2147483648", "-2147483648", "4294967295", "4294967296", "9007199254740992",
    "9007199254740993", "4611686018427387904", "math.maxinteger", "math.mininteger", "0x100000000",
    "0x100001000", "0x7fffffffffff", "(1 << 40)", "(1 << 62)"};
static const char *const small_ints[] = {"1", "1", "2", "2", "4", "4", "8", "16", "3", "0", "32", "64"};
static const char *const floats[] = {"0.0", "-0.0", "0.5", "1.5", "-1.5", "2.0", "1e308", "-1e308", "1e-310",
                                     "(0/0)", "math.huge", "-math.huge", "2.0^31", "2.0^53", "2.0^63",
                                     "3.25", "1e15", "-2.0^63", "2.0^64"};
static const char *const strings[] = {
    "\"f16\"", "\"f32\"", "\"bf16\"", "\"i32\"", "\"i16\"", "\"i8\"", "\"u8\"", "\"bool\"", "\"float16\"",
    "\"torch.float32\"", "\"half\"", "\"int64\"", "\"\"", "\"gemm\"", "\"math\"", "\"exp\"", "\"add\"",
    "\"relu\"", "\"neg\"", "\"dequant\"", "\"bias\"", "\"scale\"", "\"gelu\"", "\"silu\"", "\"k_tile\"",
    "\"output_tile\"", "\"kernel\"", "\"replicate\"", "\"row_wise\"", "\"column_wise\"", "\"cpu\"", "\"x\"",
    "\"kernels.gemm_tile\"", "\"%d%s%n\"", "\"\\0\"", "(\"ab\"):rep(300)", "\"1e3\"", "\"0x10\""};
static const char *const dtypes[] = {"\"f16\"", "\"f32\"", "\"bf16\"", "\"i32\"", "\"i16\"",
                                     "\"i8\"",  "\"u8\"",  "\"bool\"", "\"float32\"", "\"f64\""};
static const char *const kinds[] = {"\"replicate\"", "\"row_wise\"", "\"column_wise\"", "\"diagonal\""};
static const char *const opt_keys[] = {"dtype", "dp", "name", "out_dtype", "generator", "rtol", "atol",
                                       "equal_nan", "dim", "keepdim", "tol", "pes", "cubes"};
static const char *const math_ops[] = {"\"exp\"", "\"log\"", "\"sqrt\"", "\"abs\"", "\"sigmoid\"", "\"relu\"",
                                       "\"neg\"", "\"add\"", "\"sub\"", "\"mul\"", "\"div\"", "\"maximum\"",
                                       "\"minimum\"", "\"tanh\""};
static const char *const directions[] = {"\"E\"", "\"W\"", "\"N\"", "\"S\"", "\"E\"", "\"W\"", "nil",
                                         "\"parent\"", "\"global_E\"", "\"\"", "(\"E\"):rep(40)"};
static const char *const ipcq_topologies[] = {"\"ring_1d\"", "\"ring_1d_unidir\"", "\"mesh_2d\"",
                                              "\"torus_2d\"", "\"mesh_2d_no_wrap\"", "\"tree_binary\"",
                                              "\"hypercube\"", "function(r, w) return {E = (r + 1) % w} end",
                                              "function(r, w) return {E = r} end"};
static const char *const ipcq_keys[] = {"buffer_kind", "n_slots", "slot_size", "backpressure", "w", "h", "grid", "pes"};
static const char *const ipcq_values[] = {"\"tcm\"", "\"sram\"", "\"hbm\"", "\"dram\"", "\"poll\"", "\"sleep\"",
                                          "1", "2", "4", "16", "64", "4096", "65536", "0", "-1", "2048",
                                          "{pes = 2, cubes = 1}", "{{0, 0, 0}, {0, 0, 1}}", "{{0, 0, 0}, {0, 0, 0}}"};
static const char *const epi_ops[] = {"\"dequant\"", "\"bias\"", "\"relu\"", "\"scale\"",
                                      "\"gelu\"",    "\"silu\"", "\"add\"",  "\"nope\""};

/* ---- expressions ----
 * Argument kinds of the call templates below:
 *   E any value   I integer   N number   S shape   T dtype   O options
 *   P pointer (kernel argument +- offset)   H pool value   C composite
 *   G DPPolicy   L nested list   B boolean   X string
 *   D a queue direction   Q torch.install_ipcq options */

static void expr(gen *g, int depth);

/* torch.install_ipcq options: a topology, a few of the keys, sometimes one
 * unknown key or a value of the wrong kind. */
static void emit_ipcq_options(gen *g)
{
    EMIT(g, "{topology = %s", PICK(g, ipcq_topologies));
    unsigned n = pick(g, 4);
    for (unsigned i = 0; i < n; i++) {
        EMIT(g, ", %s = ", PICK(g, ipcq_keys));
        if (pick(g, 6))
            EMIT(g, "%s", PICK(g, ipcq_values));
        else
            expr(g, 1);
    }
    EMIT(g, "}");
}

static void emit_int(gen *g) { EMIT(g, "%s", pick(g, 3) ? PICK(g, small_ints) : PICK(g, ints)); }

static void emit_number(gen *g)
{
    if (pick(g, 2))
        emit_int(g);
    else
        EMIT(g, "%s", PICK(g, floats));
}

static void emit_pool(gen *g) { EMIT(g, "%s[%u]", g->in_kernel ? "K" : "V", pick(g, POOL) + 1); }

static void emit_shape(gen *g)
{
    unsigned n = pick(g, 5);
    EMIT(g, "{");
    for (unsigned i = 0; i < n; i++) {
        EMIT(g, i ? ", " : "");
        switch (pick(g, 8)) {
        case 0: EMIT(g, "%s", PICK(g, ints)); break;
        case 1: EMIT(g, "%s", PICK(g, floats)); break;
        case 2: expr(g, MAX_DEPTH); break;
        default: EMIT(g, "%s", PICK(g, small_ints)); break;
        }
    }
    EMIT(g, "}");
}

static void emit_policy(gen *g, int depth)
{
    EMIT(g, "R(pcall(torch.DPPolicy, {");
    if (pick(g, 2))
        EMIT(g, "cube = %s, ", PICK(g, kinds));
    if (pick(g, 2))
        EMIT(g, "pe = %s, ", PICK(g, kinds));
    if (pick(g, 4) == 0) {
        EMIT(g, "num_pes = ");
        expr(g, depth + 1);
        EMIT(g, ", ");
    }
    if (pick(g, 4) == 0) {
        EMIT(g, "num_cubes = ");
        expr(g, depth + 1);
        EMIT(g, ", ");
    }
    EMIT(g, "}))");
}

static void emit_options(gen *g, int depth)
{
    unsigned n = pick(g, 4);
    EMIT(g, "{");
    for (unsigned i = 0; i < n; i++) {
        const char *k = PICK(g, opt_keys);
        EMIT(g, "%s = ", k);
        if (strcmp(k, "dtype") == 0 || strcmp(k, "out_dtype") == 0)
            EMIT(g, "%s", pick(g, 4) ? PICK(g, dtypes) : PICK(g, strings));
        else if (strcmp(k, "dp") == 0 && !g->in_kernel)
            emit_policy(g, depth);
        else
            expr(g, depth + 1);
        EMIT(g, ", ");
    }
    EMIT(g, "}");
}

static void emit_pointer(gen *g)
{
    if (!g->in_kernel) {
        EMIT(g, "R(pcall(IDX, V[%u], \"va_base\"))", pick(g, POOL) + 1);
        return;
    }
    static const char *const offsets[] = {"", "", "", " + 16", " + 64", " - 1", " + 4096", " + 1",
                                          " + 0x100000000", " - 0x100000000", " + (1 << 40)"};
    EMIT(g, "a%u%s", pick(g, 4) + 1, PICK(g, offsets));
}

static void emit_list(gen *g, int depth)
{
    unsigned n = pick(g, 4);
    EMIT(g, "{");
    for (unsigned i = 0; i < n; i++) {
        EMIT(g, i ? ", " : "");
        if (depth < MAX_DEPTH && pick(g, 3) == 0)
            emit_list(g, depth + 1);
        else if (pick(g, 4) == 0)
            expr(g, depth + 1);
        else
            emit_number(g);
    }
    EMIT(g, "}");
}

static void emit_composite(gen *g, int depth)
{
    EMIT(g, "{");
    if (pick(g, 8))
        EMIT(g, "op = %s, ", pick(g, 2) ? "\"gemm\"" : "\"math\"");
    if (pick(g, 8)) {
        EMIT(g, "a = ");
        expr(g, depth + 1);
        EMIT(g, ", ");
    }
    if (pick(g, 4)) {
        EMIT(g, "b = ");
        expr(g, depth + 1);
        EMIT(g, ", ");
    }
    if (pick(g, 8)) {
        EMIT(g, "out_ptr = ");
        emit_pointer(g);
        EMIT(g, ", ");
    }
    if (pick(g, 3) == 0)
        EMIT(g, "math_op = %s, ", PICK(g, math_ops));
    if (pick(g, 3) == 0) {
        unsigned n = pick(g, 4);
        EMIT(g, "epilogue = {");
        for (unsigned i = 0; i < n; i++) {
            static const char *const fields[] = {"scale", "bias", "factor", "other", "scope"};
            EMIT(g, "{op = %s, %s = ", PICK(g, epi_ops), PICK(g, fields));
            expr(g, depth + 1);
            if (pick(g, 2))
                EMIT(g, ", scope = %s", pick(g, 3) ? "\"k_tile\"" : "\"kernel\"");
            EMIT(g, "}, ");
        }
        EMIT(g, "}, ");
    }
    if (pick(g, 3) == 0) {
        EMIT(g, "tile_shape = ");
        emit_shape(g);
        EMIT(g, ", ");
    }
    if (pick(g, 4) == 0)
        EMIT(g, "out_dtype = %s, ", PICK(g, dtypes));
    if (pick(g, 6) == 0)
        EMIT(g, "acc_dtype = %s, ", PICK(g, dtypes));
    EMIT(g, "}");
}

static void expr(gen *g, int depth)
{
    unsigned sel = pick(g, depth >= MAX_DEPTH ? 8 : 14);
    switch (sel) {
    case 0: emit_int(g); break;
    case 1: EMIT(g, "%s", PICK(g, floats)); break;
    case 2: EMIT(g, "%s", PICK(g, strings)); break;
    case 3: EMIT(g, "%s", PICK(g, ((const char *const[]){"nil", "true", "false"}))); break;
    case 4:
    case 5: emit_pool(g); break;
    case 6: emit_pointer(g); break;
    case 7: EMIT(g, "%s", PICK(g, dtypes)); break;
    case 8: emit_shape(g); break;
    case 9: emit_list(g, depth); break;
    case 10: emit_options(g, depth); break;
    case 11:
        if (g->in_kernel)
            emit_composite(g, depth);
        else
            emit_policy(g, depth);
        break;
    case 12: EMIT(g, "{%s}", g->in_kernel ? "K[1], K[2]" : "V[1], V[2]"); break;
    default: emit_pool(g); break;
    }
}

static void arg(gen *g, char kind)
{
    if (pick(g, 8) == 0) { /* now and then anything at all */
        expr(g, 1);
        return;
    }
    switch (kind) {
    case 'I': emit_int(g); break;
    case 'N': emit_number(g); break;
    case 'S': emit_shape(g); break;
    case 'T': EMIT(g, "%s", PICK(g, dtypes)); break;
    case 'O': emit_options(g, 1); break;
    case 'P': emit_pointer(g); break;
    case 'H': emit_pool(g); break;
    case 'C': emit_composite(g, 1); break;
    case 'G': emit_policy(g, 1); break;
    case 'L': emit_list(g, 1); break;
    case 'B': EMIT(g, pick(g, 2) ? "true" : "false"); break;
    case 'X': EMIT(g, "%s", PICK(g, strings)); break;
    case 'D': EMIT(g, "%s", PICK(g, directions)); break;
    case 'Q': emit_ipcq_options(g); break;
    default: expr(g, 1); break;
    }
}

/* Arguments by template, sometimes one too few or one too many. */
static void args(gen *g, const char *tmpl)
{
    size_t n = strlen(tmpl);
    unsigned mut = pick(g, 8);
    if (mut == 0 && n > 0)
        n--;
    for (size_t i = 0; i < n; i++) {
        EMIT(g, ", ");
        arg(g, tmpl[i]);
    }
    if (mut == 1) {
        EMIT(g, ", ");
        expr(g, 1);
    }
}

/* ---- statements ---- */

typedef struct call {
    const char *name, *tmpl;
} call;

static const call tl_calls[] = {
    {"program_id", "I"}, {"num_programs", "I"}, {"load", "PST"}, {"load", "PST"}, {"load", "H"},
    {"store", "PH"},     {"store", "PH"},       {"ref", "PST"},  {"dot", "HHO"},  {"dot", "HH"},
    {"exp", "H"},        {"log", "H"},          {"sqrt", "H"},   {"abs", "H"},    {"sigmoid", "H"},
    {"cos", "H"},        {"sin", "H"},          {"relu", "H"},   {"add", "HH"},   {"sub", "HN"},
    {"mul", "HH"},       {"div", "NH"},         {"maximum", "HH"}, {"minimum", "HH"}, {"fma", "HHH"},
    {"clamp", "HNN"},    {"where", "HHH"},      {"softmax", "HI"}, {"sum", "HI"},  {"max", "H"},
    {"min", "HI"},       {"zeros", "ST"},       {"full", "SNT"}, {"arange", "IIT"}, {"trans", "H"},
    {"cdiv", "II"},      {"cycles", "I"},       {"composite", "C"}, {"composite", "C"}, {"wait", "H"},
    {"wait", ""},        {"is_data", ""},       {"send", "DH"},  {"recv", "DST"},
    {"send", "DH"},      {"recv", "DST"},       {"recv_async", "DST"}, {"recv_no_consume", "DST"},
    {"ipcq_rank", ""},   {"ipcq_neighbors", ""},
};

static const call torch_calls[] = {
    {"empty", "SO"},      {"zeros", "SO"},      {"ones", "SO"},       {"full", "SNO"},     {"tensor", "LO"},
    {"arange", "NNN"},    {"rand", "SO"},       {"randn", "SO"},      {"manual_seed", "I"}, {"allclose", "HHNN"},
    {"isclose", "HH"},    {"equal", "HH"},      {"matmul", "HH"},     {"add", "HH"},       {"sub", "HN"},
    {"mul", "HH"},        {"div", "HN"},        {"neg", "H"},         {"exp", "H"},        {"log", "H"},
    {"sqrt", "H"},        {"abs", "H"},         {"relu", "H"},        {"sigmoid", "H"},    {"tanh", "H"},
    {"softmax", "HI"},    {"sum", "HIB"},       {"max", "HI"},        {"min", "H"},        {"mean", "HI"},
    {"transpose", "HII"}, {"narrow", "HIII"},   {"cat", "EI"},        {"reshape", "HS"},   {"clone", "H"},
    {"zeros_like", "HO"}, {"ones_like", "HO"},  {"is_tensor", "E"},   {"from_bytes", "XST"}, {"to_device", "HG"},
    {"wait", "H"},        {"synchronize", ""},  {"now_ns", ""},       {"cleanup", ""},     {"alloc_tcm", "IIII"},
    {"free_tcm", "IIII"}, {"translate", "IIIP"}, {"verify", "XHH"},   {"stats", ""},       {"DPPolicy", "O"},
    {"empty", "SO"},      {"zeros", "SO"},      {"install_ipcq", "Q"}, {"install_ipcq", "Q"}, {"uninstall_ipcq", ""},
};

static const call methods[] = {
    {"get", "II"},     {"set", "IIN"},   {"item", ""},     {"tolist", ""},    {"reshape", "S"},  {"view", "S"},
    {"flatten", ""},   {"to", "T"},      {"clone", ""},    {"narrow", "III"}, {"transpose", "II"}, {"T", ""},
    {"bytes", ""},     {"hash", ""},     {"block", "IIII"}, {"set_block", "IIIIX"}, {"fill_", "N"}, {"zero_", ""},
    {"copy_", "H"},    {"numel", ""},    {"size", "I"},    {"dim", ""},       {"cpu", ""},       {"free", ""},
    {"contiguous", ""}, {"float", ""},   {"half", ""},     {"int", ""},       {"bool", ""},      {"nbytes", ""},
    {"element_size", ""}, {"done", ""},  {"stats", ""},    {"elapsed_ns", ""}, {"sum", "I"},     {"matmul", "H"},
    {"allclose", "H"}, {"wait", ""},
};

static const char *const ops[] = {"add", "sub", "mul", "div", "unm", "len", "str", "idiv", "concat", "eq", "lt"};

/* "X[i] = R(pcall(" for a random pool slot i, which it returns. */
static unsigned target(gen *g)
{
    unsigned slot = pick(g, POOL) + 1;
    EMIT(g, "  %s[%u] = R(pcall(", g->in_kernel ? "K" : "V", slot);
    return slot;
}

static void stmt_method(gen *g)
{
    const call *c = &PICK(g, methods);
    target(g);
    EMIT(g, "M, ");
    emit_pool(g);
    EMIT(g, ", \"%s\"", c->name);
    args(g, c->tmpl);
    EMIT(g, "))\n");
}

static void stmt_index(gen *g)
{
    if (pick(g, 2)) {
        target(g);
        EMIT(g, "IDX, ");
        emit_pool(g);
        EMIT(g, ", ");
        pick(g, 2) ? emit_int(g) : expr(g, 1);
        EMIT(g, "))\n");
    } else {
        EMIT(g, "  pcall(SETIDX, ");
        emit_pool(g);
        EMIT(g, ", ");
        pick(g, 2) ? emit_int(g) : expr(g, 1);
        EMIT(g, ", ");
        expr(g, 1);
        EMIT(g, ")\n");
    }
}

static void stmt_op(gen *g)
{
    target(g);
    EMIT(g, "OPS.%s, ", PICK(g, ops));
    emit_pool(g);
    EMIT(g, ", ");
    pick(g, 2) ? emit_pool(g) : emit_number(g);
    EMIT(g, "))\n");
}

/* CALL(n, self, ...) / KCALL(n, self, ...): the bound function n (modulo
 * their number) with self 0 none, 1 its own object, 2 another object's,
 * then 0 to 4 arguments of any kind. */
static void stmt_bound(gen *g)
{
    target(g);
    unsigned n = pick(g, 256) * 256;
    n += pick(g, 256);
    EMIT(g, "%s, %u, %u", g->in_kernel ? "KCALL" : "CALL", n, pick(g, 3));
    unsigned na = pick(g, 5);
    for (unsigned i = 0; i < na; i++) {
        EMIT(g, ", ");
        expr(g, 1);
    }
    EMIT(g, "))\n");
}

static void stmt_tl(gen *g)
{
    switch (pick(g, g->bound ? 10 : 8)) {
    case 0: stmt_method(g); return;
    case 1: stmt_index(g); return;
    case 2: stmt_op(g); return;
    case 8:
    case 9: stmt_bound(g); return;
    default: break;
    }
    const call *c = &PICK(g, tl_calls);
    target(g);
    EMIT(g, "tl.%s", c->name);
    args(g, c->tmpl);
    EMIT(g, "))\n");
}

static void stmt_launch(gen *g)
{
    g->launches++;
    bool async = pick(g, 4) == 0;
    unsigned slot = target(g);
    EMIT(g, "torch.%s, {name = \"fz\", fn = function(tl, a1, a2, a3, a4)\n", async ? "launch_async" : "launch");
    EMIT(g, "  local K = {a1, a2, a3, a4}\n");
    EMIT(g, "  local KCALL = KB(tl, K)\n");
    g->in_kernel = true;
    unsigned n = pick(g, MAX_KERNEL_STMTS + 1);
    for (unsigned i = 0; i < n && g->n; i++)
        stmt_tl(g);
    g->in_kernel = false;
    EMIT(g, "  end}, ");
    switch (pick(g, 4)) {
    case 0: EMIT(g, "1"); break;
    case 1: arg(g, 'I'); break;
    case 2:
        EMIT(g, "{");
        arg(g, 'I');
        EMIT(g, ", ");
        arg(g, 'I');
        EMIT(g, "}");
        break;
    default: EMIT(g, "GRID"); break;
    }
    /* device tensors first (the kernel's pointers), then anything */
    static const char *const dev[] = {"V[3]", "V[4]", "V[3]", "V[4]", "V[5]", "V[6]"};
    unsigned na = pick(g, 5);
    for (unsigned i = 0; i < 4; i++) {
        EMIT(g, ", ");
        if (i < na)
            expr(g, 1);
        else
            EMIT(g, "%s", PICK(g, dev));
    }
    EMIT(g, "))\n");
    if (async)
        EMIT(g, "  pcall(torch.wait, V[%u])\n", slot);
}

static void stmt_bench(gen *g)
{
    switch (pick(g, g->bound ? 14 : 12)) {
    case 0:
    case 1: stmt_method(g); return;
    case 2: stmt_index(g); return;
    case 3: stmt_op(g); return;
    case 12:
    case 13: stmt_bound(g); return;
    case 4:
        if (g->launches < MAX_LAUNCHES) {
            stmt_launch(g);
            return;
        }
        break;
    default: break;
    }
    const call *c = &PICK(g, torch_calls);
    target(g);
    EMIT(g, "torch.%s", c->name);
    args(g, c->tmpl);
    EMIT(g, "))\n");
}

/* The program as a Lua chunk: a function of the runtime, the pool values
 * the driver made (V) and the helpers (M, IDX, SETIDX, OPS, R). */
static char *generate(const uint8_t *data, size_t size, bool bound)
{
    gen g = {.p = data, .n = size, .bound = bound};
    EMIT(&g, "local torch, V, GRID, M, IDX, SETIDX, OPS, R, CALL, KB = ...\n");
    for (unsigned i = 0; i < MAX_STMTS && g.n; i++)
        stmt_bench(&g);
    if (pick(&g, 2))
        EMIT(&g, "  pcall(torch.cleanup)\n");
    return kb_buf_take(&g.out);
}

/* ---- the Lua side ---- */

/* Made once: returns run(chunk, topo_index, data): a new runtime, the pool
 * values (two host tensors, two device tensors and their addresses), a new
 * simulation whose objects are selves for CALL, and the program; and
 * finish(): both closed, and the first internal Lua error the program got,
 * if any. */
static const char driver[] =
    "local dir = ...\n"
    "local tm = require 'kernbench.torch'\n"
    "local sim = require 'sim'\n"
    "local topos = { kb.topology.load(dir .. '/topologies/small_1cube_1pe.yaml'),\n"
    "                kb.topology.load(dir .. '/topologies/small_1cube_8pe.yaml') }\n"
    "local function M(o, k, ...) return o[k](o, ...) end\n"
    "local function IDX(o, k) return o[k] end\n"
    "local function SETIDX(o, k, v) o[k] = v end\n"
    /* Lua's internal messages: a finding unless the program's own code or
     * the helpers here raised them (the VM's errors in that code, and a C
     * function's argument error when a helper called it through a variable
     * key, o[k](o, ...), which Lua names '?'): those start with the
     * program's or the driver's position. A bound function's message has
     * its own file's position, or none when the program called it. */
    "local INTERNAL = { 'attempt to ', \"to '?'\", '(null)', 'on bad self' }\n"
    "local finding\n"
    "local function R(ok, v)\n"
    "  if ok then return v end\n"
    "  if finding or type(v) ~= 'string' or v:find('^fuzz_%a+:%d+: ') then return end\n"
    "  for _, p in ipairs(INTERNAL) do\n"
    "    if v:find(p, 1, true) then finding = v return end\n"
    "  end\n"
    "end\n"
    /* The operators; on plain values (numbers, strings: the string
     * library's arithmetic raises its errors without a position) an error
     * is the program's own and gets the driver's position. */
    "local function obj(v) return type(v) == 'table' or type(v) == 'userdata' end\n"
    "local function op(f) return function(a, b)\n"
    "  if obj(a) or obj(b) then return f(a, b) end\n"
    "  local ok, r = pcall(f, a, b)\n"
    "  if ok then return r end\n"
    "  error(r, 1)\n"
    "end end\n"
    "local OPS = { add = op(function(a, b) return a + b end), sub = op(function(a, b) return a - b end),\n"
    "  mul = op(function(a, b) return a * b end), div = op(function(a, b) return a / b end),\n"
    "  idiv = op(function(a, b) return a // b end), unm = op(function(a) return -a end),\n"
    "  len = op(function(a) return #a end), str = op(function(a) return tostring(a) end),\n"
    "  concat = op(function(a, b) return a .. b end), eq = op(function(a, b) return a == b end),\n"
    "  lt = op(function(a, b) return a < b end) }\n"
    /* The bound functions: the C functions of the loaded modules and of the
     * metatables in the registry, each with the metatable whose objects are
     * its self. Not called: Lua's own, the child-process pool, and the
     * functions that write files or the terminal. */
    "local SKIP = { _G = true, string = true, table = true, math = true, io = true, os = true,\n"
    "  coroutine = true, utf8 = true, debug = true, package = true,\n"
    "  ['kernbench.procpool'] = true, ['kernbench.procpool.guard'] = true, ['kernbench.output_c'] = true,\n"
    "  ['kernbench.output'] = true, ['kernbench.progress_c'] = true, FILE = true }\n"
    "local function bound_functions(roots)\n"
    "  local found, list, seen = {}, {}, {}\n"
    "  local function walk(t, name, depth, mt)\n"
    "    if seen[t] or depth > 3 then return end\n"
    "    seen[t] = true\n"
    "    if rawget(t, '__name') ~= nil then mt = t end\n"
    "    for k, v in pairs(t) do\n"
    "      local key = tostring(k)\n"
    "      if type(v) == 'function' and debug.getinfo(v, 'S').what == 'C' and not found[v] then\n"
    "        found[v] = true\n"
    "        list[#list + 1] = { name = name .. '.' .. key, key = key, f = v, mt = mt }\n"
    "      elseif type(v) == 'table' and (k == '__index' or k == 'methods' or k == '__methods') then\n"
    "        walk(v, name .. '.' .. key, depth + 1, mt)\n"
    "      elseif type(v) == 'table' and not SKIP[key] then\n"
    "        walk(v, name .. '.' .. key, depth + 1, nil)\n"
    "      end\n"
    "    end\n"
    "  end\n"
    "  for _, r in ipairs(roots) do walk(r[2], r[1], 0, nil) end\n"
    "  table.sort(list, function(a, b) return a.name < b.name end)\n"
    "  return list\n"
    "end\n"
    /* the metatables first, so that a method is seen with its metatable */
    "local roots, mods = {}, {}\n"
    "for k, v in pairs(debug.getregistry()) do\n"
    "  if type(k) == 'string' and type(v) == 'table' and k:sub(1, 1) ~= '_' and not SKIP[k]\n"
    "     and not SKIP[k:match('^[%w_]+')] and rawget(v, '__name') then roots[#roots + 1] = { k, v } end\n"
    "end\n"
    "for k, v in pairs(package.loaded) do\n"
    "  if type(v) == 'table' and not SKIP[k] then mods[#mods + 1] = { k, v } end\n"
    "end\n"
    "table.sort(roots, function(a, b) return a[1] < b[1] end)\n"
    "table.sort(mods, function(a, b) return a[1] < b[1] end)\n"
    "for _, m in ipairs(mods) do roots[#roots + 1] = m end\n"
    "local B = bound_functions(roots)\n"
    "local TENSOR_MT = debug.getregistry()['kernbench.tl_tensor']\n"
    "local COMPOSITE_MT = debug.getregistry()['kernbench.tl_composite']\n"
    /* Objects by metatable, found in the values given (depth-limited). */
    "local function objects(values)\n"
    "  local by_mt, list, seen = {}, {}, {}\n"
    "  local function visit(v, depth)\n"
    "    if depth > 3 or seen[v] then return end\n"
    "    if type(v) == 'userdata' then\n"
    "      seen[v] = true\n"
    "      local mt = getmetatable(v)\n"
    "      if type(mt) == 'table' and not by_mt[mt] then by_mt[mt] = v list[#list + 1] = v end\n"
    "    elseif type(v) == 'table' then\n"
    "      seen[v] = true\n"
    "      for _, x in pairs(v) do visit(x, depth + 1) end\n"
    "    end\n"
    "  end\n"
    "  for _, v in ipairs(values) do visit(v, 0) end\n"
    "  return by_mt, list\n"
    "end\n"
    /* CALL(n, self, ...): bound function n (modulo their number) with self 0
     * none, 1 its own object, 2 another object's. */
    "local function caller(list, by_mt, others)\n"
    "  return function(n, mode, ...)\n"
    "    local e = list[n % #list + 1]\n"
    /* a finalizer is never given a live object (docs/decisions.md) */
    "    local fin = e.key == '__gc' or e.key == '__close'\n"
    "    if mode == 1 and e.mt and not fin and by_mt[e.mt] ~= nil then\n"
    "      return e.f(by_mt[e.mt], ...)\n"
    "    elseif mode == 2 and #others > 0 then\n"
    "      local o = others[n % #others + 1]\n"
    "      if fin or getmetatable(o) == e.mt then o = io.stdout end\n"
    "      return e.f(o, ...)\n"
    "    end\n"
    "    return e.f(...)\n"
    "  end\n"
    "end\n"
    /* KB(tl, K): the caller of a kernel: its tl functions and the handles'
     * and composites' methods and metamethods. */
    "local function KB(tl, K)\n"
    "  local list, seen = {}, {}\n"
    "  local function add(t, name, mt)\n"
    "    local keys = {}\n"
    "    for k, v in pairs(t) do if type(v) == 'function' and not seen[v] then keys[#keys + 1] = k end end\n"
    "    table.sort(keys)\n"
    "    for _, k in ipairs(keys) do seen[t[k]] = true list[#list + 1] = { key = k, f = t[k], mt = mt } end\n"
    "  end\n"
    "  add(tl, 'tl')\n"
    "  for _, mt in ipairs { TENSOR_MT, COMPOSITE_MT } do\n"
    "    add(mt, 'mt', mt)\n"
    "    if type(rawget(mt, 'methods')) == 'table' then add(mt.methods, 'm', mt) end\n"
    "    if type(rawget(mt, '__index')) == 'table' then add(mt.__index, 'i', mt) end\n"
    "  end\n"
    "  local by_mt, others = objects(K)\n"
    "  if not by_mt[TENSOR_MT] then\n"
    "    local ok, h = pcall(tl.zeros, { 2 }, 'f32')\n"
    "    if ok then by_mt[TENSOR_MT] = h others[#others + 1] = h end\n"
    "  end\n"
    "  return caller(list, by_mt, others)\n"
    "end\n"
    /* The runtime and the simulation of the input under way: run makes
     * them, finish closes them (the C side calls finish after run however
     * run ended, a budget's stop included). */
    "local current\n"
    "local function run(chunk, topo, data)\n"
    "  finding = nil\n"
    "  current = {}\n"
    "  local torch = tm.new { topology = topos[topo], data_mode = data and 'data' or nil }\n"
    "  current.torch = torch\n"
    "  local dp = torch.DPPolicy { pe = topo == 2 and 'row_wise' or 'replicate' }\n"
    "  local d1 = torch.zeros({ 8, 4 }, { dtype = 'f32', dp = dp })\n"
    "  local d2 = torch.empty({ 8, 8 }, { dtype = 'f16', dp = torch.DPPolicy {} })\n"
    "  local V = { torch.ones({ 4, 4 }), torch.arange(0, 64):reshape({ 8, 8 }):half(), d1, d2,\n"
    "              d1.va_base, d2.va_base, torch.zeros({ 2, 3 }, 'i32'), 2.5 }\n"
    "  local s = sim.new()\n"
    "  current.s = s\n"
    "  local by_mt, others = objects { s, s:store(), s:resource(1), s:event(), s:timeout(1), torch, V }\n"
    "  local CALL = caller(B, by_mt, others)\n"
    "  local ok, err = pcall(chunk, torch, V, topo == 2 and { 2, 1 } or 1, M, IDX, SETIDX, OPS, R, CALL, KB)\n"
    "  if not ok then error(err, 0) end\n"
    "end\n"
    "local function finish()\n"
    "  local c = current or {}\n"
    "  current = nil\n"
    "  if c.torch then pcall(c.torch.close) end\n"
    "  if c.s then pcall(c.s.close, c.s) end\n"
    "  return finding\n"
    "end\n"
    "return run, finish\n";

/* The state's allocator, capped: the fuzz entry point has no context, so
 * the budget lives here for the process. */
static struct {
    lua_Alloc f;
    void *ud;
    size_t used, cap;
} mem;

static void *capped_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    size_t old = ptr ? osize : 0;
    if (nsize > old && mem.used + (nsize - old) > mem.cap)
        return NULL; /* Lua collects and retries, then raises "not enough memory" */
    void *p = mem.f(mem.ud, ptr, osize, nsize);
    if (p || nsize == 0)
        mem.used = mem.used - old + nsize;
    return p;
}

static struct {
    kb_session session;
    lua_State *L;
    int run_ref, finish_ref;
    bool print, keep_going;
    struct {
        int id;      /* a simulation (its serial) */
        kb_time now; /* and its clock at its last progress report */
    } last[8];       /* by serial modulo 8 (an input makes two, CALL a few more) */
} fz;

/* The event budget (kb_sim_control.on_progress, every KB_SIM_PROGRESS_EVERY
 * events of a run): a simulation past EVENT_BUDGET events stops the
 * program as Ctrl-C stops a line of the REPL (the stop flag; the hooks
 * end its Lua code, session.h). Only when the clock has moved since the
 * simulation's previous report: one stuck at an instant is a livelock,
 * left to run into libFuzzer's -timeout (a hang, a finding). */
static void budget_progress(void *ctx, const kb_sim_progress *p)
{
    kb_session *s = ctx;
    if (p->id == 0 || p->ended) /* a bench's kb.progress; a run returning */
        return;
    size_t i = (size_t)p->id % (sizeof fz.last / sizeof fz.last[0]);
    bool moved = fz.last[i].id == p->id && fz.last[i].now != p->now;
    fz.last[i].id = p->id;
    fz.last[i].now = p->now;
    if (p->events >= EVENT_BUDGET && moved && !s->ctl.stop) {
        s->ctl.stop = KB_STOP_EVENTS;
        kb_session_arm(s);
    }
}

static void teardown(void) { kb_lua_close(fz.L); }

static void setup(void)
{
    char err[512];
    fz.L = kb_lua_open(&fz.session, KB_FUZZ_SOURCE_DIR "/lua", err, sizeof err);
    FUZZ_CHECK(fz.L, "cannot open a Lua state: %s", err);
    lua_State *L = fz.L;
    FUZZ_CHECK(luaL_loadbuffer(L, driver, sizeof driver - 1, "=fuzz_driver") == LUA_OK, "%s", lua_tostring(L, -1));
    lua_pushstring(L, KB_FUZZ_SOURCE_DIR);
    FUZZ_CHECK(lua_pcall(L, 1, 2, 0) == LUA_OK, "%s", lua_tostring(L, -1));
    fz.finish_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    fz.run_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    fz.session.ctl.on_progress = budget_progress;
    fz.session.ctl.progress_ctx = &fz.session;
    lua_gc(L, LUA_GCCOLLECT);
    mem.f = lua_getallocf(L, &mem.ud);
    mem.used = (size_t)lua_gc(L, LUA_GCCOUNT) * 1024 + (size_t)lua_gc(L, LUA_GCCOUNTB);
    mem.cap = mem.used + MEM_HEADROOM;
    lua_setallocf(L, capped_alloc, NULL);
    const char *p = getenv("KB_FUZZ_PRINT");
    fz.print = p && *p && strcmp(p, "0") != 0;
    p = getenv("KB_FUZZ_INTERNAL_GO_ON");
    fz.keep_going = p && *p && strcmp(p, "0") != 0;
    atexit(teardown);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fz.L)
        setup();
    if (size == 0)
        return 0;
    unsigned flags = data[0];
    char *src = generate(data + 1, size - 1, (flags >> 2 & 7) == 7);
    if (fz.print)
        fprintf(stderr, "---- program (topology %u, data %u):\n%s", (flags & 1) + 1, (flags >> 1) & 1, src);
    lua_State *L = fz.L;
    int top = lua_gettop(L);
    int st = luaL_loadbuffer(L, src, strlen(src), "=fuzz_program");
    FUZZ_CHECK(st == LUA_OK, "the generated program does not compile: %s\n%s", lua_tostring(L, -1), src);
    lua_rawgeti(L, LUA_REGISTRYINDEX, fz.run_ref);
    lua_insert(L, -2);
    lua_pushinteger(L, (flags & 1) + 1);
    lua_pushboolean(L, (flags >> 1) & 1);
    /* The program runs as a command-line call (kb_exec_call): a stop ends
     * its Lua code too. */
    fz.session.in_call = 1;
    st = lua_pcall(L, 3, 0, 0);
    bool stopped = fz.session.ctl.stop != KB_STOP_NONE;
    fz.session.in_call = 0;
    lua_sethook(L, NULL, 0, 0);
    fz.session.current = NULL;
    fz.session.runs_active = 0;
    /* and the next line of the REPL starts afresh (src/cli/repl.c) */
    fz.session.ctl.stop = KB_STOP_NONE;
    fz.session.ctl.reached.seen = false;
    fz.session.stopped_where[0] = '\0';
    if (st != LUA_OK) {
        /* The program's own errors are answers; the driver's setup failing
         * (the runtime or the pool tensors) is not one it may give. */
        const char *msg = lua_tostring(L, -1);
        FUZZ_CHECK(stopped || (msg && strstr(msg, "not enough memory")), "the driver failed: %s\n%s",
                   msg ? msg : "?", src);
        lua_pop(L, 1);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, fz.finish_ref);
    if (lua_pcall(L, 0, 1, 0) == LUA_OK) {
        const char *internal = lua_tostring(L, -1);
        if (internal && fz.keep_going)
            fprintf(stderr, "internal: %s\n", internal);
        else
            FUZZ_CHECK(!internal, "an internal Lua error instead of a message: %s\n%s", internal, src);
    } else {
        const char *msg = lua_tostring(L, -1);
        FUZZ_CHECK(msg && strstr(msg, "not enough memory"), "the driver's finish failed: %s\n%s", msg ? msg : "?",
                   src);
    }
    lua_pop(L, 1);
    FUZZ_CHECK(lua_gettop(L) == top, "the Lua stack grew from %d to %d", top, lua_gettop(L));
    /* Everything the program made is garbage now: collecting it here keeps
     * libFuzzer's leak check (which scans the heap whenever a run frees
     * less than it allocates) for runs that do leak. */
    lua_gc(L, LUA_GCCOLLECT);
    kb_val_free(fz.session.runs); /* the session keeps each closed run's statistics */
    fz.session.runs = NULL;
    free(src);
    return 0;
}
