/* Cube NoC auto-layout: where routers, PEs, M_CPU, SRAM and
 * UCIe connections sit inside one cube. A pure function of the geometry;
 * the builder turns its result into nodes and edges. */
#ifndef KB_TOPO_LAYOUT_H
#define KB_TOPO_LAYOUT_H

#include <stdbool.h>

#define KB_LAYOUT_MAX_PES 16
#define KB_LAYOUT_MAX_LINES 32 /* rows or columns */
#define KB_LAYOUT_MAX_CONN 16

enum { KB_SIDE_N, KB_SIDE_E, KB_SIDE_S, KB_SIDE_W, KB_SIDES };
enum { KB_CORNER_NW, KB_CORNER_NE, KB_CORNER_SW, KB_CORNER_SE };

extern const char *const kb_side_names[KB_SIDES];   /* "N", "E", "S", "W" */
extern const char *const kb_corner_names[4];        /* "NW", "NE", "SW", "SE" */

typedef struct kb_cube_geom {
    double w_mm, h_mm;
    double corner_inset_mm;   /* PE corner centre distance from the cube edge */
    double pe_pitch_mm;       /* spacing of the PEs of one corner */
    double max_spacing_mm;    /* relay columns keep router spacing at or below this */
    double hbm_row_offset_mm; /* HBM rows sit at h/2 -/+ this */
    double hbm_gap_mm;        /* gap between the PE rows and the HBM rows */
    int corners[4];           /* KB_CORNER_*, in PE index order */
    int ncorners;
    int pe_per_corner;
    int n_connections;        /* UCIe connections per port */
    double mcpu_x, mcpu_y, sram_x, sram_y;
} kb_cube_geom;

typedef struct kb_rc { int row, col; } kb_rc;

typedef struct kb_cube_layout {
    int rows, cols;
    double row_y[KB_LAYOUT_MAX_LINES], col_x[KB_LAYOUT_MAX_LINES];
    bool present[KB_LAYOUT_MAX_LINES][KB_LAYOUT_MAX_LINES]; /* false inside the HBM zone */
    int hbm_row0, hbm_row1, hbm_col0, hbm_col1;
    int npe;
    kb_rc pe[KB_LAYOUT_MAX_PES];      /* router each PE attaches to */
    double pe_x[KB_LAYOUT_MAX_PES], pe_y[KB_LAYOUT_MAX_PES];
    kb_rc m_cpu, sram;
    int nconn;
    kb_rc ucie[KB_SIDES][KB_LAYOUT_MAX_CONN]; /* router of connection k of each side */
    const char *bad_key; /* on failure, the geometry key at fault (NULL: the geometry as a whole) */
} kb_cube_layout;

/* Computes the layout; false with a message in err (size n) when the
 * geometry cannot hold the requested PEs and connections. */
bool kb_cube_layout_make(const kb_cube_geom *g, kb_cube_layout *out, char *err, int n);

#endif
