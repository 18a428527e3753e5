#!/usr/bin/env bash
# Map errors say file and line (issue 29 item 12, docs/map.md): a duplicate OSM relation id,
# a non-finite or far-away coordinate; CommonRoad numbers are decimal only (<x>0x10</x> is
# refused, not read as 16) and a <point> with a second <x> or <y> is refused, not "last one
# wins". A manifest hash in upper-case hex is a valid hash. Commands run under `timeout`.
. "$(dirname "$0")/lib.sh"

bounded() { # bounded ARGS...: run with a 60 s limit (124 = it hung)
    timeout 60 "$RUNLAB" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
    rc=$?
    out=$(cat "$TMP/out")
    err=$(cat "$TMP/err")
}

# One lanelet in OSM (nodes on lines 3-6, ways 7-8, the relation on lines 9-13).
osm() { # osm FILE LON4 [EXTRA_RELATION]
    cat >"$1" <<EOF
<?xml version="1.0"?>
<osm version="0.6">
  <node id="1" lat="0.0" lon="0.0"/>
  <node id="2" lat="0.0" lon="0.0001"/>
  <node id="3" lat="0.00003" lon="0.0"/>
  <node id="4" lat="0.00003" lon="$2"/>
  <way id="10"><nd ref="1"/><nd ref="2"/></way>
  <way id="11"><nd ref="3"/><nd ref="4"/></way>
  <relation id="100">
    <member type="way" ref="11" role="left"/>
    <member type="way" ref="10" role="right"/>
    <tag k="type" v="lanelet"/>
  </relation>
${3:-}</osm>
EOF
}
osm "$TMP/good.osm" 0.0001
bounded map info "$TMP/good.osm" --projection metric
check "the valid OSM map reads" rc_is 0

osm "$TMP/dup_lanelet.osm" 0.0001 '  <relation id="100"><member type="way" ref="11" role="left"/><member type="way" ref="10" role="right"/><tag k="type" v="lanelet"/></relation>
'
bounded map info "$TMP/dup_lanelet.osm"
check "duplicate lanelet relation: exit 1" rc_is 1
check "duplicate lanelet relation: file, line and the first line" \
    err_has "dup_lanelet.osm:14: relation 100: id also used on line 9"

osm "$TMP/dup_rel.osm" 0.0001 '  <relation id="100"><member type="relation" ref="100" role="refers"/><tag k="type" v="regulatory_element"/></relation>
'
bounded map info "$TMP/dup_rel.osm"
check "duplicate relation id (other kind): exit 1" rc_is 1
check "duplicate relation id (other kind): file and line" \
    err_has "dup_rel.osm:14: relation 100: id also used on line 9"

osm "$TMP/far.osm" 1e300
bounded map info "$TMP/far.osm" --projection metric
check "far-away OSM coordinate: exit 1" rc_is 1
check "far-away OSM coordinate: file, line and node" err_has "far.osm:6: node 4: position (1e+300"

# CommonRoad: one lanelet; the second left point on line 6.
cr() { # cr FILE POINT6
    cat >"$1" <<EOF
<?xml version="1.0" encoding="utf-8"?>
<commonRoad commonRoadVersion="2018b">
   <lanelet id="1">
      <leftBound>
         <point><x>0</x><y>3</y></point>
         $2
      </leftBound>
      <rightBound>
         <point><x>0</x><y>0</y></point>
         <point><x>10</x><y>0</y></point>
      </rightBound>
   </lanelet>
</commonRoad>
EOF
}
cr "$TMP/good.xml" '<point><x>10</x><y>3</y></point>'
bounded map info "$TMP/good.xml"
check "the valid CommonRoad map reads" rc_is 0
cr "$TMP/hex.xml" '<point><x>0x10</x><y>3</y></point>'
bounded map info "$TMP/hex.xml"
check "hex <x>: exit 1" rc_is 1
check "hex <x>: file and line" err_has "hex.xml:6:"
check "hex <x>: says it is not a number" err_has "<x>0x10</x> is not a number"
cr "$TMP/dupx.xml" '<point><x>10</x><x>99</x><y>3</y></point>'
bounded map info "$TMP/dupx.xml"
check "second <x>: exit 1" rc_is 1
check "second <x>: file, line and what" err_has "dupx.xml:6:"
check "second <x>: says so" err_has "lanelet 1: <point> has a second <x>"
cr "$TMP/dupy.xml" '<point><x>10</x><y>3</y><y>4</y></point>'
bounded map info "$TMP/dupy.xml"
check "second <y>: refused" err_has "dupy.xml:6:"
cr "$TMP/far.xml" '<point><x>1e12</x><y>3</y></point>'
bounded map info "$TMP/far.xml"
check "far-away CommonRoad coordinate: exit 1" rc_is 1
check "far-away CommonRoad coordinate: file and the lanelet's line" \
    err_has "far.xml:3: lanelet 1: coordinate (1e+12, 3)"

# A manifest whose map hashes are upper-case hex evaluates like the lower-case one.
H="$TMP/home"
export RUNLAB_HOME="$H"
printf 'speed: 1.2\n' >"$TMP/spec.yaml"
bounded sim "$TMP/spec.yaml" --offline "$H" --vehicles 1 --duration 3 --seed 3
check "sim exits 0" rc_is 0
RUN=$(tail -n 1 <<<"$out")
python3 - "$RUN/manifest.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
for k in ("sha256", "runtime_map_sha256", "source_sha256"):
    if m["map"].get(k):
        m["map"][k] = m["map"][k].upper()
json.dump(m, open(sys.argv[1], "w"), indent=2)
EOF
bounded evaluate "$RUN"
check "upper-case manifest hash: evaluate exits 0" rc_is 0
check "upper-case manifest hash: no mismatch" bash -c '! grep -q "hash mismatch" "$1"' _ "$TMP/err"

finish
