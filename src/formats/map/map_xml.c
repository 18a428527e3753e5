/* The expat plumbing both map readers share (map_xml.h): attribute lookup, errors naming
 * file, line and column, 64-bit element ids, and one parse run. */
#include "map_xml.h"

#include "map_internal.h"
#include "runlab/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *rl_map_xml_attr(const XML_Char **a, const char *key)
{
    for (; a && a[0]; a += 2)
        if (strcmp(a[0], key) == 0)
            return a[1];
    return NULL;
}

void rl_map_xml_fail(rl_map_xml *x, const char *fmt, ...)
{
    if (x->rc < 0)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    x->rc = rl_error_set(RL_EPARSE, "%s:%lu:%lu: %s", x->name,
                         (unsigned long)XML_GetCurrentLineNumber(x->xp),
                         (unsigned long)XML_GetCurrentColumnNumber(x->xp) + 1, msg);
    XML_StopParser(x->xp, XML_FALSE);
}

void rl_map_xml_stop(rl_map_xml *x, int rc)
{
    if (x->rc >= 0) {
        x->rc = rc;
        XML_StopParser(x->xp, XML_FALSE);
    }
}

bool rl_map_xml_id(rl_map_xml *x, const char *el, const XML_Char **a, int64_t *id)
{
    const char *s = rl_map_xml_attr(a, "id");
    if (!s) {
        rl_map_xml_fail(x, "<%s> without an id", el);
        return false;
    }
    if (!rl_map_parse_id(s, id)) {
        rl_map_xml_fail(x, "<%s id='%.40s'>: id is not a 64-bit integer", el, s);
        return false;
    }
    return true;
}

int rl_map_xml_parse(rl_map_xml *x, const char *data, size_t len, void *ud,
                     XML_StartElementHandler start, XML_EndElementHandler end,
                     XML_CharacterDataHandler text)
{
    x->xp = XML_ParserCreate(NULL);
    if (!x->xp)
        return x->rc = rl_error_set(RL_ENOMEM, "out of memory for the XML parser");
    XML_SetUserData(x->xp, ud);
    XML_SetElementHandler(x->xp, start, end);
    if (text)
        XML_SetCharacterDataHandler(x->xp, text);
    if (XML_Parse(x->xp, data, (int)len, 1) == XML_STATUS_ERROR && x->rc == RL_OK)
        x->rc = rl_error_set(RL_EPARSE, "%s:%lu:%lu: malformed XML: %s", x->name,
                             (unsigned long)XML_GetCurrentLineNumber(x->xp),
                             (unsigned long)XML_GetCurrentColumnNumber(x->xp) + 1,
                             XML_ErrorString(XML_GetErrorCode(x->xp)));
    return x->rc;
}

void rl_map_xml_free(rl_map_xml *x)
{
    if (x->xp)
        XML_ParserFree(x->xp);
    x->xp = NULL;
}
