/* libFuzzer target for the exact decimal readers (runlab/number.h's rl_scan_decimal and the
 * loader's inline rl_scan_decimal_inline): on any text they must stop where strtod stops
 * and give the same bits, or decline (NULL), and agree with each other. The text is given
 * in a buffer of exactly its length, so ASan sees any read past `end`. */
#include "core/number_scan.h"
#include "runlab/number.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t bits_of(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 80)
        size = 80;
    char *text = malloc(size ? size : 1);
    char cstr[81];
    if (!text)
        return 0;
    memcpy(text, data, size);
    memcpy(cstr, data, size);
    cstr[size] = '\0';
    double got = 0, got_inline = 0;
    const char *stop = rl_scan_decimal(text, text + size, &got);
    const char *stop_inline = rl_scan_decimal_inline(text, text + size, &got_inline);
    if (stop_inline != stop || (stop && bits_of(got) != bits_of(got_inline))) {
        fprintf(stderr, "'%s': inline reader differs\n", cstr);
        abort();
    }
    if (stop) { /* strtod stops at a NUL byte, as these readers do */
        char *end;
        double want = rl_parse_f64(cstr, &end);
        if (end - cstr != stop - text || bits_of(want) != bits_of(got)) {
            fprintf(stderr, "'%s': strtod %.17g (%td bytes), rl_scan_decimal %.17g (%td)\n",
                    cstr, want, end - cstr, got, stop - text);
            abort();
        }
    }
    free(text);
    return 0;
}
