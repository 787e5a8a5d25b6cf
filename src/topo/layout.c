/* Cube NoC auto-layout, with the choices recorded in docs/decisions.md
 * ("Topology and fabric" (corner columns always present, PE index order). */
#include "topo/layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const kb_side_names[KB_SIDES] = {"N", "E", "S", "W"};
const char *const kb_corner_names[4] = {"NW", "NE", "SW", "SE"};

#define EPS 1e-9

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static bool is_west(int corner) { return corner == KB_CORNER_NW || corner == KB_CORNER_SW; }
static bool is_north(int corner) { return corner == KB_CORNER_NW || corner == KB_CORNER_NE; }

/* Column positions: PE x positions and both corner columns, then relay
 * columns in every gap wider than max_spacing. */
static bool columns(const kb_cube_geom *g, const double *pe_x, int npe, kb_cube_layout *L,
                    char *err, int n)
{
    double xs[KB_LAYOUT_MAX_PES + 2];
    int nx = 0;
    xs[nx++] = g->corner_inset_mm;
    xs[nx++] = g->w_mm - g->corner_inset_mm;
    for (int i = 0; i < npe; i++)
        xs[nx++] = pe_x[i];
    qsort(xs, (size_t)nx, sizeof xs[0], cmp_double);
    int cols = 0;
    for (int i = 0; i < nx; i++) {
        if (cols && xs[i] - L->col_x[cols - 1] < EPS)
            continue;
        if (cols) {
            double gap = xs[i] - L->col_x[cols - 1];
            /* Counted in double and bounded before it becomes an int: a
             * tiny spacing asks for more relays than an int holds. */
            double need = ceil(gap / g->max_spacing_mm - EPS) - 1;
            if (!(need <= KB_LAYOUT_MAX_LINES - cols - 1))
                goto too_many;
            int relays = need > 0 ? (int)need : 0;
            double x0 = L->col_x[cols - 1];
            for (int r = 1; r <= relays; r++) {
                if (cols >= KB_LAYOUT_MAX_LINES)
                    goto too_many;
                L->col_x[cols++] = x0 + gap * r / (relays + 1);
            }
        }
        if (cols >= KB_LAYOUT_MAX_LINES)
            goto too_many;
        L->col_x[cols++] = xs[i];
    }
    L->cols = cols;
    return true;
too_many:
    L->bad_key = "max_router_spacing_mm";
    snprintf(err, (size_t)n, "%g mm between routers needs more than %d router columns across the %g mm "
             "cube (at most %d are supported)", g->max_spacing_mm, KB_LAYOUT_MAX_LINES, g->w_mm,
             KB_LAYOUT_MAX_LINES);
    return false;
}

static int nearest_col(const kb_cube_layout *L, double x)
{
    int best = 0;
    for (int c = 1; c < L->cols; c++)
        if (fabs(L->col_x[c] - x) < fabs(L->col_x[best] - x) - EPS)
            best = c;
    return best;
}

/* The present router nearest to (x, y); ties go to the lower row, then column. */
static kb_rc nearest_router(const kb_cube_layout *L, double x, double y)
{
    kb_rc best = {-1, -1};
    double bd = INFINITY;
    for (int r = 0; r < L->rows; r++)
        for (int c = 0; c < L->cols; c++) {
            if (!L->present[r][c])
                continue;
            double d = hypot(L->col_x[c] - x, L->row_y[r] - y);
            if (d < bd - EPS) {
                bd = d;
                best = (kb_rc){r, c};
            }
        }
    return best;
}

bool kb_cube_layout_make(const kb_cube_geom *g, kb_cube_layout *L, char *err, int n)
{
    memset(L, 0, sizeof *L);
    int npe = g->ncorners * g->pe_per_corner;
    if (npe < 1 || npe > KB_LAYOUT_MAX_PES) {
        snprintf(err, (size_t)n, "%d PEs per cube (corners x pe_per_corner); 1..%d are supported",
                 npe, KB_LAYOUT_MAX_PES);
        return false;
    }
    if (g->n_connections < 1 || g->n_connections > KB_LAYOUT_MAX_CONN) {
        snprintf(err, (size_t)n, "%d UCIe connections per port; 1..%d are supported",
                 g->n_connections, KB_LAYOUT_MAX_CONN);
        return false;
    }
    double span = g->corner_inset_mm + (g->pe_per_corner - 1) * g->pe_pitch_mm;
    if (2 * span >= g->w_mm) {
        snprintf(err, (size_t)n,
                 "cube is %.3g mm wide but the PEs of a west and an east corner span %.3g mm each",
                 g->w_mm, span);
        return false;
    }

    /* Rows: rows_per_half PE rows on top, two HBM rows, rows_per_half below. */
    int conn = g->n_connections < 2 ? 2 : g->n_connections;
    int rph = (conn + 1) / 2;
    L->rows = 2 * rph + 2;
    if (L->rows > KB_LAYOUT_MAX_LINES) {
        snprintf(err, (size_t)n, "too many router rows (%d)", L->rows);
        return false;
    }
    double hbm_top = g->h_mm / 2 - g->hbm_row_offset_mm;
    double top_end = hbm_top - g->hbm_gap_mm;
    if (top_end < g->corner_inset_mm - EPS) {
        snprintf(err, (size_t)n,
                 "cube is %.3g mm tall: no room for PE rows above the HBM rows "
                 "(inset %.3g mm, HBM offset %.3g mm, gap %.3g mm)",
                 g->h_mm, g->corner_inset_mm, g->hbm_row_offset_mm, g->hbm_gap_mm);
        return false;
    }
    for (int i = 0; i < rph; i++) {
        double y = rph == 1 ? g->corner_inset_mm
                            : g->corner_inset_mm + (top_end - g->corner_inset_mm) * i / (rph - 1);
        L->row_y[i] = y;
        L->row_y[L->rows - 1 - i] = g->h_mm - y;
    }
    L->row_y[rph] = hbm_top;
    L->row_y[rph + 1] = g->h_mm / 2 + g->hbm_row_offset_mm;
    L->hbm_row0 = rph;
    L->hbm_row1 = rph + 1;

    /* PE positions in index order: corner by corner. */
    L->npe = npe;
    for (int ci = 0, p = 0; ci < g->ncorners; ci++) {
        int corner = g->corners[ci];
        for (int k = 0; k < g->pe_per_corner; k++, p++) {
            L->pe_x[p] = is_west(corner)
                             ? g->corner_inset_mm + k * g->pe_pitch_mm
                             : g->w_mm - g->corner_inset_mm - (g->pe_per_corner - 1 - k) * g->pe_pitch_mm;
            int row;
            if (is_north(corner))
                row = corner == KB_CORNER_NW ? 0 : (rph > 1 ? 1 : 0);
            else
                row = corner == KB_CORNER_SW ? L->hbm_row1 + 1 : L->hbm_row1 + (rph > 1 ? 2 : 1);
            L->pe[p].row = row;
            L->pe_y[p] = L->row_y[row];
        }
    }
    if (!columns(g, L->pe_x, npe, L, err, n))
        return false;
    if (L->cols < 3) {
        snprintf(err, (size_t)n,
                 "the cube geometry gives %d router columns; at least 3 are needed so the NoC "
                 "can pass the HBM block", L->cols);
        return false;
    }
    L->hbm_col0 = L->cols / 2 - 1;
    L->hbm_col1 = L->cols / 2;
    for (int r = 0; r < L->rows; r++)
        for (int c = 0; c < L->cols; c++)
            L->present[r][c] = !(r >= L->hbm_row0 && r <= L->hbm_row1 && c >= L->hbm_col0 &&
                                 c <= L->hbm_col1);
    for (int p = 0; p < npe; p++)
        L->pe[p].col = nearest_col(L, L->pe_x[p]);

    L->m_cpu = nearest_router(L, g->mcpu_x, g->mcpu_y);
    L->sram = nearest_router(L, g->sram_x, g->sram_y);

    /* UCIe: E/W connections on the PE rows of the outer columns; N/S on
     * the PE columns (all columns if there are fewer) of the outer rows. */
    L->nconn = g->n_connections;
    int pe_rows[KB_LAYOUT_MAX_LINES], npr = 0;
    for (int i = 0; i < rph; i++)
        pe_rows[npr++] = i;
    for (int i = 0; i < rph; i++)
        pe_rows[npr++] = L->hbm_row1 + 1 + i;
    int pe_cols[KB_LAYOUT_MAX_LINES], npc = 0;
    for (int c = 0; c < L->cols; c++) {
        bool has = false;
        for (int p = 0; p < npe && !has; p++)
            has = L->pe[p].col == c;
        if (has)
            pe_cols[npc++] = c;
    }
    if (npc < L->nconn) {
        npc = 0;
        for (int c = 0; c < L->cols; c++)
            pe_cols[npc++] = c;
    }
    for (int k = 0; k < L->nconn; k++) {
        int ri = pe_rows[k * npr / L->nconn];
        int cj = pe_cols[k * npc / L->nconn];
        L->ucie[KB_SIDE_E][k] = (kb_rc){ri, L->cols - 1};
        L->ucie[KB_SIDE_W][k] = (kb_rc){ri, 0};
        L->ucie[KB_SIDE_N][k] = (kb_rc){0, cj};
        L->ucie[KB_SIDE_S][k] = (kb_rc){L->rows - 1, cj};
    }
    return true;
}
