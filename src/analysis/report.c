/* The HTML report writer behind runlab/report.h. The body is accumulated in a buffer and
 * wrapped at the end in a fixed head (inline CSS with print rules, and the sort script
 * only when a sortable table exists), so the page needs nothing but itself. */
#include "runlab/report.h"

#include "analysis/plot_internal.h"
#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/plot.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rl_report {
    char *title;
    rl_buf body;
    bool in_links, in_kv, in_table, in_details, sortable_used, details_used;
    size_t ncols;
    unsigned table_flags;
    int nfig, ntable;
};

static const char *const BADGE_NAMES[] = {"PASS", "FAIL", "INSUFFICIENT", "UNAVAILABLE", "N/A",
                                          "INCOMPLETE"};
static const char *const BADGE_CLASS[] = {"pass", "fail", "insufficient", "unavailable", "na",
                                          "incomplete"};
enum { BADGE_COUNT = sizeof BADGE_NAMES / sizeof BADGE_NAMES[0] };

const char *rl_badge_name(rl_badge b)
{
    return (unsigned)b < BADGE_COUNT ? BADGE_NAMES[b] : "?";
}

/* Text cells longer than this are prose (a check's reason, a note): they wrap anywhere. */
enum { PROSE_CHARS = 40 };

static const char CSS[] =
    ":root{color-scheme:light}"
    "body{font-family:'DejaVu Sans',Verdana,'Segoe UI',Helvetica,Arial,sans-serif;"
    "margin:2em auto;max-width:1100px;padding:0 1.5em;color:#1a1a1a;line-height:1.45;"
    "background:#fff}"
    "h1{font-size:1.6em;border-bottom:2px solid #0072B2;padding-bottom:.2em}"
    "h2{font-size:1.25em;margin-top:1.8em}h3{font-size:1.08em}h4{font-size:1em}"
    "table{border-collapse:collapse;margin:.8em 0;font-size:.92em}"
    "caption{text-align:left;font-weight:bold;padding:.3em 0}"
    "th,td{border-bottom:1px solid #ddd;padding:.3em .45em;text-align:left;vertical-align:top}"
    "th{background:#f3f5f7;border-bottom:2px solid #bbb}"
    "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}"
    "table.kv th{background:none;border-bottom:1px solid #ddd;font-weight:600;color:#444}"
    "table.sortable th{cursor:pointer;user-select:none}"
    "table.sortable th::after{content:' \\2195';color:#999;font-size:.8em}"
    "table.sortable th.asc::after{content:' \\2191';color:#333}"
    "table.sortable th.desc::after{content:' \\2193';color:#333}"
    ".scroll{overflow-x:auto}"
    /* A sentence breaks between words. break-word, unlike anywhere, keeps a column at least
       as wide as its longest word (a topic path) when the table is laid out, so no word
       is cut ("command_traje ctory"); only a token wider than the whole page breaks. */
    "td.prose{overflow-wrap:break-word}"
    /* A browser breaks a line after '-' or '/' ("6.86-9.10", "rt/vehicle/2"): words
       holding them are kept whole (put_text_words). */
    "span.w{white-space:nowrap}"
    "details{margin:.3em 0}details>summary{cursor:pointer;padding:.15em 0}"
    "details>.scroll>table{margin-top:.2em}"
    ".badge{display:inline-block;padding:.05em .55em;border-radius:.3em;font-weight:bold;"
    "font-size:.85em;letter-spacing:.03em;border:1px solid}"
    ".badge.pass{background:#e6f4ea;color:#11632a;border-color:#11632a}"
    ".badge.fail{background:#fde7e7;color:#a1121a;border-color:#a1121a}"
    ".badge.insufficient{background:#fff4d6;color:#7a4d00;border-color:#b07800}"
    ".badge.unavailable{background:#eceff3;color:#3d4650;border-color:#6b7580}"
    ".badge.na{background:#f6f6f6;color:#555;border-color:#aaa}"
    ".badge.incomplete{background:#fff4d6;color:#7a4d00;border-color:#b07800}"
    "figure{margin:1em 0}figure svg{max-width:100%;height:auto;display:block}"
    "figcaption{font-size:.9em;color:#444;margin-top:.3em}"
    "p.links a{margin-right:1em}"
    "@media print{body{margin:0;max-width:none;padding:0;font-size:10pt}"
    "a{color:inherit}h1{border-color:#000}figure,table,tr{break-inside:avoid}"
    "h2,h3{break-after:avoid}table.sortable th::after{content:''}"
    ".scroll{overflow:visible}}";

/* A folded block prints open (a closed <details> would print its summary only). */
static const char PRINT_OPEN_JS[] =
    "window.addEventListener('beforeprint',function(){"
    "document.querySelectorAll('details').forEach(function(d){d.open=true})});";

/* Sorts a table by the clicked column; numeric cells carry data-v. */
static const char SORT_JS[] =
    "document.querySelectorAll('table.sortable').forEach(function(t){"
    "t.querySelectorAll('thead th').forEach(function(th,i){th.addEventListener('click',"
    "function(){var asc=!th.classList.contains('asc');"
    "t.querySelectorAll('thead th').forEach(function(h){h.classList.remove('asc','desc')});"
    "th.classList.add(asc?'asc':'desc');var b=t.tBodies[0];"
    "var rows=Array.prototype.slice.call(b.rows);rows.sort(function(x,y){"
    "var a=x.cells[i],c=y.cells[i];var va=a&&a.dataset.v,vc=c&&c.dataset.v;var r;"
    "if(va!==undefined&&vc!==undefined)r=parseFloat(va)-parseFloat(vc);"
    "else r=(a?a.textContent:'').localeCompare(c?c.textContent:'');"
    "return asc?r:-r});rows.forEach(function(x){b.appendChild(x)})})})});";

int rl_html_escape(const char *s, char **out)
{
    rl_buf b = {0};
    rl_buf_puts(&b, "");
    rl_buf_put_escaped(&b, s ? s : "");
    if (b.err) {
        rl_buf_free(&b);
        return rl_error_set(RL_ENOMEM, "report: out of memory");
    }
    *out = b.data;
    return RL_OK;
}

int rl_report_new(rl_report **out, const char *title)
{
    rl_report *r = calloc(1, sizeof *r);
    if (!r || !(r->title = strdup(title ? title : "runlab report"))) {
        free(r);
        return rl_error_set(RL_ENOMEM, "report: out of memory");
    }
    *out = r;
    return RL_OK;
}

void rl_report_free(rl_report *r)
{
    if (!r)
        return;
    free(r->title);
    rl_buf_free(&r->body);
    free(r);
}

static int status(rl_report *r)
{
    return r->body.err ? rl_error_set(RL_ENOMEM, "report: out of memory") : RL_OK;
}

/* Closes an open line of links before any other block. */
static void end_inline(rl_report *r)
{
    if (r->in_links) {
        rl_buf_puts(&r->body, "</p>\n");
        r->in_links = false;
    }
}

static int check_block(rl_report *r)
{
    if (!r)
        return rl_error_set(RL_EINVAL, "report: NULL report");
    if (r->in_kv || r->in_table)
        return rl_error_set(RL_ESTATE, "report: a table is still open");
    end_inline(r);
    return RL_OK;
}

int rl_report_details_begin(rl_report *r, const char *summary)
{
    int rc = check_block(r);
    if (rc < 0)
        return rc;
    if (r->in_details)
        return rl_error_set(RL_ESTATE, "report: a folded block is already open");
    rl_buf_puts(&r->body, "<details><summary>");
    rl_buf_put_escaped(&r->body, summary ? summary : "");
    rl_buf_puts(&r->body, "</summary>\n");
    r->in_details = r->details_used = true;
    return status(r);
}

int rl_report_details_end(rl_report *r)
{
    int rc = check_block(r);
    if (rc < 0)
        return rc;
    if (!r->in_details)
        return rl_error_set(RL_ESTATE, "report: no folded block open");
    rl_buf_puts(&r->body, "</details>\n");
    r->in_details = false;
    return status(r);
}

int rl_report_heading(rl_report *r, int level, const char *text)
{
    int rc = check_block(r);
    if (rc < 0)
        return rc;
    if (level < 1 || level > 4)
        return rl_error_set(RL_EINVAL, "report: heading level %d not in 1..4", level);
    rl_buf_printf(&r->body, "<h%d>", level);
    rl_buf_put_escaped(&r->body, text ? text : "");
    rl_buf_printf(&r->body, "</h%d>\n", level);
    return status(r);
}

int rl_report_paragraph(rl_report *r, const char *text)
{
    int rc = check_block(r);
    if (rc < 0)
        return rc;
    rl_buf_puts(&r->body, "<p>");
    rl_buf_put_escaped(&r->body, text ? text : "");
    rl_buf_puts(&r->body, "</p>\n");
    return status(r);
}

static void put_badge(rl_buf *b, rl_badge badge)
{
    unsigned k = (unsigned)badge < BADGE_COUNT ? (unsigned)badge : RL_BADGE_NA;
    rl_buf_printf(b, "<span class=\"badge %s\">%s</span>", BADGE_CLASS[k], BADGE_NAMES[k]);
}

int rl_report_status(rl_report *r, const char *label, rl_badge badge)
{
    int rc = check_block(r);
    if (rc < 0)
        return rc;
    rl_buf_puts(&r->body, "<p>");
    rl_buf_put_escaped(&r->body, label ? label : "");
    rl_buf_puts(&r->body, " ");
    put_badge(&r->body, badge);
    rl_buf_puts(&r->body, "</p>\n");
    return status(r);
}

/* Words with a '-' or '/' inside up to this many bytes are kept on one line; a longer one
 * (a path) may break where it overflows. */
enum { KEEP_WORD_BYTES = 60 };

/* Appends `s` escaped, with each word (a run of non-blanks) that holds a '-' or '/' and is
 * at most KEEP_WORD_BYTES long in <span class="w">, so that it never breaks across lines;
 * the text content is the same. */
static void put_text_words(rl_buf *b, const char *s)
{
    while (*s) {
        size_t blank = strspn(s, " \t\n");
        if (blank) {
            rl_buf_put(b, s, blank);
            s += blank;
            continue;
        }
        size_t n = strcspn(s, " \t\n");
        char *word = strndup(s, n);
        if (!word) {
            b->err = RL_ENOMEM;
            return;
        }
        bool keep = n <= KEEP_WORD_BYTES && strpbrk(word, "-/") != NULL;
        if (keep)
            rl_buf_puts(b, "<span class=\"w\">");
        rl_buf_put_escaped(b, word);
        if (keep)
            rl_buf_puts(b, "</span>");
        free(word);
        s += n;
    }
}

int rl_report_kv_begin(rl_report *r, const char *caption)
{
    int rc = check_block(r);
    if (rc < 0)
        return rc;
    rl_buf_puts(&r->body, "<div class=\"scroll\"><table class=\"kv\">");
    if (caption) {
        rl_buf_puts(&r->body, "<caption>");
        rl_buf_put_escaped(&r->body, caption);
        rl_buf_puts(&r->body, "</caption>");
    }
    rl_buf_puts(&r->body, "\n");
    r->in_kv = true;
    return status(r);
}

int rl_report_kv(rl_report *r, const char *key, const char *value)
{
    if (!r || !r->in_kv)
        return rl_error_set(RL_ESTATE, "report: key/value row outside a key/value table");
    rl_buf_puts(&r->body, "<tr><th scope=\"row\">");
    rl_buf_put_escaped(&r->body, key ? key : "");
    rl_buf_puts(&r->body, "</th><td>");
    put_text_words(&r->body, value ? value : "");
    rl_buf_puts(&r->body, "</td></tr>\n");
    return status(r);
}

int rl_report_kv_end(rl_report *r)
{
    if (!r || !r->in_kv)
        return rl_error_set(RL_ESTATE, "report: no key/value table open");
    rl_buf_puts(&r->body, "</table></div>\n");
    r->in_kv = false;
    return status(r);
}

/* True (and the value) when the whole cell is a number, optionally followed by '%'. */
static bool parse_number(const char *s, double *v)
{
    if (!s)
        return false;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return false;
    char *end;
    double d = strtod(s, &end);
    if (end == s || !isfinite(d))
        return false;
    /* strtod accepts hex and "inf"/"nan"; tables show decimal numbers only. */
    if (strpbrk(s, "xXnN"))
        return false;
    if (*end == '%')
        end++;
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return false;
    *v = d;
    return true;
}

int rl_report_table_begin(rl_report *r, const char *caption, const char *const *headers,
                          size_t ncols, unsigned flags)
{
    int rc = check_block(r);
    if (rc < 0)
        return rc;
    if (ncols == 0 || ncols > 1000 || !headers)
        return rl_error_set(RL_EINVAL, "report: table needs 1..1000 columns with headers");
    r->ncols = ncols;
    r->table_flags = flags;
    r->ntable++;
    if (flags & RL_TABLE_SORTABLE)
        r->sortable_used = true;
    rl_buf_printf(&r->body, "<div class=\"scroll\"><table class=\"data%s\">",
                  flags & RL_TABLE_SORTABLE ? " sortable" : "");
    if (caption) {
        rl_buf_puts(&r->body, "<caption>");
        rl_buf_put_escaped(&r->body, caption);
        rl_buf_puts(&r->body, "</caption>");
    }
    rl_buf_puts(&r->body, "\n<thead><tr>");
    for (size_t i = 0; i < ncols; i++) {
        rl_buf_puts(&r->body, "<th scope=\"col\">");
        rl_buf_put_escaped(&r->body, headers[i] ? headers[i] : "");
        rl_buf_puts(&r->body, "</th>");
    }
    rl_buf_puts(&r->body, "</tr></thead>\n<tbody>\n");
    r->in_table = true;
    return status(r);
}

static bool anchor_ok(const char *a)
{
    size_t n = strlen(a);
    if (n == 0 || n > 100)
        return false;
    for (const char *p = a; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
            return false;
    return true;
}

static int check_href(const char *href)
{
    if (!href || !*href)
        return rl_error_set(RL_EINVAL, "report: empty link");
    if (href[0] == '#') /* a place in the same page */
        return anchor_ok(href + 1) ? RL_OK
                                   : rl_error_set(RL_EINVAL, "report: link '%s': an anchor is "
                                                             "1..100 of [A-Za-z0-9_-]", href);
    size_t scheme = strcspn(href, ":/?#");
    if (href[scheme] == ':' || href[0] == '/' || href[0] == '\\')
        return rl_error_set(RL_EINVAL,
                            "report: link '%s' must be a relative path to a "
                            "sibling file",
                            href);
    const char *p = href;
    while (*p) {
        size_t n = strcspn(p, "/\\");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return rl_error_set(RL_EINVAL, "report: link '%s' leaves the report's directory", href);
        p += n;
        if (*p)
            p++;
    }
    for (p = href; *p; p++)
        if ((unsigned char)*p < 0x20)
            return rl_error_set(RL_EINVAL, "report: link contains a control character");
    return RL_OK;
}

/* Percent-encodes what a URL path cannot hold raw, then the result is attribute-escaped. */
static void put_href(rl_buf *b, const char *href)
{
    rl_buf tmp = {0};
    if (href[0] == '#') { /* checked by check_href: nothing to encode */
        rl_buf_put_escaped(b, href);
        return;
    }
    for (const unsigned char *p = (const unsigned char *)href; *p; p++) {
        if (*p == ' ' || *p == '"' || *p == '<' || *p == '>' || *p == '%' || *p == '#' ||
            *p == '?' || *p >= 0x80)
            rl_buf_printf(&tmp, "%%%02X", *p);
        else
            rl_buf_put(&tmp, (const char *)p, 1);
    }
    if (tmp.err)
        b->err = tmp.err;
    else
        rl_buf_put_escaped(b, tmp.data ? tmp.data : "");
    rl_buf_free(&tmp);
}

static void put_cell(rl_report *r, const rl_report_cell *c)
{
    rl_buf *b = &r->body;
    double v;
    switch (c->kind) {
    case RL_CELL_BADGE:
        rl_buf_printf(b, "<td data-v=\"%d\">", (int)c->badge);
        put_badge(b, c->badge);
        rl_buf_puts(b, "</td>");
        return;
    case RL_CELL_LINK:
        rl_buf_puts(b, "<td><a href=\"");
        put_href(b, c->href);
        rl_buf_puts(b, "\">");
        rl_buf_put_escaped(b, c->text ? c->text : c->href);
        rl_buf_puts(b, "</a></td>");
        return;
    case RL_CELL_TEXT:
    default:
        if (parse_number(c->text, &v)) { /* one word, and a leading '-' is no break */
            rl_buf_printf(b, "<td class=\"num\" data-v=\"%.17g\">", v);
            rl_buf_put_escaped(b, c->text);
            rl_buf_puts(b, "</td>");
            return;
        }
        rl_buf_puts(b, c->text && strlen(c->text) > PROSE_CHARS ? "<td class=\"prose\">" : "<td>");
        put_text_words(b, c->text ? c->text : "");
        rl_buf_puts(b, "</td>");
        return;
    }
}

int rl_report_table_row_cells(rl_report *r, const rl_report_cell *cells)
{
    if (!r || !r->in_table)
        return rl_error_set(RL_ESTATE, "report: table row outside a table");
    for (size_t i = 0; i < r->ncols; i++)
        if (cells[i].kind == RL_CELL_LINK) {
            int rc = check_href(cells[i].href);
            if (rc < 0)
                return rc;
        }
    rl_buf_puts(&r->body, "<tr>");
    for (size_t i = 0; i < r->ncols; i++)
        put_cell(r, &cells[i]);
    rl_buf_puts(&r->body, "</tr>\n");
    return status(r);
}

int rl_report_table_row(rl_report *r, const char *const *cells)
{
    if (!r || !r->in_table)
        return rl_error_set(RL_ESTATE, "report: table row outside a table");
    rl_buf_puts(&r->body, "<tr>");
    for (size_t i = 0; i < r->ncols; i++) {
        rl_report_cell c = {RL_CELL_TEXT, cells ? cells[i] : NULL, NULL, RL_BADGE_NA};
        put_cell(r, &c);
    }
    rl_buf_puts(&r->body, "</tr>\n");
    return status(r);
}

int rl_report_table_end(rl_report *r)
{
    if (!r || !r->in_table)
        return rl_error_set(RL_ESTATE, "report: no table open");
    rl_buf_puts(&r->body, "</tbody></table></div>\n");
    r->in_table = false;
    return status(r);
}

/* Appends an SVG document drawn with the default id prefix ("rl") with its clip-path ids
 * renamed to `prefix`, as if drawn with it. Only the two forms the SVG writer emits are
 * renamed; both hold a '"' or '<', which text in the document has escaped. */
static void put_svg_renamed(rl_buf *b, const char *s, const char *prefix)
{
    static const char *const forms[] = {"<clipPath id=\"", "clip-path=\"url(#"};
    const char *from = s, *hit;
    while ((hit = strstr(s, "rl-c")) != NULL) {
        bool ours = false;
        for (size_t k = 0; k < 2 && !ours; k++) {
            size_t n = strlen(forms[k]);
            ours = (size_t)(hit - from) >= n && memcmp(hit - n, forms[k], n) == 0;
        }
        s = hit + 4;
        if (!ours)
            continue;
        rl_buf_put(b, from, (size_t)(hit - from));
        rl_buf_puts(b, prefix);
        rl_buf_puts(b, "-c");
        from = s;
    }
    rl_buf_puts(b, from);
}

int rl_report_figure_svg(rl_report *r, const char *svg, const char *caption)
{
    return rl_report_figure_svg_at(r, svg, caption, NULL);
}

int rl_report_figure_svg_at(rl_report *r, const char *svg, const char *caption,
                            const char *anchor)
{
    int rc = check_block(r);
    if (rc < 0)
        return rc;
    if (!svg)
        return rl_error_set(RL_EINVAL, "report: NULL SVG");
    if (anchor && !anchor_ok(anchor))
        return rl_error_set(RL_EINVAL, "report: figure anchor '%s': use 1..100 of [A-Za-z0-9_-]",
                            anchor);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "fig%d", ++r->nfig);
    /* An XML declaration is not allowed inside HTML. */
    const char *start = strstr(svg, "<svg");
    if (anchor)
        rl_buf_printf(&r->body, "<figure id=\"%s\">\n", anchor);
    else
        rl_buf_puts(&r->body, "<figure>\n");
    put_svg_renamed(&r->body, start ? start : svg, prefix);
    if (caption) {
        rl_buf_puts(&r->body, "<figcaption>");
        rl_buf_put_escaped(&r->body, caption);
        rl_buf_puts(&r->body, "</figcaption>\n");
    }
    rl_buf_puts(&r->body, "</figure>\n");
    return status(r);
}

int rl_report_figure(rl_report *r, struct rl_figure *fig, const char *caption)
{
    int rc = check_block(r);
    if (rc < 0)
        return rc;
    if (!fig)
        return rl_error_set(RL_EINVAL, "report: NULL figure");
    char *svg = NULL;
    if ((rc = rl_figure_to_svg(fig, NULL, &svg, NULL)) < 0)
        return rc;
    rc = rl_report_figure_svg(r, svg, caption);
    free(svg);
    return rc;
}

int rl_report_link(rl_report *r, const char *href, const char *text)
{
    if (!r)
        return rl_error_set(RL_EINVAL, "report: NULL report");
    if (r->in_kv || r->in_table)
        return rl_error_set(RL_ESTATE, "report: a table is still open");
    int rc = check_href(href);
    if (rc < 0)
        return rc;
    if (!r->in_links) {
        rl_buf_puts(&r->body, "<p class=\"links\">");
        r->in_links = true;
    }
    rl_buf_puts(&r->body, "<a href=\"");
    put_href(&r->body, href);
    rl_buf_puts(&r->body, "\">");
    rl_buf_put_escaped(&r->body, text ? text : href);
    rl_buf_puts(&r->body, "</a> ");
    return status(r);
}

int rl_report_to_string(rl_report *r, char **out, size_t *out_len)
{
    if (!r || !out)
        return rl_error_set(RL_EINVAL, "report: NULL argument");
    if (r->in_kv || r->in_table)
        return rl_error_set(RL_ESTATE, "report: a table is still open");
    if (r->in_details)
        return rl_error_set(RL_ESTATE, "report: a folded block is still open");
    end_inline(r);
    if (r->body.err)
        return rl_error_set(RL_ENOMEM, "report: out of memory while building the report");
    rl_buf b = {0};
    rl_buf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                    "<meta name=\"generator\" content=\"runlab\">\n<title>");
    rl_buf_put_escaped(&b, r->title);
    rl_buf_puts(&b, "</title>\n<style>");
    rl_buf_puts(&b, CSS);
    rl_buf_puts(&b, "</style>\n</head>\n<body>\n<h1>");
    rl_buf_put_escaped(&b, r->title);
    rl_buf_puts(&b, "</h1>\n");
    if (r->body.data)
        rl_buf_put(&b, r->body.data, r->body.len);
    if (r->sortable_used) {
        rl_buf_puts(&b, "<script>");
        rl_buf_puts(&b, SORT_JS);
        rl_buf_puts(&b, "</script>\n");
    }
    if (r->details_used) {
        rl_buf_puts(&b, "<script>");
        rl_buf_puts(&b, PRINT_OPEN_JS);
        rl_buf_puts(&b, "</script>\n");
    }
    rl_buf_puts(&b, "</body>\n</html>\n");
    if (b.err) {
        rl_buf_free(&b);
        return rl_error_set(RL_ENOMEM, "report: out of memory");
    }
    *out = b.data;
    if (out_len)
        *out_len = b.len;
    return RL_OK;
}

int rl_report_write(rl_report *r, const char *path)
{
    char *html = NULL;
    size_t len = 0;
    int rc = rl_report_to_string(r, &html, &len);
    if (rc < 0)
        return rc;
    rc = rl_fs_write_atomic(path, html, len, 0644);
    free(html);
    return rc;
}
