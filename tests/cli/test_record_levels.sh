# The compression level, checked once (rl_record_compression_level_check) against the
# compression it goes with, whichever option comes first: zstd -7..22, lz4 0..12, none
# only 0. A level outside its codec's range is a usage error before any run directory
# is made; the edges of each range record a bag.
. "$(dirname "$0")/lib.sh"
test_domain
H="$TMP/home"

rec() { run record --synthetic --vehicles 1 --rate 20 --payload 64 --duration 0.2 \
    --domain "$DOMAIN" --root "$H" -q "$@"; }

rec --compression lz4 --compression-level 15
check "lz4 level 15 is a usage error" rc_is 2
check "it names lz4's range" err_has "runlab: record: --compression-level: 15 is not 0..12 for lz4"
check "no run directory was made for it" test ! -e "$H/experiments"
rec --compression-level -3 --compression lz4
check "lz4 level -3 (zstd's range) is refused, the level given first" rc_is 2
check "it names lz4's range again" err_has "-3 is not 0..12 for lz4"
rec --compression zstd --compression-level 23
check "zstd level 23 is refused" err_has "--compression-level: 23 is not -7..22 for zstd"
rec --compression none --compression-level 1
check "a level without compression is refused" rc_is 2
check "saying so" err_has "1 is not allowed without compression"
rec --compression-level x
check "a level that is no number is refused" err_has "--compression-level: 'x' is not a level"

for args in "--compression lz4 --compression-level 12" "--compression-level 12 --compression lz4" \
            "--compression zstd --compression-level -7" "--compression-level 22" \
            "--compression none --compression-level 0"; do
    # shellcheck disable=SC2086
    rec $args
    check "$args records" rc_is 0
    dir=$(tail -n 1 <<<"$out")
    check "$args: its manifest is COMPLETE" grep -q '"state": "COMPLETE"' "$dir/manifest.json"
done

# The recorder's config file goes through the same check.
printf 'compression: lz4\ncompression_level: 13\n' >"$TMP/lz4.yaml"
run recorder --domain "$DOMAIN" --home "$TMP/h2" --config "$TMP/lz4.yaml"
check "recorder --config: lz4 level 13 is refused" rc_is 1
check "naming file, key and range" err_has "lz4.yaml: compression_level: 13 is not 0..12 for lz4"
printf 'compression: none\ncompression_level: 2\n' >"$TMP/none.yaml"
run recorder --domain "$DOMAIN" --home "$TMP/h2" --config "$TMP/none.yaml"
check "recorder --config: a level without compression is refused" err_has "none.yaml: compression_level: 2 is not allowed without compression"
finish
