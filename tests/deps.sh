#!/usr/bin/env bash
# The layering of docs/architecture.md, checked on the built objects: which global
# symbols each object defines and uses (nm), so calls through a shared header count.
# Fails on a circle between files, on a use that points up the stage order
#   base < kernels < audio < model < nn < decode < face (src/*.c) < cli
# and on a program file (cli/) using a library symbol that hark.h does not declare;
# src/base (errors, files, UTF-8, the thread pool: nothing of audio or Whisper) is
# the one stage the programs share with the library below its API.
# Usage: tests/deps.sh [BUILD_DIR]   (default build; needs its obj/ and libhark.so)
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PASS=0 FAIL=0 SKIP=0
ok() { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); echo "FAIL deps.sh: $*"; }

STAGES="base kernels audio model nn decode face cli"
# edges: "user definer symbol", one a line, from the objects under $B/obj
edges() {
    local c o f
    for c in $(find src cli -name '*.c' | sort); do # the sources' objects, none left over
        f=${c%.c} o=$B/obj/${c%.c}.o
        [ -f "$o" ] || { echo "no object for $c" >&2; continue; }
        nm --defined-only -g "$o" | awk -v f="$f" 'NF == 3 && $2 ~ /[TDBRCVW]/ { print $3, f }' >>"$TMP/defs"
        nm -u "$o" | awk -v f="$f" '{ print $2, f }' >>"$TMP/uses"
    done
    sort -o "$TMP/defs" "$TMP/defs"
    sort -o "$TMP/uses" "$TMP/uses"
    join "$TMP/uses" "$TMP/defs" | awk '$2 != $3 { print $2, $3, $1 }'
}

# check EDGES: every rule over an edge list; prints what breaks one, returns non-zero then
check() {
    local rc=0
    awk -v stages="$STAGES" -v public="$TMP/public" '
        function stage(f,   p) { n = split(f, p, "/")
            return p[1] == "cli" ? "cli" : (n == 2 ? "face" : p[2]) }
        BEGIN { n = split(stages, s, " "); for (i = 1; i <= n; i++) rank[s[i]] = i
                while ((getline line < public) > 0) pub[line] = 1 }
        { u = stage($1); d = stage($2)
          if (!(u in rank) || !(d in rank)) { print $1 " or " $2 " is in no stage"; bad = 1 }
          else if (rank[d] > rank[u]) { print $1 " uses " $3 " of " $2 ", a later stage"; bad = 1 }
          if (u == "cli" && d != "cli" && d != "base" && !($3 in pub)) {
              print $1 " uses " $3 " of " $2 ", which hark.h does not declare"; bad = 1 } }
        END { exit bad }' "$1" || rc=1
    # a circle between files: tsort names the files on it
    if ! awk '{ print $1, $2 }' "$1" | sort -u | tsort >/dev/null 2>"$TMP/loop"; then
        echo "circle: $(grep -v 'input contains a loop' "$TMP/loop" | sed 's/^tsort: //' | tr '\n' ' ')"
        rc=1
    fi
    return $rc
}

if [ ! -d "$B/obj/src" ] || [ ! -f "$B/libhark.so" ]; then
    echo "SKIP deps.sh: no build in $B"; SKIP=1
else
    nm -D --defined-only "$B/libhark.so" | awk '$2 == "T" { print $3 }' | sort >"$TMP/public"
    edges >"$TMP/edges"
    n=$(wc -l <"$TMP/edges")
    if [ "$n" -gt 100 ]; then ok; else bad "only $n uses between files found in $B/obj"; fi
    if check "$TMP/edges" >"$TMP/why"; then ok; else bad "the layering is broken:"; cat "$TMP/why"; fi
    # the rules themselves: a use that points back down to up, and a circle, each caught
    first=$(grep -m1 '^src/decode/longform src/nn/' "$TMP/edges")
    if [ -n "$first" ]; then
        read -r u d s <<<"$first"
        echo "$d $u hark_run" >>"$TMP/edges"
        check "$TMP/edges" >"$TMP/why"
        if grep -qx "$d uses hark_run of $u, a later stage" "$TMP/why" && grep -q "^circle: .*$d" "$TMP/why"; then
            ok
        else
            bad "a back edge $d -> $u was not caught: $(cat "$TMP/why")"
        fi
    else
        bad "no use of src/nn by src/decode/longform to test the rules with"
    fi
    echo "src/model/hf cli/main hark_cli_main" >"$TMP/up"
    check "$TMP/up" >"$TMP/why"
    if grep -qx "src/model/hf uses hark_cli_main of cli/main, a later stage" "$TMP/why"; then ok; else bad "an upward use was not caught"; fi
    echo "cli/bench src/nn/encoder hark_encode" >"$TMP/private"
    check "$TMP/private" >"$TMP/why"
    if grep -qx "cli/bench uses hark_encode of src/nn/encoder, which hark.h does not declare" "$TMP/why"; then ok
    else bad "a program's use of a private symbol was not caught"; fi
fi
echo "# deps.sh: $PASS passed, $FAIL failed, $SKIP skipped"
[ "$FAIL" -eq 0 ]
