/* The expat plumbing both map readers share (Lanelet2 OSM, CommonRoad XML): a parse
 * state to embed, attribute lookup, errors that name the file, line and column, element
 * ids as 64-bit integers, and running the parse. */
#ifndef RUNLAB_SRC_FORMATS_MAP_XML_H
#define RUNLAB_SRC_FORMATS_MAP_XML_H

#include <expat.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rl_map_xml {
    XML_Parser xp;
    const char *name; /* the file, for messages */
    int rc;           /* RL_OK, or the first error (the parse stops there) */
} rl_map_xml;

/* The value of attribute `key`, or NULL. */
const char *rl_map_xml_attr(const XML_Char **a, const char *key);
/* Stops the parse with RL_EPARSE "name:line:col: <what>" (the first error stays). */
__attribute__((format(printf, 2, 3))) void rl_map_xml_fail(rl_map_xml *x, const char *fmt, ...);
/* Stops the parse with status rc (its message already set). */
void rl_map_xml_stop(rl_map_xml *x, int rc);
/* The element's id attribute as a 64-bit integer; false (parse stopped) when missing or
 * not one. */
bool rl_map_xml_id(rl_map_xml *x, const char *el, const XML_Char **a, int64_t *id);
/* Parses data (at most INT32_MAX bytes) with the handlers (text may be NULL) and user data
 * ud; malformed XML becomes RL_EPARSE naming the line and column. Returns x->rc. The
 * parser stays for messages until rl_map_xml_free. */
int rl_map_xml_parse(rl_map_xml *x, const char *data, size_t len, void *ud,
                     XML_StartElementHandler start, XML_EndElementHandler end,
                     XML_CharacterDataHandler text);
void rl_map_xml_free(rl_map_xml *x);

#endif
