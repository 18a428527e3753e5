/* The entry of the CDR decoder (rl_msg_decode): opens a payload, then runs the schema's
 * compiled plan (cdr_plan.c) when the encapsulation is final, else the tree walker (cdr.c).
 * It only calls down: neither the plan nor the walker calls back here. */
#include "cdr_internal.h"

#include "runlab/error.h"

static int decode(const rl_msgdef *def, const uint8_t *data, size_t len, unsigned flags,
                  rl_msg_visit_fn fn, void *ctx, int use_plan)
{
    cdr_dec d;
    int rc = cdr_open(&d, def, data, len);
    if (rc < 0)
        return rc;
    if (!fn)
        return rl_error_set(RL_EINVAL, "cdr: NULL visitor");
    if (flags & ~(unsigned)RL_MSG_DECODE_ARRAYS)
        return rl_error_set(RL_EINVAL, "cdr: unknown decode flags 0x%x", flags);
    d.fn = fn;
    d.ctx = ctx;
    d.values = (flags & RL_MSG_DECODE_ARRAYS) != 0;
    rc = use_plan && def->plan && d.top_ext == RL_MSG_EXT_FINAL
             ? cdr_plan_run(&d, def->plan)
             : cdr_decode_value(&d, def->root, NULL, 0);
    if (d.stopped)
        return d.stopped;
    return rc < 0 ? rc : RL_OK;
}

int rl_msg_decode(const rl_msgdef *def, const uint8_t *data, size_t len, rl_msg_visit_fn fn,
                  void *ctx)
{
    return decode(def, data, len, 0, fn, ctx, 1);
}

int rl_msg_decode_flags(const rl_msgdef *def, const uint8_t *data, size_t len, unsigned flags,
                        rl_msg_visit_fn fn, void *ctx)
{
    return decode(def, data, len, flags, fn, ctx, 1);
}

int cdr_decode_tree(const rl_msgdef *def, const uint8_t *data, size_t len, unsigned flags,
                    rl_msg_visit_fn fn, void *ctx)
{
    return decode(def, data, len, flags, fn, ctx, 0);
}
