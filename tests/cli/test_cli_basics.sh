# CLI basics as users meet them: --help, --version, exit codes 0/1/2 and the
# "runlab: <what>: <why>" error form, and --help on every listed command.
. "$(dirname "$0")/lib.sh"

run --help
check "--help exits 0" rc_is 0
check "--help shows usage" out_has "Usage: runlab <command>"
check "--help lists demo" out_has "demo"

run
check "no command is a usage error" rc_is 2
check "no command prints usage on stderr" err_has "Usage: runlab"

run --version
check "--version exits 0" rc_is 0
check "--version names runlab" out_has "runlab 0."
check "--version shows the git sha" out_has "(git "

run frobnicate
check "unknown command exits 2" rc_is 2
check "unknown command error form" err_has "runlab: frobnicate: unknown command"

# Every command listed in --help answers --help with its own usage and exit 0.
run --help
cmds=$(sed -n '/^Commands:/,/^$/p' <<<"$out" | awk 'NF>1 && $1!="Commands:" {print $1}')
[ -n "$cmds" ] || { echo "FAIL: no commands parsed from --help"; failures=$((failures+1)); }
for c in $cmds; do
    run "$c" --help
    check "$c --help exits 0" rc_is 0
    check "$c --help prints its usage" out_has "Usage: runlab $c"
done

run version --bogus
check "bad option exits 2" rc_is 2
check "bad option names itself" err_has "runlab: version: unknown option '--bogus'"

run version --verbose
check "version --verbose prints the host" out_has "host: "
check "version --verbose prints cores" out_has "cpu_cores: "

run demo --out "$TMP"
check "demo exits 0" rc_is 0
check "demo names its output directory" out_has "All demo outputs are in $TMP/runlab-demo-"
check "demo created exactly one output directory" [ "$(ls -d "$TMP"/runlab-demo-* | wc -l)" -eq 1 ]
check "demo prints the version" out_has "runlab 0."
check "demo writes nothing to stderr" err_empty
check "demo prints the benchmark report's path" out_has "/report.html"
rep=$(sed -n 's/^Benchmark report: //p' <<<"$out")
check "the benchmark report exists" test -s "$rep"

run demo --out "$TMP/missing-dir"
check "demo with a missing --out fails at once" rc_is 1
check "demo names the missing --out" err_has "runlab: demo: --out $TMP/missing-dir: No such file or directory"
check "demo did no work before failing" [ -z "$out" ]

run demo extra
check "demo with an argument is a usage error" rc_is 2

finish
