# make install: binary, libraries, header and pkg-config file land under PREFIX,
# and a program built against the installed library links and runs.
. "$(dirname "$0")/lib.sh"
if [ -n "${HARK_SANITIZED:-}" ]; then skip "install is checked in the plain run"; summary install; exit; fi
P="$TMP/prefix"
make -s install PREFIX="$P" >"$TMP/log" 2>&1; expect_eq "make install" $? 0
for f in bin/hark lib/libhark.a lib/libhark.so include/hark.h lib/pkgconfig/hark.pc; do
    [ -f "$P/$f" ] && ok || bad "$f not installed"
done
"$P/bin/hark" --version >"$TMP/v"; expect_eq "installed hark runs" "$(cat "$TMP/v")" "hark 0.1.0"
cat >"$TMP/use.c" <<'C'
#include <hark.h>
#include <stdio.h>
int main(void) { hark_params p = hark_default_params(); printf("%d %d\n", p.search.beam_size, p.n_threads); return 0; }
C
cc -o "$TMP/use" "$TMP/use.c" $(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --cflags --libs hark) -Wl,-rpath,"$P/lib" 2>"$TMP/cc"
expect_eq "links against the installed library" $? 0
expect_eq "runs" "$("$TMP/use")" "5 1"
# the libraries define no global symbol outside hark_ (a program's own st_open or
# gelu must not clash with them)
expect_eq "libhark.a: symbols outside hark_" "$(nm -g --defined-only "$P/lib/libhark.a" 2>/dev/null |
    awk 'NF == 3 && $2 ~ /[A-Z]/ && $2 != "U" && $2 != "w" && $2 != "W" {print $3}' |
    grep -v '^hark_' | grep -v '^_' | tr '\n' ' ')" ""
# and libhark.so exports exactly the functions hark.h declares
expect_eq "libhark.so exports hark.h" \
    "$(nm -D --defined-only "$P/lib/libhark.so" | awk '$2 == "T" {print $3}' | sort | tr '\n' ' ')" \
    "$(grep -oE '\bhark_[a-z0-9_]+\(' include/hark.h | tr -d '(' | sort -u | tr '\n' ' ')"
# the installed hark finds the installed default model, from any directory
if [ -f models/hark-en-tiny/config.json ]; then
    [ -f "$P/share/hark/hark-en-tiny/config.json" ] && ok || bad "default model not installed"
    # only the shipped models (models/), never the training checkpoint (training/ckpt/)
    expect_eq "installed models" "$(ls "$P/share/hark" | tr '\n' ' ')" "hark-en-tiny silero-vad "
    [ -z "$(find "$P" -name model.fp16.pt -o -name state.json)" ] && ok ||
        bad "the training checkpoint was installed"
    (cd "$TMP" && HARK_MODEL= "$P/bin/hark" -q "$OLDPWD/samples/sample01-en-us.wav" >/dev/null 2>"$TMP/err"); rc=$?
    expect_eq "installed hark with its model" "$rc $(cat "$TMP/err")" "0 "
    # and its VAD model
    (cd "$TMP" && HARK_MODEL= "$P/bin/hark" -q --vad "$OLDPWD/samples/sample01-en-us.wav" >/dev/null 2>"$TMP/err"); rc=$?
    expect_eq "installed hark --vad" "$rc $(cat "$TMP/err")" "0 "
fi
summary install
