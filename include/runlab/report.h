/* runlab/report.h: self-contained HTML reports. A report is built block by block
 * (headings, paragraphs, key/value tables, data tables, status badges, figures inlined as
 * SVG, links to sibling files) and written as one HTML file with inline CSS and an
 * optional tiny inline script for sortable tables: no network references, opens from
 * disk without a server, prints cleanly. Every string from data is escaped. */
#ifndef RUNLAB_REPORT_H
#define RUNLAB_REPORT_H

#include "runlab/export.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rl_report rl_report;
struct rl_figure;

/* Outcome badges: shown with colour and text, so they read in greyscale too. */
typedef enum rl_badge {
    RL_BADGE_PASS = 0,
    RL_BADGE_FAIL,
    RL_BADGE_INSUFFICIENT,
    RL_BADGE_UNAVAILABLE,
    RL_BADGE_NA,
    RL_BADGE_INCOMPLETE /* an overall result: nothing failed, some could not be judged */
} rl_badge;

/* "PASS", "FAIL", "INSUFFICIENT", "UNAVAILABLE", "N/A", "INCOMPLETE"; "?" for other values. */
RL_API const char *rl_badge_name(rl_badge b);

/* A new empty report whose <title> and first heading is `title`. Reports are not
 * thread-safe; different reports may be built in different threads. All functions return
 * RL_OK or a negative rl_status with a message (runlab/error.h); on RL_ENOMEM the report
 * stays usable but incomplete and rl_report_write fails. */
RL_API int rl_report_new(rl_report **out, const char *title);
/* Frees the report; NULL is a no-op. */
RL_API void rl_report_free(rl_report *r);

/* Heading of `level` 1..4 (the report title is the only h1 by convention). */
RL_API int rl_report_heading(rl_report *r, int level, const char *text);
RL_API int rl_report_paragraph(rl_report *r, const char *text);
/* A line "<label> <badge>". */
RL_API int rl_report_status(rl_report *r, const char *label, rl_badge badge);

/* Key/value table: begin (caption may be NULL), rows, end. */
RL_API int rl_report_kv_begin(rl_report *r, const char *caption);
RL_API int rl_report_kv(rl_report *r, const char *key, const char *value);
RL_API int rl_report_kv_end(rl_report *r);

/* Data tables. Cells that parse completely as numbers (optionally with a trailing '%')
 * are right-aligned with tabular figures; with RL_TABLE_SORTABLE a click on a header sorts
 * by that column (numerically where the cells are numbers). */
enum { RL_TABLE_SORTABLE = 1 };

typedef enum rl_cell_kind { RL_CELL_TEXT = 0, RL_CELL_BADGE, RL_CELL_LINK } rl_cell_kind;
typedef struct rl_report_cell {
    rl_cell_kind kind;
    const char *text; /* TEXT and LINK: the shown text (NULL = empty) */
    const char *href; /* LINK: a relative path to a sibling file (see rl_report_link), or
                         "#ANCHOR", a place in the same page (rl_report_figure_svg_at) */
    rl_badge badge;   /* BADGE */
} rl_report_cell;

RL_API int rl_report_table_begin(rl_report *r, const char *caption, const char *const *headers,
                          size_t ncols, unsigned flags);
/* One row of ncols text cells (NULL cells are empty). */
RL_API int rl_report_table_row(rl_report *r, const char *const *cells);
/* One row of ncols typed cells. */
RL_API int rl_report_table_row_cells(rl_report *r, const rl_report_cell *cells);
RL_API int rl_report_table_end(rl_report *r);

/* Renders `fig` to SVG and inlines it, with an optional caption. Drawing changes nothing
 * in the figure but its count of values skipped on log axes; it may be freed right after. */
RL_API int rl_report_figure(rl_report *r, struct rl_figure *fig, const char *caption);

/* Inlines a figure already drawn as SVG, with an optional caption: `svg` is the
 * NUL-terminated document rl_figure_to_svg gives with the NULL id prefix (the bytes
 * rl_figure_save writes to a .svg file), so a figure saved as SVG is not drawn again. Its
 * clip-path ids get the report's figure prefix: the page is the same as with
 * rl_report_figure. Other SVG is inlined as it is (its ids must not collide). Borrowed;
 * errors as rl_report_figure (RL_EINVAL for NULL). */
RL_API int rl_report_figure_svg(rl_report *r, const char *svg, const char *caption);

/* As rl_report_figure_svg, with id="anchor" on the <figure> so that a table's link cell
 * "#anchor" leads to it. `anchor` is 1..100 of [A-Za-z0-9_-] and should be unique in the
 * page (RL_EINVAL otherwise; NULL: no id). */
RL_API int rl_report_figure_svg_at(rl_report *r, const char *svg, const char *caption,
                            const char *anchor);

/* A folded block (<details>): `summary` is the line shown while it is closed; the blocks
 * added until rl_report_details_end are shown when a reader opens it (printing opens
 * it). Blocks do not nest (RL_ESTATE). */
RL_API int rl_report_details_begin(rl_report *r, const char *summary);
RL_API int rl_report_details_end(rl_report *r);

/* A link to a file beside the report. `href` must be relative and stay inside the report's
 * directory: no scheme ("http:"), no leading '/', no ".." component (RL_EINVAL).
 * Consecutive links share one line. `text` NULL shows the href. */
RL_API int rl_report_link(rl_report *r, const char *href, const char *text);

/* The finished HTML document (the report remains usable), a new string owned by the
 * caller (free()). */
RL_API int rl_report_to_string(rl_report *r, char **out, size_t *out_len);
/* Writes the document to `path` atomically. */
RL_API int rl_report_write(rl_report *r, const char *path);

/* Escapes `s` for HTML/XML text and attribute values: & < > " ' become entities, control
 * characters and invalid UTF-8 become U+FFFD. New string owned by the caller (free()). */
RL_API int rl_html_escape(const char *s, char **out);

#ifdef __cplusplus
}
#endif
#endif
