# `runlab map`: compile, info, query and draw on the CPM lab map shipped in data/maps
# (expected values from ../shared/maps/README.md, measured outside runlab), the hashes,
# deterministic compiles, the JSON shapes with exact 64-bit ids, and the errors.
. "$(dirname "$0")/lib.sh"

LAB="$RUNLAB_SOURCE/data/maps/LabMapCommonRoad.xml"
SHARED="${RUNLAB_SHARED:-}/maps"
jq_py() { python3 -c "import json,sys; d=json.loads(sys.stdin.read()); $1" <<<"$out"; }

run map --help
check "map --help exits 0" rc_is 0
check "map --help names the subcommands" out_has "runlab map query FILE X Y"

run map compile "$LAB" -o "$TMP/lab.bin"
check "compile exits 0" rc_is 0
check "compile prints the map's sha256" out_has "sha256 $(sha256sum "$TMP/lab.bin" | cut -d' ' -f1)"
run map compile "$LAB" -o "$TMP/lab2.bin"
check "compiling twice gives identical bytes" cmp -s "$TMP/lab.bin" "$TMP/lab2.bin"

run map info "$TMP/lab.bin" --json
check "info on the runtime map exits 0" rc_is 0
bin_json=$out
check "info: 168 lanelets" jq_py 'sys.exit(d["lanelets"] != 168)'
check "info: bbox as measured" jq_py 'b=d["bbox"]; sys.exit(max(abs(b["xmin"]-0.029997), abs(b["ymin"]-0.02912), abs(b["xmax"]-4.470003), abs(b["ymax"]-3.97088)) > 2e-6)'
check "info: area sum 21.384390 m^2" jq_py 'sys.exit(abs(d["area_sum"]-21.38439) > 1e-5)'
check "info: area union 9.216 +- 0.002 m^2" jq_py 'sys.exit(abs(d["area_union"]-9.216) > 0.002)'
check "info: sha256 is the runtime map's" jq_py "sys.exit(d['sha256'] != '$(sha256sum "$TMP/lab.bin" | cut -d' ' -f1)')"
check "info: source_sha256 is the XML file's" jq_py "sys.exit(d['source_sha256'] != '$(sha256sum "$LAB" | cut -d' ' -f1)')"
run map info "$LAB" --json
check "info on the XML gives the same hashes" [ "$(jq_py 'print(d["sha256"], d["source_sha256"])')" = "$(out=$bin_json jq_py 'print(d["sha256"], d["source_sha256"])')" ]
run map info "$LAB"
check "info as text" out_has "lanelets      168"

run map query "$TMP/lab.bin" 2.25 2 --json
check "query exits 0" rc_is 0
check "query: lab centre inside, depth 0.03309" jq_py 'sys.exit(not d["inside"] or abs(d["distance"]-0.03309) > 2e-6)'
check "query: the measured containing lanelets are listed" jq_py 'sys.exit(not {37, 40, 42, 79, 121, 126, 163} <= set(d["lanelets"]))'
run map query "$LAB" -1 2 --json
check "query: negative x is a coordinate; outside, clearance 1.03" jq_py 'sys.exit(d["inside"] or d["lanelets"] or abs(d["distance"]+1.03) > 2e-6 or not isinstance(d["nearest"], int))'
run map query "$TMP/lab.bin" 2.4 3.98
check "query as text: 1 cm outside the outer edge" out_has "inside    no"

run map draw "$TMP/lab.bin" -o "$TMP/lab.svg" --ids
check "draw svg exits 0" rc_is 0
check "draw svg writes an SVG with ids" grep -q ">" "$TMP/lab.svg"
run map draw "$LAB" -o "$TMP/lab.png"
check "draw png writes a PNG" bash -c "head -c 8 '$TMP/lab.png' | od -c | grep -q 'P   N   G'"
run map draw "$LAB" -o "$TMP/lab.pdf"
check "draw pdf writes a PDF" bash -c "head -c 4 '$TMP/lab.pdf' | grep -q '%PDF'"
run map draw "$LAB" -o "$TMP/lab.gif"
check "draw: unknown extension fails" rc_is 1

# Errors.
run map
check "no subcommand is a usage error" rc_is 2
run map info
check "info without a file is a usage error" rc_is 2
run map query "$LAB" x 2
check "a non-number coordinate is a usage error" rc_is 2
run map info "$LAB" --bogus
check "an unknown option is a usage error" rc_is 2
run map info "$TMP/missing.xml"
check "a missing file fails" rc_is 1
check "the error names the file" err_has "runlab: map info: $TMP/missing.xml"
printf '<commonRoad>\n<lanelet id="1">\n<leftBound><point><x>1</x></point></leftBound>\n</lanelet>\n</commonRoad>\n' >"$TMP/bad.xml"
run map info "$TMP/bad.xml"
check "a malformed map fails" rc_is 1
check "the error gives file, line and lanelet" err_has "bad.xml:3:"
cp "$TMP/lab.bin" "$TMP/broken.bin"
printf 'X' | dd of="$TMP/broken.bin" bs=1 seek=5000 conv=notrunc 2>/dev/null
run map info "$TMP/broken.bin"
check "a damaged runtime map fails on its CRC" err_has "CRC"

if [ -d "$SHARED" ]; then
    run map query "$SHARED/lab_reduced.osm" 2.4 3.895 --projection metric --json
    check "lab_reduced (metric): lanelet 1786, depth 0.073295" jq_py 'sys.exit(d["lanelets"] != [1786] or abs(d["distance"]-0.073295) > 2e-6)'
    run map query "$SHARED/mapping_example.osm" 1768.706049 420.170668 --json
    check "mapping_example: a 64-bit id printed exactly" out_has "1785705568830251339"
    run map info "$SHARED/mapping_example.osm" --json --projection utm
    check "mapping_example in UTM: bbox xmin 944.334991" jq_py 'sys.exit(abs(d["bbox"]["xmin"]-944.334991) > 2e-6 or d["projection"] != "utm")'
else
    echo "SKIP: shared map checks: ../shared/maps not present"
fi

finish
