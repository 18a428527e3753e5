/* Settings of the metric being run (its section of the evaluation's configuration), read
 * with the key's path named in every error: numbers, and the resolution that reasons and
 * limits use. */
#include "eval/eval_sink.h"

#include "runlab/error.h"

#include <json-c/json.h>

static int setting(eval_ctx *ctx, const char *key, json_type want, json_object **out)
{
    json_object *v = NULL;
    if (!ctx->settings || !json_object_object_get_ex(ctx->settings, key, &v) || !v)
        return rl_error_set(RL_EINVAL, "configuration: %s.%s: missing", ctx->metric->name, key);
    json_type got = json_object_get_type(v);
    if (got != want && !(want == json_type_double && got == json_type_int))
        return rl_error_set(RL_EINVAL, "configuration: %s.%s: expected a %s, found a %s",
                            ctx->metric->name, key, json_type_to_name(want),
                            json_type_to_name(got));
    *out = v;
    return RL_OK;
}

int eval_setting_f64(eval_ctx *ctx, const char *key, double *out)
{
    json_object *v = NULL;
    int rc = setting(ctx, key, json_type_double, &v);
    if (rc == RL_OK)
        *out = json_object_get_double(v);
    return rc;
}

int eval_setting_resolution(eval_ctx *ctx, double *out)
{
    int rc = eval_setting_f64(ctx, "resolution", out);
    if (rc == RL_OK && !(*out >= 0 && *out < 1e6))
        rc = rl_error_set(RL_EINVAL, "configuration: %s.resolution: must be >= 0",
                          ctx->metric->name);
    return rc;
}
