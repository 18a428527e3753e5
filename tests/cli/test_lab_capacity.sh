# `make bench`'s recorder capacity (bench/bench_lab_capacity.c) on one small step, in a DDS
# domain of this script's own given with --domain (loopback): the usage errors of the
# domain (option and RUNLAB_BENCH_DOMAIN; bench_lab's option too) and of the other options,
# and that a step's samples are all found in the bag (no "LOSS"; the rate the publisher
# reaches is not asserted: it depends on the load).
. "$(dirname "$0")/lib.sh"
test_domain
BENCH="${RUNLAB_BIN}/bench_lab_capacity"
if [ ! -x "$BENCH" ] || [ ! -x "${RUNLAB_BIN}/lab_capacity_pub" ]; then
    echo "SKIP: bench_lab_capacity or lab_capacity_pub not built"
    exit 77
fi

bench() {
    "$BENCH" "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    out=$(cat "$TMP/out")
    err=$(cat "$TMP/err")
}

bench --domain 233
check "a domain beyond 232 is a usage error" rc_is 2
check "the error names the option and the value" err_has "--domain: '233' is not a DDS domain id"
RUNLAB_BENCH_DOMAIN=x7 bench
check "a bad RUNLAB_BENCH_DOMAIN is a usage error" rc_is 2
check "the error names the variable" err_has "RUNLAB_BENCH_DOMAIN: 'x7' is not a DDS domain id"
bench --domain
check "--domain without a value is a usage error" rc_is 2
bench --rates 1000,0
check "a zero rate is a usage error" rc_is 2
check "the error names --rates" err_has "--rates: '1000,0'"
bench --compression brotli
check "an unknown compression is a usage error" rc_is 2
check "the error names the compression" err_has "'brotli' is not none, zstd or lz4"
bench --payloads random,ones
check "an unknown payload is a usage error" rc_is 2
bench --help
check "--help exits 0" rc_is 0
check "--help prints the usage on stdout" out_has "usage: bench_lab_capacity"
bench --frobnicate 1
check "an unknown option is a usage error" rc_is 2
check "the usage is shown" err_has "usage: bench_lab_capacity"

# bench_lab (make bench's recorder against ddsperf sub) takes its domain the same way.
"${RUNLAB_BIN}/bench_lab" --domain 233 >"$TMP/out" 2>"$TMP/err"
rc=$?
out=$(cat "$TMP/out")
err=$(cat "$TMP/err")
check "bench_lab: a domain beyond 232 is a usage error" rc_is 2
check "bench_lab: the error names the option" err_has "bench_lab: --domain: '233' is not a DDS domain id"
"${RUNLAB_BIN}/bench_lab" --domain 7 12x >"$TMP/out" 2>"$TMP/err"
rc=$?
err=$(cat "$TMP/err")
check "bench_lab: a size that is not a number is a usage error" rc_is 2
check "bench_lab: the error names the argument" err_has "argument 1: '12x' is not a sample size"

# One step: 2000 samples/s of 100 B random bytes for 0.5 s into an uncompressed bag, in the
# test's domain (the option wins over the variable), the bags in the test's folder.
RUNLAB_BENCH_DOMAIN=7 bench --domain "$DOMAIN" --sizes 100 --compression none --payloads random \
    --rates 2000 --window 0.5 --dir "$TMP" --budget 600
check "one step exits 0" rc_is 0
check "it runs in the domain given" out_has "DDS domain $DOMAIN (loopback)"
check "the step is reported" out_has "capacity    100 B random none     2000/s"
check "every sample published is in the bag" bash -c "! grep -q LOSS <<<\"\$1\"" _ "$out"
check "the publisher ran" out_has "published"
check "the bags are gone" bash -c "! ls -d \"\$1\"/runlab-bench-capacity-* 2>/dev/null" _ "$TMP"
finish
