/* `runlab experiment` and the one-recorder rule: a recorder already serving the domain blocks
 * an experiment that would start its own, and the message says how to go on (stop it, or
 * drive it with --attach); with --attach there must be one, and it must be free. */
#include "experiment_attach.h"

#include <stdio.h>

int experiment_attach_refused(int domain, int attach, const rl_lab_heartbeat *hb, char *why,
                              size_t cap)
{
    if (!attach && hb) {
        snprintf(why, cap,
                 "another recorder answers on DDS domain %d (host %s, pid %d, state %s): not "
                 "deploying a second one. Either drive that recorder: add --attach; or stop it "
                 "(Ctrl-C where it runs, or kill %d on %s) and run this again",
                 domain, hb->host, hb->pid, rl_record_state_name(hb->state), hb->pid, hb->host);
        return 1;
    }
    if (attach && !hb) {
        snprintf(why, cap,
                 "--attach: no recorder answers on DDS domain %d: start one (runlab recorder "
                 "--domain %d), or leave out --attach to let the experiment start its own",
                 domain, domain);
        return 1;
    }
    if (attach && (hb->state == RL_RECORD_ARMED || hb->state == RL_RECORD_RECORDING)) {
        snprintf(why, cap,
                 "--attach: the recorder on DDS domain %d (host %s, pid %d) is busy with run "
                 "%s (%s): wait until that run ends",
                 domain, hb->host, hb->pid, hb->run_id, rl_record_state_name(hb->state));
        return 1;
    }
    return 0;
}
