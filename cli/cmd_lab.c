/* `runlab experiment`: the lab's control flow: starts its own recorder (tied to it by a
 * control pipe) or, with --attach, drives the one serving the domain; waits for the
 * vehicles' READY, prepare (ARMED), begin, START, runs, STOP, finish, publishing its own
 * heartbeat meanwhile; a recorder that fails, exits or falls silent, or a vehicle that falls
 * silent, stops the experiment at once (STOP first, always). Its choices and records are in
 * experiment_flow.c, the one-recorder rule in experiment_attach.c, the --recorder-config
 * check in recorder_config.c; `runlab recorder` itself is cmd_recorder.c. Prints the run
 * directory as its last line. */
#include "cli.h"
#include "experiment_attach.h"
#include "experiment_flow.h"
#include "recorder_config.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"
#include "runlab/lab.h"
#include "runlab/time.h"
#include "runlab/yaml.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Set by the signal handler, read by the waiting loops. */
static volatile sig_atomic_t g_signal;

static void on_signal(int sig)
{
    g_signal = sig;
}

enum { MAX_PATTERNS = RECORDER_CONFIG_MAX_PATTERNS, MAX_VEHICLES = 256 };

/* ---- runlab experiment -------------------------------------------------------------- */

static void experiment_usage(FILE *out)
{
    fprintf(out,
            "Usage: runlab experiment [SPEC.yaml] [--domain D] [--home DIR] [--vehicles 1,2,...]\n"
            "                         [--duration SEC] [--map FILE | --no-map] [--topic PATTERN]...\n"
            "                         [--recorder-config FILE] [--ready-timeout SEC]\n"
            "                         [--vehicle-timeout SEC] [--on-vehicle-loss stop|continue]\n"
            "                         [--attach]\n\n"
            "Runs one recorded experiment on DDS domain D: refuses when another recorder answers\n"
            "on the domain, starts its own `runlab recorder`, waits for the vehicles' READY,\n"
            "prepares the run (ARMED), begins, publishes START, runs for the duration or until\n"
            "Ctrl-C, publishes STOP and finishes. STOP always comes before finish and before any\n"
            "process is stopped. A recorder that reports FAILED, exits, or sends no heartbeat for\n"
            "the heartbeat timeout stops the experiment at once as failed; a recorder that died\n"
            "leaves its run repaired (bag recovered, manifest FAILED with the reason printed).\n"
            "While it drives the run it publishes its own heartbeat; if it dies or stops, the\n"
            "recorder ends the run INTERRUPTED (\"control flow lost\").\n\n"
            "  --vehicles 1,2,...      the vehicle ids; all must report READY. Without it: the\n"
            "                          vehicles that report READY within the ready timeout (named\n"
            "                          at start); none at all refuses to start (exit 2)\n"
            "  --map FILE              the run's map. Without it: the map announced on rt/lab/map\n"
            "                          (runlab sim announces its own), else $RUNLAB_LAB_MAP, else\n"
            "                          none (warned at start)\n"
            "  --no-map                record the run without a map, whatever is announced\n"
            "  --recorder-config FILE  handed to the recorder as its --config (schemas for\n"
            "                          writers without type information, compression, lock_dir,\n"
            "                          topics); checked before anything starts\n"
            "  --ready-timeout SEC     how long to wait for READY (default 30)\n"
            "  --vehicle-timeout SEC   a vehicle whose rt/vehicle/<id>/state is silent for longer\n"
            "                          after START is lost (default 1.5)\n"
            "  --on-vehicle-loss stop|continue\n"
            "                          stop (default): STOP, the run ends FAILED naming the\n"
            "                          vehicle and time; continue: the loss is said and recorded\n"
            "                          (manifest and experiment.json: vehicle_losses), the run\n"
            "                          goes on\n"
            "  --attach                drive the recorder already serving domain D (e.g. a\n"
            "                          `runlab recorder` the lab keeps running) instead of\n"
            "                          starting one; it records with its own home, topics and\n"
            "                          config (--home, --topic and --recorder-config do not\n"
            "                          apply) and serves on afterwards. Fails (exit 1) when no\n"
            "                          recorder answers within 5 s or it is busy with another run\n\n"
            "SPEC.yaml keys (options override them): domain, home, vehicles (list of ids),\n"
            "duration (s, default 10), map, topics (patterns), run_id, planner,\n"
            "ready_timeout (s, default 30), heartbeat_timeout (s, default 1.5),\n"
            "vehicle_timeout (s, default 1.5), on_vehicle_loss, recorder_config.\n\n"
            "Prints the run directory as its last line.\n"
            "Exit codes: 0 the run ended COMPLETE, or INTERRUPTED by Ctrl-C; 1 the experiment\n"
            "failed; 2 usage, or no vehicle reported READY.\n");
}

typedef struct experiment {
    json_object *spec;
    int domain;
    const char *home, *map, *run_id, *planner;
    int vehicles[MAX_VEHICLES];
    size_t vehicle_count;
    const char *topics[MAX_PATTERNS];
    size_t topic_count;
    double duration, ready_timeout, heartbeat_timeout, vehicle_timeout;
    int continue_on_vehicle_loss;  /* --on-vehicle-loss continue */
    int no_map;                    /* --no-map: none, whatever is announced */
    const char *recorder_config;   /* handed to the recorder as --config */
    int attach;                    /* drive the recorder already serving the domain */
} experiment;

/* The experiment's parameter snapshot for config/nodes.json, handed to prepare: its options,
 * and as its "scenario" what the run was set up to do. malloc'd JSON text, NULL on out of
 * memory (the run then records none). */
static char *experiment_parameters(const experiment *e, const int *vehicles, size_t nveh,
                                   const char *map)
{
    json_object *p = json_object_new_object(), *sc = json_object_new_object();
    json_object_object_add(p, "domain", json_object_new_int(e->domain));
    json_object_object_add(p, "home", e->home ? json_object_new_string(e->home) : NULL);
    json_object *topics = json_object_new_array();
    for (size_t i = 0; i < e->topic_count; i++)
        json_object_array_add(topics, json_object_new_string(e->topics[i]));
    json_object_object_add(p, "topics", topics);
    json_object_object_add(p, "ready_timeout", json_object_new_double(e->ready_timeout));
    json_object_object_add(p, "heartbeat_timeout", json_object_new_double(e->heartbeat_timeout));
    json_object_object_add(p, "vehicle_timeout", json_object_new_double(e->vehicle_timeout));
    json_object_object_add(p, "on_vehicle_loss",
                           json_object_new_string(e->continue_on_vehicle_loss ? "continue" : "stop"));
    json_object_object_add(p, "no_map", json_object_new_boolean(e->no_map));
    json_object_object_add(p, "recorder_config",
                           e->recorder_config ? json_object_new_string(e->recorder_config) : NULL);
    json_object *ids = json_object_new_array();
    for (size_t i = 0; i < nveh; i++)
        json_object_array_add(ids, json_object_new_int(vehicles[i]));
    json_object_object_add(sc, "vehicles", ids);
    json_object_object_add(sc, "duration", json_object_new_double(e->duration));
    json_object_object_add(sc, "map", map ? json_object_new_string(map) : NULL);
    json_object_object_add(sc, "planner", e->planner ? json_object_new_string(e->planner) : NULL);
    json_object_object_add(sc, "run_id", e->run_id ? json_object_new_string(e->run_id) : NULL);
    json_object_object_add(p, "scenario", sc);
    json_object *nodes = json_object_new_object(), *entry = json_object_new_object();
    json_object_object_add(entry, "parameters", p);
    json_object_object_add(entry, "source", json_object_new_string("prepare_recording"));
    json_object_object_add(nodes, "runlab_experiment", entry);
    const char *text = json_object_to_json_string_ext(nodes, JSON_C_TO_STRING_PLAIN);
    char *out = text ? strdup(text) : NULL;
    json_object_put(nodes);
    return out;
}

static int parse_vehicle_loss(const char *where, const char *text, experiment *e)
{
    if (strcmp(text, "stop") != 0 && strcmp(text, "continue") != 0)
        return cli_usage_error("experiment", "%s %s: expected stop or continue", where, text);
    e->continue_on_vehicle_loss = strcmp(text, "continue") == 0;
    return RL_EXIT_OK;
}

static int parse_vehicles(const char *text, experiment *e)
{
    e->vehicle_count = 0;
    const char *p = text;
    while (*p) {
        char *end = NULL;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 255 || (*end && *end != ','))
            return cli_usage_error("experiment", "--vehicles %s: expected ids 1..255 separated by commas",
                                   text);
        if (e->vehicle_count == MAX_VEHICLES)
            return cli_usage_error("experiment", "--vehicles: more than %d", MAX_VEHICLES);
        e->vehicles[e->vehicle_count++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return RL_EXIT_OK;
}

/* The spec's keys; every error names the file and key. */
static int read_spec(const char *path, experiment *e)
{
    int ec = cli_read_spec("experiment", path, &e->spec);
    if (ec != RL_EXIT_OK)
        return ec;
    json_object *s = e->spec;
    int64_t i64;
    double d;
    int rc;
    if ((rc = rl_json_get_int64(s, "domain", &i64)) == RL_OK) {
        if (i64 < 0 || i64 > 232)
            return cli_fail("experiment", "%s: domain: %lld is not 0..232", path, (long long)i64);
        e->domain = (int)i64;
    }
    if (rc == RL_EPARSE ||
        (rc = rl_json_get_string(s, "home", &e->home)) == RL_EPARSE ||
        (rc = rl_json_get_string(s, "map", &e->map)) == RL_EPARSE ||
        (rc = rl_json_get_string(s, "run_id", &e->run_id)) == RL_EPARSE ||
        (rc = rl_json_get_string(s, "planner", &e->planner)) == RL_EPARSE ||
        (rc = rl_json_get_string(s, "recorder_config", &e->recorder_config)) == RL_EPARSE)
        return cli_fail("experiment", "%s: %s", path, rl_error_last());
    const char *loss = NULL;
    if ((rc = rl_json_get_string(s, "on_vehicle_loss", &loss)) == RL_EPARSE ||
        (loss && strcmp(loss, "stop") != 0 && strcmp(loss, "continue") != 0))
        return cli_fail("experiment", "%s: on_vehicle_loss: expected stop or continue", path);
    if (loss)
        e->continue_on_vehicle_loss = strcmp(loss, "continue") == 0;
    static const char *const secs[] = {"duration", "ready_timeout", "heartbeat_timeout",
                                       "vehicle_timeout"};
    double *dst[] = {&e->duration, &e->ready_timeout, &e->heartbeat_timeout, &e->vehicle_timeout};
    for (int k = 0; k < 4; k++) {
        rc = rl_json_get_double(s, secs[k], &d);
        if (rc == RL_EPARSE || (rc == RL_OK && !(d >= 0)))
            return cli_fail("experiment", "%s: %s: expected seconds >= 0", path, secs[k]);
        if (rc == RL_OK && k == 3 && !(d > 0))
            return cli_fail("experiment", "%s: vehicle_timeout: expected seconds > 0", path);
        if (rc == RL_OK)
            *dst[k] = d;
    }
    json_object *arr = NULL;
    if ((rc = rl_json_get_array(s, "vehicles", &arr)) == RL_EPARSE)
        return cli_fail("experiment", "%s: %s", path, rl_error_last());
    for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
        json_object *v = json_object_array_get_idx(arr, i);
        int64_t id = json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : 0;
        if (id < 1 || id > 255 || e->vehicle_count == MAX_VEHICLES)
            return cli_fail("experiment", "%s: vehicles[%zu]: expected an id 1..255", path, i);
        e->vehicles[e->vehicle_count++] = (int)id;
    }
    arr = NULL;
    if ((rc = rl_json_get_array(s, "topics", &arr)) == RL_EPARSE)
        return cli_fail("experiment", "%s: %s", path, rl_error_last());
    for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
        json_object *t = json_object_array_get_idx(arr, i);
        if (!json_object_is_type(t, json_type_string) || e->topic_count == MAX_PATTERNS)
            return cli_fail("experiment", "%s: topics[%zu]: expected a pattern string", path, i);
        e->topics[e->topic_count++] = json_object_get_string(t);
    }
    return RL_EXIT_OK;
}

/* The control pipe tying a recorder we start to this process: the recorder gets the read
 * end (not close-on-exec, at 3 or above so it is no standard stream) and ends its run
 * "control flow lost" at end of file, which comes when this process ends however it ends:
 * only we hold the write end (close-on-exec, so no child inherits it). */
static int control_pipe(int fds[2])
{
    if (pipe2(fds, O_CLOEXEC) != 0)
        return rl_error_set_errno(RL_EIO, errno, "control pipe");
    if (fds[0] < 3) {
        int moved = fcntl(fds[0], F_DUPFD_CLOEXEC, 3);
        close(fds[0]);
        fds[0] = moved;
    }
    if (fds[0] < 0 || fcntl(fds[0], F_SETFD, 0) != 0) {
        int err = errno;
        if (fds[0] >= 0)
            close(fds[0]);
        close(fds[1]);
        fds[0] = fds[1] = -1;
        return rl_error_set_errno(RL_EIO, err, "control pipe");
    }
    return RL_OK;
}

/* Starts `runlab recorder` for the experiment's domain, home and topics, watching the
 * control pipe's read end `control_fd`. */
static int spawn_recorder(const experiment *e, int control_fd, pid_t *pid)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return rl_error_set_errno(RL_EIO, errno, "cannot find the runlab executable");
    self[n] = '\0';
    char domain[16], fd[16];
    snprintf(domain, sizeof domain, "%d", e->domain);
    snprintf(fd, sizeof fd, "%d", control_fd);
    const char *argv[12 + 2 * MAX_PATTERNS];
    size_t k = 0;
    argv[k++] = self;
    argv[k++] = "recorder";
    argv[k++] = "--domain";
    argv[k++] = domain;
    argv[k++] = "--control-fd";
    argv[k++] = fd;
    if (e->home) {
        argv[k++] = "--home";
        argv[k++] = e->home;
    }
    if (e->recorder_config) {
        argv[k++] = "--config";
        argv[k++] = e->recorder_config;
    }
    for (size_t i = 0; i < e->topic_count; i++) {
        argv[k++] = "--topic";
        argv[k++] = e->topics[i];
    }
    argv[k] = NULL;
    /* The recorder's stdout (its run directory) is not ours to print: it goes to stderr. */
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
    /* A process group of its own: Ctrl-C in the terminal reaches only the experiment, which
       publishes STOP and finishes the run before it stops the recorder (sharing the
       group, the recorder ended the run "recorder stopped" and the experiment's finish
       waited for an answer from a recorder already gone). The control pipe still ends the
       recorder with us. */
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    int rc = posix_spawn(pid, self, &fa, &attr, (char *const *)argv, environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return rl_error_set_errno(RL_EIO, rc, "cannot start runlab recorder");
    return RL_OK;
}

/* 1 when the child has exited (its status described in `how`); 0 without a child. */
static int child_gone(pid_t pid, int *reaped, char *how, size_t cap)
{
    if (pid <= 0)
        return 0;
    if (*reaped)
        return 1;
    int st = 0;
    if (waitpid(pid, &st, WNOHANG) != pid)
        return 0;
    *reaped = 1;
    if (WIFSIGNALED(st))
        snprintf(how, cap, "the recorder process was killed by signal %d", WTERMSIG(st));
    else
        snprintf(how, cap, "the recorder process exited with status %d", WEXITSTATUS(st));
    return 1;
}

static void stop_child(pid_t pid, int *reaped)
{
    if (pid <= 0 || *reaped)
        return;
    kill(pid, SIGTERM);
    kill(pid, SIGCONT); /* a stopped (silent) recorder must wake to handle it */
    for (int i = 0; i < 600; i++) { /* up to 30 s to close the bag, then SIGKILL */
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            *reaped = 1;
            return;
        }
        cli_sleep_ms(50);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    *reaped = 1;
}

/* Notes the control flow's view next to the manifest: experiment.json (status, reason, then
 * the keys of `facts`, which it takes over). */
static void write_experiment_note(const char *run_dir, const char *status, const char *reason,
                                  json_object *facts)
{
    if (!run_dir[0]) {
        json_object_put(facts);
        return;
    }
    json_object *o = json_object_new_object();
    json_object_object_add(o, "status", json_object_new_string(status));
    json_object_object_add(o, "reason", json_object_new_string(reason));
    json_object_object_foreach(facts, key, val)
        json_object_object_add(o, key, json_object_get(val));
    json_object_put(facts);
    char path[4096];
    snprintf(path, sizeof path, "%s/experiment.json", run_dir);
    if (rl_json_write_file(path, o) < 0)
        fprintf(stderr, "runlab: experiment: %s\n", rl_error_last());
    json_object_put(o);
}

/* What the experiment chose and saw, for experiment.json. */
static json_object *experiment_facts(const experiment *e, const int *vehicles, size_t n,
                                     const char *map, const char *map_from, json_object *losses)
{
    json_object *f = json_object_new_object();
    json_object *ids = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(ids, json_object_new_int(vehicles[i]));
    json_object_object_add(f, "vehicles", ids);
    json_object_object_add(f, "vehicles_from",
                           json_object_new_string(e->vehicle_count ? "given" : "READY"));
    json_object_object_add(f, "map", map_from ? json_object_new_string(map) : NULL);
    json_object_object_add(f, "map_from", map_from ? json_object_new_string(map_from) : NULL);
    json_object_object_add(f, "vehicle_timeout_s", json_object_new_double(e->vehicle_timeout));
    json_object_object_add(f, "on_vehicle_loss",
                           json_object_new_string(e->continue_on_vehicle_loss ? "continue" : "stop"));
    json_object_object_add(f, "vehicle_losses", json_object_get(losses));
    /* How long it was meant to run: an evaluation of a run stopped early says "interrupted
       after 2.5 of 20 s" from it (docs/eval.md). */
    json_object_object_add(f, "planned_duration_s", json_object_new_double(e->duration));
    return f;
}

static int run_experiment(experiment *e)
{
    const int64_t s = 1000000000ll;
    rl_lab_client *cl = NULL;
    if (rl_lab_client_new(&cl, e->domain) < 0)
        return cli_fail("experiment", "%s", rl_error_last());
    rl_lab_heartbeat hb;
    /* Another recorder on the domain answers within this window (transient-local). */
    int answered =
        rl_lab_client_wait_heartbeat(cl, 0, e->attach ? 5 * s : 3 * s / 2, &hb) == RL_OK;
    char refusal[1024];
    if (experiment_attach_refused(e->domain, e->attach, answered ? &hb : NULL, refusal,
                                  sizeof refusal)) {
        rl_lab_client_free(cl);
        return cli_fail("experiment", "%s", refusal);
    }
    pid_t child = 0;
    int reaped = 0, control[2] = {-1, -1};
    if (e->attach) {
        fprintf(stderr, "runlab experiment: attached to the recorder on DDS domain %d (host %s, "
                "pid %d)\n", e->domain, hb.host, hb.pid);
    } else if (control_pipe(control) < 0 || spawn_recorder(e, control[0], &child) < 0) {
        if (control[0] >= 0)
            close(control[0]);
        if (control[1] >= 0)
            close(control[1]);
        rl_lab_client_free(cl);
        return cli_fail("experiment", "%s", rl_error_last());
    }
    if (control[0] >= 0)
        close(control[0]); /* the recorder's end */
    char failure[768] = "", run_dir[1024] = "", run_id[80] = "", map[4096] = "";
    int started = 0, prepared = 0, interrupted = 0, silent = 0, recorder_failed = 0,
        no_vehicle = 0;
    rl_record_state recorder_end = RL_RECORD_FAILED;
    int64_t hb_timeout = (int64_t)(e->heartbeat_timeout * 1e9);
    int64_t vehicle_timeout = (int64_t)(e->vehicle_timeout * 1e9), start_mono = 0;
    int vehicles[MAX_VEHICLES];
    size_t nveh = 0;
    const char *map_from = NULL;
    rl_lab_vehicle_watch *watch = NULL;
    json_object *losses = json_object_new_array();

    /* The recorder we started: its first heartbeat carries our child's pid. */
    int64_t deadline = rl_mono_ns() + 60 * s;
    while (!e->attach) {
        if (rl_lab_client_wait_heartbeat(cl, 0, s / 5, &hb) == RL_OK && hb.pid == (int)child)
            break;
        if (child_gone(child, &reaped, failure, sizeof failure) || g_signal ||
            rl_mono_ns() > deadline) {
            if (!failure[0])
                snprintf(failure, sizeof failure, "%s",
                         g_signal ? "interrupted before the recorder started"
                                  : "the recorder sent no heartbeat within 60 s");
            goto done;
        }
    }
    /* The vehicles first (prepare names them): the given ids once each reported READY, or
     * whoever reports READY. */
    if (e->vehicle_count)
        fprintf(stderr, "runlab experiment: waiting up to %.1f s for %zu vehicle(s) to report "
                        "READY\n", e->ready_timeout, e->vehicle_count);
    else
        fprintf(stderr, "runlab experiment: no --vehicles: taking the vehicles that report READY "
                        "within %.1f s\n", e->ready_timeout);
    char why[512];
    switch (exp_wait_vehicles(cl, e->vehicles, e->vehicle_count, (int64_t)(e->ready_timeout * 1e9),
                              &g_signal, vehicles, MAX_VEHICLES, &nveh, why, sizeof why)) {
    case EXP_WAIT_OK: break;
    case EXP_WAIT_INTERRUPTED: interrupted = 1; goto done;
    case EXP_WAIT_TIMEOUT: snprintf(failure, sizeof failure, "%s", why); goto done;
    case EXP_WAIT_NO_VEHICLE:
        no_vehicle = 1;
        snprintf(failure, sizeof failure,
                 "%s (DDS domain %d): start the vehicles (e.g. `runlab sim --domain %d`) or name "
                 "them with --vehicles; not starting",
                 why, e->domain, e->domain);
        goto done;
    }
    char ids[1024];
    exp_format_ids(vehicles, nveh, ids, sizeof ids);
    fprintf(stderr, "runlab experiment: vehicle%s %s READY%s\n", nveh == 1 ? "" : "s", ids,
            e->vehicle_count ? "" : " (no --vehicles: taking these)");
    /* A simulator announces its map before READY, so by now it has come if it will. */
    map_from = e->no_map ? NULL : exp_choose_map(cl, e->map, s, map, sizeof map);
    if (e->no_map)
        fprintf(stderr, "runlab experiment: no map (--no-map)\n");
    else if (map_from)
        fprintf(stderr, "runlab experiment: map %s (%s)\n", map, map_from);
    else
        fprintf(stderr, "runlab experiment: warning: the run will have no map (no --map, none "
                        "announced on %s, RUNLAB_LAB_MAP not set); evaluate it against one later "
                        "with `runlab evaluate RUN --map FILE`\n", RL_LAB_TOPIC_MAP);
    /* The watchdog joins now so that its readers have matched by START. */
    if (rl_lab_vehicle_watch_new(&watch, e->domain, vehicles, nveh) < 0) {
        snprintf(failure, sizeof failure, "%s", rl_error_last());
        goto done;
    }
    rl_lab_reply rep;
    char *nodes = experiment_parameters(e, vehicles, nveh, map_from ? map : NULL);
    rl_record_run run = {.run_id = e->run_id, .vehicles = vehicles, .vehicle_count = nveh,
                         .planner = e->planner, .map_path = map_from ? map : NULL,
                         .nodes_json = nodes};
    int prepare_rc = rl_lab_client_prepare(cl, &run, 60 * s, &rep);
    free(nodes);
    if (prepare_rc < 0 || !rep.ok) {
        snprintf(failure, sizeof failure, "prepare: %s", rep.ok ? rl_error_last() : rep.message);
        goto done;
    }
    prepared = 1;
    snprintf(run_dir, sizeof run_dir, "%s", rep.run_dir);
    snprintf(run_id, sizeof run_id, "%s", rep.run_id);
    fprintf(stderr, "runlab experiment: run %s ARMED\n", run_id);
    /* From now on the recorder ends the run if we die without finishing it. */
    if (rl_lab_client_drive(cl, run_id, "runlab experiment") < 0)
        fprintf(stderr, "runlab: experiment: %s\n", rl_error_last());
    if (rl_lab_client_begin(cl, run_id, 60 * s, &rep) < 0 || !rep.ok) {
        snprintf(failure, sizeof failure, "begin: %s", rep.ok ? rl_error_last() : rep.message);
        goto done;
    }
    if (rl_lab_client_trigger(cl, RL_LAB_START, rl_time_now_ns()) < 0) {
        snprintf(failure, sizeof failure, "%s", rl_error_last());
        goto done;
    }
    started = 1;
    start_mono = rl_mono_ns();
    rl_lab_vehicle_watch_arm(watch, start_mono);
    fprintf(stderr, "runlab experiment: START; running %.1f s (Ctrl-C stops)\n", e->duration);
    int64_t end = rl_mono_ns() + (int64_t)(e->duration * 1e9);
    while (rl_mono_ns() < end) {
        if (g_signal) {
            interrupted = 1;
            break;
        }
        if (child_gone(child, &reaped, failure, sizeof failure))
            break;
        if (rl_lab_client_wait_heartbeat(cl, 0, 0, &hb) == RL_OK) {
            /* FAILED, or INTERRUPTED by the recorder itself (it lost us: stopped too long
               by Ctrl-Z, say): the run is over. */
            if (hb.state == RL_RECORD_FAILED ||
                (hb.state == RL_RECORD_INTERRUPTED && strcmp(hb.run_id, run_id) == 0)) {
                recorder_failed = 1;
                recorder_end = hb.state;
                snprintf(failure, sizeof failure, "the recorder %s: %s",
                         hb.state == RL_RECORD_FAILED ? "FAILED" : "ended the run INTERRUPTED",
                         hb.reason);
                break;
            }
            int64_t now = rl_mono_ns(), quiet_ns = now - hb.seen_mono_ns;
            if (rl_lab_heartbeat_lost(&hb, now, hb_timeout)) {
                snprintf(failure, sizeof failure, "no recorder heartbeat for %lld ms",
                         (long long)(quiet_ns / 1000000));
                silent = 1;
                break;
            }
        }
        rl_lab_vehicle_loss lost[MAX_VEHICLES];
        int64_t now = rl_mono_ns();
        size_t nl = rl_lab_vehicle_watch_check(watch, now, vehicle_timeout, lost, MAX_VEHICLES);
        if (nl && !e->continue_on_vehicle_loss) /* those falling silent with it: named too */
            nl += rl_lab_vehicle_watch_check(watch, now, vehicle_timeout / 10 * 9, lost + nl,
                                             MAX_VEHICLES - nl);
        if (nl) {
            char sentence[600];
            exp_loss_sentence(lost, nl, start_mono, now, sentence, sizeof sentence);
            exp_loss_records(losses, lost, nl, start_mono, now);
            if (!e->continue_on_vehicle_loss) {
                snprintf(failure, sizeof failure, "%s", sentence);
                break;
            }
            fprintf(stderr, "runlab experiment: %s; going on (--on-vehicle-loss continue)\n",
                    sentence);
        }
        cli_sleep_ms(20);
    }

done:;
    /* STOP first, always: before finish and before any process is stopped. */
    int64_t stop = rl_time_now_ns();
    if (started && rl_lab_client_trigger(cl, RL_LAB_STOP, stop) < 0)
        fprintf(stderr, "runlab: experiment: %s\n", rl_error_last());
    char gone[256] = "";
    int alive = !child_gone(child, &reaped, gone, sizeof gone);
    if (!alive && !failure[0])
        snprintf(failure, sizeof failure, "%s", gone);
    if (failure[0])
        fprintf(stderr, "runlab: experiment: %s%s\n", no_vehicle ? "" : "failed: ", failure);
    int complete = 0;
    /* A recorder that fell silent would not answer finish either: it is only stopped. One
     * that FAILED has ended the run itself: finish would only be refused. */
    if (recorder_failed)
        fprintf(stderr, "runlab experiment: run %s %s\n", run_id,
                rl_record_state_name(recorder_end));
    if (prepared && alive && !silent && !recorder_failed) {
        /* A failure ends the run FAILED with the very sentence experiment.json gets;
           Ctrl-C INTERRUPTED; nothing, COMPLETE (docs/lab.md, "finish"). */
        char failed[sizeof failure + sizeof RL_LAB_FINISH_FAILED_PREFIX];
        snprintf(failed, sizeof failed, "%s%s", RL_LAB_FINISH_FAILED_PREFIX, failure);
        const char *reason = failure[0] ? failed : interrupted ? "SIGINT" : NULL;
        if (rl_lab_client_finish(cl, run_id, started ? stop : 0, reason, 60 * s, &rep) < 0)
            fprintf(stderr, "runlab: experiment: finish: %s\n", rl_error_last());
        else if (!rep.ok)
            fprintf(stderr, "runlab: experiment: finish refused: %s\n", rep.message);
        else
            complete = rep.state == RL_RECORD_COMPLETE;
        if (rep.ok)
            fprintf(stderr, "runlab experiment: run %s %s\n", run_id,
                    rl_record_state_name(rep.state));
    }
    (void)rl_lab_client_drive(cl, NULL, NULL);
    stop_child(child, &reaped);
    if (control[1] >= 0)
        close(control[1]);
    rl_lab_vehicle_watch_free(watch);
    rl_lab_client_free(cl);
    /* The recorder died before it could end the run: its manifest still says RECORDING and
     * its bag has no footer. Repaired now, FAILED with the reason printed above. */
    if (prepared && !alive)
        exp_repair_run(run_dir, failure);
    if (prepared && json_object_array_length(losses) &&
        rl_record_manifest_note(run_dir, "vehicle_losses",
                                json_object_to_json_string_ext(losses, JSON_C_TO_STRING_PLAIN)) < 0)
        fprintf(stderr, "runlab: experiment: the vehicle losses are only in experiment.json: %s\n",
                rl_error_last());
    int ok = !failure[0] && (complete || interrupted);
    write_experiment_note(run_dir, failure[0] ? "FAILED" : interrupted ? "INTERRUPTED" : "COMPLETE",
                          failure[0] ? failure : interrupted ? "SIGINT" : "",
                          experiment_facts(e, vehicles, nveh, map, map_from, losses));
    json_object_put(losses);
    if (run_dir[0])
        printf("%s\n", run_dir);
    else if (interrupted && !failure[0])
        fprintf(stderr, "runlab experiment: interrupted before START; no run\n");
    return no_vehicle ? RL_EXIT_USAGE : ok ? RL_EXIT_OK : RL_EXIT_FAILURE;
}

int cmd_experiment(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        experiment_usage(stdout);
        return RL_EXIT_OK;
    }
    static const struct option opts[] = {{"domain", required_argument, NULL, 'd'},
                                         {"home", required_argument, NULL, 'H'},
                                         {"vehicles", required_argument, NULL, 'v'},
                                         {"duration", required_argument, NULL, 'D'},
                                         {"map", required_argument, NULL, 'm'},
                                         {"topic", required_argument, NULL, 't'},
                                         {"recorder-config", required_argument, NULL, 'c'},
                                         {"ready-timeout", required_argument, NULL, 'r'},
                                         {"vehicle-timeout", required_argument, NULL, 'V'},
                                         {"on-vehicle-loss", required_argument, NULL, 'L'},
                                         {"no-map", no_argument, NULL, 'N'},
                                         {"attach", no_argument, NULL, 'A'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    /* Options are read after the spec so that they override it: collect them first (GNU
       getopt moves SPEC.yaml behind the options, wherever it was given). */
    int e_no_map = 0;
    const char *o_domain = NULL, *o_home = NULL, *o_vehicles = NULL, *o_duration = NULL,
               *o_map = NULL, *o_topics[MAX_PATTERNS], *o_config = NULL, *o_ready = NULL,
               *o_vtimeout = NULL, *o_loss = NULL;
    size_t o_ntopics = 0;
    int c, attach = 0;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'A': attach = 1; break;
        case 'd': o_domain = optarg; break;
        case 'H': o_home = optarg; break;
        case 'v': o_vehicles = optarg; break;
        case 'D': o_duration = optarg; break;
        case 'm': o_map = optarg; break;
        case 'c': o_config = optarg; break;
        case 'r': o_ready = optarg; break;
        case 'V': o_vtimeout = optarg; break;
        case 'L': o_loss = optarg; break;
        case 'N': e_no_map = 1; break;
        case 't':
            if (o_ntopics == MAX_PATTERNS)
                return cli_usage_error("experiment", "more than %d --topic patterns", MAX_PATTERNS);
            o_topics[o_ntopics++] = optarg;
            break;
        default:
            return cli_usage_error("experiment", "unknown or incomplete option '%s'",
                                   argv[optind - 1]);
        }
    }
    if (argc - optind > 1)
        return cli_usage_error("experiment", "unexpected argument '%s'", argv[optind + 1]);
    if (attach && (o_home || o_ntopics || o_config))
        return cli_usage_error("experiment", "--attach: %s set%s the recorder experiment starts; "
                               "the attached recorder records with its own",
                               o_home ? "--home" : o_ntopics ? "--topic" : "--recorder-config",
                               o_home || o_ntopics ? "" : "s");
    experiment e = {.duration = 10, .ready_timeout = 30, .heartbeat_timeout = 1.5,
                    .vehicle_timeout = 1.5, .attach = attach};
    int ec = RL_EXIT_OK;
    if (optind < argc)
        ec = read_spec(argv[optind], &e);
    if (ec == RL_EXIT_OK && o_domain)
        ec = cli_parse_domain("experiment", o_domain, &e.domain);
    if (ec == RL_EXIT_OK && o_vehicles)
        ec = parse_vehicles(o_vehicles, &e);
    if (ec == RL_EXIT_OK && o_duration)
        ec = cli_parse_number("experiment", "--duration", o_duration, 0, 1e7, 0, &e.duration);
    if (ec == RL_EXIT_OK && o_ready)
        ec = cli_parse_number("experiment", "--ready-timeout", o_ready, 0, 1e6, 0, &e.ready_timeout);
    if (ec == RL_EXIT_OK && o_vtimeout)
        ec = cli_parse_number("experiment", "--vehicle-timeout", o_vtimeout, 0.01, 1e6, 0,
                              &e.vehicle_timeout);
    if (ec == RL_EXIT_OK && o_loss)
        ec = parse_vehicle_loss("--on-vehicle-loss", o_loss, &e);
    if (o_home)
        e.home = o_home;
    if (o_map)
        e.map = o_map;
    if (ec == RL_EXIT_OK && e_no_map && o_map)
        ec = cli_usage_error("experiment", "--map and --no-map: choose one");
    e.no_map = e_no_map;
    if (e_no_map)
        e.map = NULL;
    if (o_config)
        e.recorder_config = o_config;
    if (attach && (e.home || e.topic_count || e.recorder_config)) {
        fprintf(stderr, "runlab experiment: --attach: the spec's home, topics and "
                        "recorder_config are not used: the attached recorder records with its "
                        "own\n");
        e.home = e.recorder_config = NULL;
        e.topic_count = 0;
    }
    /* The recorder's config is checked here, with the recorder's own messages, so that a bad
     * file stops nothing but this command; the start banner says what it hands over. */
    if (ec == RL_EXIT_OK && e.recorder_config) {
        recorder_config cfg = {0};
        rl_record_options_default(&cfg.engine);
        ec = read_recorder_config("experiment", e.recorder_config, &cfg);
        if (ec == RL_EXIT_OK)
            print_recorder_config("runlab experiment", e.recorder_config, &cfg);
        recorder_config_free(&cfg);
    }
    for (size_t i = 0; i < o_ntopics && e.topic_count < MAX_PATTERNS; i++)
        e.topics[e.topic_count++] = o_topics[i];
    if (ec == RL_EXIT_OK) {
        struct sigaction old[2];
        cli_catch_signals(on_signal, old);
        ec = run_experiment(&e);
        cli_restore_signals(old);
    }
    if (e.spec)
        json_object_put(e.spec);
    return ec;
}
