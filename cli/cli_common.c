/* The helpers every subcommand shares: the error line format ("runlab: <what>: <why>"),
 * usage errors with their hint, the --help check, and what several subcommands read the
 * same way (a spec file, numeric options, Ctrl+C). They sit below the subcommands and
 * main.c, so the dependencies among the CLI's files point one way: main.c -> cmd_*.c ->
 * cli_common.c. */
#include "cli.h"

#include "runlab/error.h"
#include "runlab/yaml.h"

#include <json-c/json.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int cli_fail(const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "runlab: %s: ", what);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return RL_EXIT_FAILURE;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "runlab: %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'runlab %s --help'.\n", cmd);
    va_end(ap);
    return RL_EXIT_USAGE;
}

bool cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return false;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return true;
    }
    return false;
}

void cli_print_escaped(FILE *f, const char *s)
{
    cli_print_escaped_n(f, s, strlen(s));
}

void cli_print_escaped_n(FILE *f, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (const unsigned char *end = p + len; p < end; p++) {
        if (*p == '\\')
            fputs("\\\\", f);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p == '\r')
            fputs("\\r", f);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
}

int cli_read_spec(const char *cmd, const char *path, struct json_object **out)
{
    *out = NULL;
    if (rl_yaml_read_file(path, 1 << 20, out) < 0)
        return cli_fail(cmd, "%s", rl_error_last());
    if (!json_object_is_type(*out, json_type_object))
        return cli_fail(cmd, "%s: expected a mapping at the top", path);
    return RL_EXIT_OK;
}

int cli_parse_figures(const char *cmd, const char *text, rl_eval_figures *out)
{
    if (strcmp(text, "svg") == 0)
        *out = RL_EVAL_FIGURES_SVG;
    else if (strcmp(text, "png,svg") == 0 || strcmp(text, "svg,png") == 0)
        *out = RL_EVAL_FIGURES_PNG_SVG;
    else
        return cli_usage_error(cmd, "--figures '%s': expected png,svg or svg", text);
    return RL_EXIT_OK;
}

int cli_parse_number(const char *cmd, const char *opt, const char *text, double lo, double hi,
                     int integer, double *out)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (!*text || *end || !(v >= lo && v <= hi) || (integer && v != floor(v)))
        return cli_usage_error(cmd, "%s %s: expected %s %g..%g", opt, text,
                               integer ? "an integer" : "a number", lo, hi);
    *out = v;
    return RL_EXIT_OK;
}

int cli_parse_domain(const char *cmd, const char *text, int *out)
{
    double v = 0;
    int ec = cli_parse_number(cmd, "--domain", text, 0, 232, 1, &v);
    *out = (int)v;
    return ec;
}

void cli_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000l};
    nanosleep(&ts, NULL);
}

void cli_catch_signals(void (*handler)(int), struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old[0]);
    sigaction(SIGTERM, &sa, &old[1]);
}

void cli_restore_signals(const struct sigaction *old)
{
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
}
