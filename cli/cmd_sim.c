/* `runlab sim`: simulated vehicles of the lab (runlab/lab.h), either on a DDS domain in real
 * time (READY, START, STOP, states and observations) or offline, written straight into a run
 * directory deterministically from a seed; faults injected on chosen vehicles and times. */
#include "cli.h"

#include "runlab/error.h"
#include "runlab/json.h"
#include "runlab/lab.h"
#include "runlab/yaml.h"

#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_FAULTS = 64, MAX_WAYPOINTS = 4096 };

/* Set by the signal handler, polled by the simulation loop. */
static volatile sig_atomic_t g_sim_signal;

static void on_sim_signal(int sig)
{
    g_sim_signal = sig;
}

static int sim_interrupted(void *user)
{
    (void)user;
    return g_sim_signal != 0;
}

int cli_default_map(char *out, size_t cap)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 0;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    /* The install layout first (PREFIX/bin -> PREFIX/share), so an installed command never
     * takes a stray data/maps beside its prefix; then the build tree (build/bin). */
    static const char *const rel[] = {"../share/runlab/maps", "../../data/maps", "../data/maps"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        int w = snprintf(out, cap, "%s/%s/LabMapCommonRoad.xml", self, rel[i]);
        if (w > 0 && (size_t)w < cap && access(out, R_OK) == 0)
            return 1;
    }
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: runlab sim [SPEC.yaml] [--domain D] [--count N] [--duration SEC] [--seed N]\n"
            "                  [--fault KIND:VEHICLE:T0[:T1]]... [--map FILE] [--offline HOME]\n\n"
            "Simulates N vehicles of the lab (numbered from 1; the 1:18 car as a kinematic\n"
            "bicycle) on the lab map: each follows a loop along lanelet centre lines at 1 m/s,\n"
            "commanded by the built-in planner as trajectories on\n"
            "rt/vehicle/<id>/command_trajectory. On DDS domain D each publishes READY, waits\n"
            "for START, publishes rt/vehicle/<id>/state at 50 Hz and\n"
            "rt/vehicle/<id>/observation at 20 Hz, follows commands from outside while they\n"
            "come (trajectory, path tracking, speed+curvature, direct), and brakes at STOP\n"
            "(or SEC seconds after START). With --offline it writes the same messages, START\n"
            "and STOP straight into HOME/experiments/<UTC>_<id>/ (bag, manifest, map) without\n"
            "DDS, faster than real time and the same for the same seed, and prints that\n"
            "directory last.\n\n"
            "  --count N    how many vehicles, 1..64 (default 4); --vehicles N is an alias kept\n"
            "               for older scripts (in `runlab experiment`, --vehicles is a list of ids)\n"
            "  --map FILE   Lanelet2, CommonRoad or runtime map (default: the repository's\n"
            "               data/maps/LabMapCommonRoad.xml), announced on rt/lab/map on DDS\n\n"
            "Faults (T0, T1: seconds after START; docs/lab.md gives their exact effects):\n"
            "collision (on an intercept course onto the vehicle it reaches soonest, touching\n"
            "it within 1.5 s), leave_lane (commanded 0.25 m to the right), leave_area\n"
            "(commanded 0.3 m out over the nearest corner of the lab area, backing in after\n"
            "T1), speeding (commanded 3.5 times the speed), stall_topic (no states),\n"
            "late_observation (observations 0.5 s old), drift (0.25 m right of the command).\n"
            "A fault must start before the run ends (offline: 10 s unless --duration).\n\n"
            "SPEC.yaml keys (options override them): domain, count (alias vehicles), duration,\n"
            "seed, speed, faults (list of KIND:VEHICLE:T0[:T1]), waypoints (list of [x, y] in m),\n"
            "map, run_id.\n\n"
            "Exit codes: 0 done, 1 failure, 2 usage.\n");
}

typedef struct sim_args {
    json_object *spec;
    rl_lab_sim_options o;
    rl_lab_fault faults[MAX_FAULTS];
    double *waypoints;
    const char *offline;
} sim_args;

static int add_fault(sim_args *a, const char *text, int usage_error)
{
    if (a->o.fault_count == MAX_FAULTS)
        return cli_usage_error("sim", "more than %d faults", MAX_FAULTS);
    if (rl_lab_fault_parse(text, &a->faults[a->o.fault_count]) < 0)
        return usage_error ? cli_usage_error("sim", "--fault: %s", rl_error_last())
                           : cli_fail("sim", "%s", rl_error_last());
    a->o.fault_count++;
    a->o.faults = a->faults;
    return RL_EXIT_OK;
}

static int read_spec(const char *path, sim_args *a)
{
    int ec = cli_read_spec("sim", path, &a->spec);
    if (ec != RL_EXIT_OK)
        return ec;
    json_object *s = a->spec;
    int64_t v;
    int rc;
    if ((rc = rl_json_get_int64(s, "domain", &v)) == RL_OK)
        a->o.domain = (int)(v < 0 || v > 232 ? -1 : v);
    if (rc == RL_EPARSE || a->o.domain < 0)
        return cli_fail("sim", "%s: domain: expected an integer 0..232", path);
    /* `count`, and `vehicles` as its older name: one vehicle count either way. */
    static const char *const count_keys[] = {"vehicles", "count"};
    for (int k = 0; k < 2; k++) {
        if ((rc = rl_json_get_int64(s, count_keys[k], &v)) == RL_OK)
            a->o.vehicles = (int)(v < 1 || v > 64 ? 0 : v);
        if (rc == RL_EPARSE || a->o.vehicles == 0)
            return cli_fail("sim", "%s: %s: expected a count 1..64", path, count_keys[k]);
    }
    if ((rc = rl_json_get_int64(s, "seed", &v)) == RL_OK)
        a->o.seed = (uint64_t)v;
    if (rc == RL_EPARSE ||
        (rc = rl_json_get_double(s, "duration", &a->o.duration)) == RL_EPARSE ||
        (rc = rl_json_get_double(s, "speed", &a->o.speed)) == RL_EPARSE ||
        (rc = rl_json_get_string(s, "map", &a->o.map_path)) == RL_EPARSE ||
        (rc = rl_json_get_string(s, "run_id", &a->o.run_id)) == RL_EPARSE)
        return cli_fail("sim", "%s: %s", path, rl_error_last());
    json_object *arr = NULL;
    if ((rc = rl_json_get_array(s, "faults", &arr)) == RL_EPARSE)
        return cli_fail("sim", "%s: %s", path, rl_error_last());
    for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
        json_object *f = json_object_array_get_idx(arr, i);
        if (!json_object_is_type(f, json_type_string))
            return cli_fail("sim", "%s: faults[%zu]: expected KIND:VEHICLE:T0[:T1]", path, i);
        ec = add_fault(a, json_object_get_string(f), 0);
        if (ec != RL_EXIT_OK)
            return ec;
    }
    arr = NULL;
    if ((rc = rl_json_get_array(s, "waypoints", &arr)) == RL_EPARSE)
        return cli_fail("sim", "%s: %s", path, rl_error_last());
    size_t n = arr ? json_object_array_length(arr) : 0;
    if (n > MAX_WAYPOINTS)
        return cli_fail("sim", "%s: waypoints: more than %d", path, MAX_WAYPOINTS);
    if (n) {
        a->waypoints = malloc(2 * n * sizeof *a->waypoints);
        if (!a->waypoints)
            return cli_fail("sim", "out of memory");
        for (size_t i = 0; i < n; i++) {
            json_object *p = json_object_array_get_idx(arr, i);
            if (!json_object_is_type(p, json_type_array) || json_object_array_length(p) != 2)
                return cli_fail("sim", "%s: waypoints[%zu]: expected [x, y]", path, i);
            for (size_t k = 0; k < 2; k++) {
                json_object *c = json_object_array_get_idx(p, k);
                if (!json_object_is_type(c, json_type_double) && !json_object_is_type(c, json_type_int))
                    return cli_fail("sim", "%s: waypoints[%zu][%zu]: expected a number", path, i, k);
                a->waypoints[2 * i + k] = json_object_get_double(c);
            }
        }
        a->o.waypoints = a->waypoints;
        a->o.waypoint_count = n;
    }
    return RL_EXIT_OK;
}

/* The faults against the run they are for, before anything starts: a vehicle that is not
 * there, a collision without a partner, a window that opens after the run ended (offline
 * runs without a duration last 10 s). A --fault option's mistake is a usage error (2);
 * a spec's, a failure (1). `first_option`: the index of the first fault from --fault. */
static int check_faults(const sim_args *a, size_t first_option, const char *spec)
{
    double end = a->o.duration > 0 ? a->o.duration : a->offline ? 10.0 : 0;
    for (size_t i = 0; i < a->o.fault_count; i++) {
        const rl_lab_fault *f = &a->faults[i];
        char why[160] = "";
        if (f->vehicle > a->o.vehicles)
            snprintf(why, sizeof why, "vehicle %d: there are %d vehicles (numbered from 1)",
                     f->vehicle, a->o.vehicles);
        else if (f->kind == RL_LAB_FAULT_COLLISION && a->o.vehicles < 2)
            snprintf(why, sizeof why, "no other vehicle to collide with");
        else if (end > 0 && f->t0 >= end)
            snprintf(why, sizeof why, "T0 %g s is not before the run's end, %g s after START",
                     f->t0, end);
        if (!why[0])
            continue;
        char text[96];
        if (f->t1 >= 0)
            snprintf(text, sizeof text, "%s:%d:%g:%g", rl_lab_fault_name(f->kind), f->vehicle,
                     f->t0, f->t1);
        else
            snprintf(text, sizeof text, "%s:%d:%g", rl_lab_fault_name(f->kind), f->vehicle, f->t0);
        return i >= first_option ? cli_usage_error("sim", "--fault %s: %s", text, why)
                                 : cli_fail("sim", "%s: faults: %s: %s", spec, text, why);
    }
    return RL_EXIT_OK;
}

/* The library's messages start with "sim: ", which cli_fail says already. */
static const char *sim_error(void)
{
    const char *m = rl_error_last();
    return strncmp(m, "sim: ", 5) == 0 ? m + 5 : m;
}

static int parse_number(const char *opt, const char *text, double lo, double hi, double *out)
{
    return cli_parse_number("sim", opt, text, lo, hi, 0, out);
}

int cmd_sim(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return RL_EXIT_OK;
    }
    static const struct option opts[] = {{"domain", required_argument, NULL, 'd'},
                                         {"count", required_argument, NULL, 'n'},
                                         {"vehicles", required_argument, NULL, 'N'},
                                         {"duration", required_argument, NULL, 'D'},
                                         {"seed", required_argument, NULL, 's'},
                                         {"fault", required_argument, NULL, 'f'},
                                         {"map", required_argument, NULL, 'm'},
                                         {"offline", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *o_count_name = "--count";
    const char *o_domain = NULL, *o_vehicles = NULL, *o_duration = NULL, *o_seed = NULL,
               *o_map = NULL, *o_faults[MAX_FAULTS];
    size_t o_nfaults = 0;
    sim_args a = {0};
    rl_lab_sim_options_default(&a.o);
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'd': o_domain = optarg; break;
        case 'n': o_vehicles = optarg; o_count_name = "--count"; break;
        case 'N': o_vehicles = optarg; o_count_name = "--vehicles"; break;
        case 'D': o_duration = optarg; break;
        case 's': o_seed = optarg; break;
        case 'm': o_map = optarg; break;
        case 'o': a.offline = optarg; break;
        case 'f':
            if (o_nfaults == MAX_FAULTS)
                return cli_usage_error("sim", "more than %d --fault options", MAX_FAULTS);
            o_faults[o_nfaults++] = optarg;
            break;
        default:
            return cli_usage_error("sim", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind > 1)
        return cli_usage_error("sim", "unexpected argument '%s'", argv[optind + 1]);
    int ec = RL_EXIT_OK;
    if (optind < argc)
        ec = read_spec(argv[optind], &a);
    double num;
    if (ec == RL_EXIT_OK && o_domain &&
        (ec = parse_number("--domain", o_domain, 0, 232, &num)) == RL_EXIT_OK)
        a.o.domain = (int)num;
    if (ec == RL_EXIT_OK && o_vehicles &&
        (ec = parse_number(o_count_name, o_vehicles, 1, 64, &num)) == RL_EXIT_OK)
        a.o.vehicles = (int)num;
    if (ec == RL_EXIT_OK && o_duration)
        ec = parse_number("--duration", o_duration, 0, 1e7, &a.o.duration);
    if (ec == RL_EXIT_OK && o_seed &&
        (ec = parse_number("--seed", o_seed, 0, 9007199254740992.0, &num)) == RL_EXIT_OK)
        a.o.seed = (uint64_t)num;
    size_t first_option = a.o.fault_count;
    for (size_t i = 0; ec == RL_EXIT_OK && i < o_nfaults; i++)
        ec = add_fault(&a, o_faults[i], 1);
    if (ec == RL_EXIT_OK)
        ec = check_faults(&a, first_option, optind < argc ? argv[optind] : "");
    if (o_map)
        a.o.map_path = o_map;
    char default_map[4096];
    if (ec == RL_EXIT_OK && !a.o.map_path) {
        if (cli_default_map(default_map, sizeof default_map))
            a.o.map_path = default_map;
        else if (!a.o.waypoints)
            ec = cli_fail("sim", "no map: data/maps/LabMapCommonRoad.xml is not beside the "
                                 "executable; name one with --map FILE");
    }
    if (ec == RL_EXIT_OK) {
        struct sigaction old[2];
        cli_catch_signals(on_sim_signal, old);
        if (a.offline) {
            char run_dir[4096] = "";
            if (rl_lab_sim_offline(&a.o, a.offline, run_dir, sizeof run_dir) < 0)
                ec = cli_fail("sim", "%s", sim_error());
            else
                printf("sim: %d vehicles, %.1f s, seed %llu\n%s\n", a.o.vehicles,
                       a.o.duration > 0 ? a.o.duration : 10.0, (unsigned long long)a.o.seed,
                       run_dir);
        } else {
            fprintf(stderr, "runlab sim: %d vehicles on DDS domain %d; waiting for START\n",
                    a.o.vehicles, a.o.domain);
            if (rl_lab_sim_run(&a.o, sim_interrupted, NULL) < 0)
                ec = cli_fail("sim", "%s", sim_error());
        }
        cli_restore_signals(old);
    }
    free(a.waypoints);
    if (a.spec)
        json_object_put(a.spec);
    return ec;
}
