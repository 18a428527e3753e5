/* libFuzzer target for the evaluation's reader of recordings: an MCAP bag from memory is
 * decoded by its own schemas into the run the metrics see (channels classified by topic,
 * fields through compiled paths, triggers, trajectory points), then topic_sanity,
 * states_speed and obs run on it with the default settings. Nothing may crash, leak or
 * read out of bounds, whatever the stamps, counts and values. */
#include "eval/eval_config.h"
#include "eval/eval_load.h"
#include "eval/eval_sink.h"
#include "runlab/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static json_object *config;
    if (!config && eval_config_build(NULL, &config) < 0)
        abort(); /* the built-in default.yaml must parse */
    eval_loaded *l;
    if (eval_load_bag_mem(data, size, &l) < 0)
        return 0;
    bool chosen[64] = {0};
    for (size_t i = 0; i < eval_metric_total && i < 64; i++)
        chosen[i] = strcmp(eval_metrics[i].name, "topic_sanity") == 0 ||
                    strcmp(eval_metrics[i].name, "states_speed") == 0 ||
                    strcmp(eval_metrics[i].name, "obs") == 0;
    struct eval_sink sink = {0};
    (void)eval_run_metrics(eval_loaded_run(l), config, chosen, &sink);
    eval_sink_clear(&sink);
    eval_loaded_free(l);
    return 0;
}
