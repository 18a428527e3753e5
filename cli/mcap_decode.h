/* Decoded payloads for `runlab mcap cat --json` (cli/mcap_decode.c): per channel, the
 * schema parsed once; each message written as "message" (decoded) or "data_base64". */
#ifndef RUNLAB_CLI_MCAP_DECODE_H
#define RUNLAB_CLI_MCAP_DECODE_H

#include "runlab/json.h"
#include "runlab/mcap.h"

typedef struct mcap_payloads mcap_payloads;

/* `raw`: never decode (always "data_base64"). `file` names the input in warnings. */
int mcap_payloads_new(mcap_payloads **out, rl_mcap_indexed *x, const char *file, int raw);
/* Writes the "message" or "data_base64" member of one message into the open object `j`.
 * A payload that does not decode gets "data_base64" and "decode_error", a line on stderr,
 * and makes mcap_payloads_failed true. Returns RL_OK or a writer error. */
int mcap_payloads_write(mcap_payloads *p, const rl_mcap_channel *ch, const rl_mcap_message *m,
                        rl_json_writer *j);
int mcap_payloads_failed(const mcap_payloads *p);
void mcap_payloads_free(mcap_payloads *p);
/* Removes every `flag` before "--" from argv (argv[argc] stays NULL); 1 when one was there. */
int mcap_take_flag(int *argc, char **argv, const char *flag);

/* `runlab mcap schema` and `runlab mcap export` (cli/cmd_mcap_msg.c). */
int cmd_mcap_schema(int argc, char **argv);
int cmd_mcap_export(int argc, char **argv);

#endif
