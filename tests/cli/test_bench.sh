# hark bench on the small random test model: the JSON has every key with a
# positive number, the table has every row, --audio reports a real-time factor,
# and a bad model path is the usual one-line error.  Only the output's shape
# is checked, never a timing.  HARK_BENCH_QUICK shrinks the machine probes so
# the sanitized build stays fast.
. "$(dirname "$0")/lib.sh"
M=tests/data/tiny-random/hf-f32
CLIP=tests/data/clip.wav
export HARK_BENCH_QUICK=1
KEYS="encoder_ms first_encoder_ms decode_ms_per_token batch5_ms_per_token prompt_ms_per_token sgemm_gflops
      bandwidth_gbs encoder_peak_pct decode_bandwidth_pct decode_read_pct load_ms peak_rss_mb"

# json_number FILE KEY: the number after "KEY": in one-line JSON, or nothing.
json_number() { grep -oE "\"$2\":-?[0-9][0-9.eE+-]*" "$1" | head -n 1 | cut -d: -f2; }
positive() { awk -v x="$1" 'BEGIN { exit !(x + 0 > 0) }'; }

"$HARK" bench -m $M --reps 1 --json >$TMP/json 2>$TMP/err
expect_eq "bench --json exit" $? 0
expect_eq "bench --json stderr" "$(wc -c <$TMP/err)" 0
expect_eq "bench --json is one line" "$(wc -l <$TMP/json)" 1
for k in $KEYS; do
    v=$(json_number $TMP/json $k)
    if [ -n "$v" ] && positive "$v"; then ok; else bad "JSON key $k: [$v] is not a positive number"; fi
done
if command -v jq >/dev/null; then
    jq -e '.threads == 1 and .reps == 1 and (.weight_type | type == "string")' $TMP/json >/dev/null \
        && ok || bad "JSON is not the object expected: $(cat $TMP/json)"
fi

# All a step reads: the weights and, for this f32 model, its cross-attention K/V in
# f32: 2 (K, V) x 2 layers x 100 frames x 64 channels x 4 bytes = 0.1024 MB.
wm=$(json_number $TMP/json decode_weight_mb) rm=$(json_number $TMP/json decode_read_mb)
wp=$(json_number $TMP/json decode_bandwidth_pct) rp=$(json_number $TMP/json decode_read_pct)
if awk -v w="$wm" -v r="$rm" -v a="$wp" -v b="$rp" 'BEGIN { d = r - w - 0.1024
    exit !(d < 1e-3 && d > -1e-3 && w > 0 && (b / a - r / w) ^ 2 < 1e-4) }'; then ok; else
    bad "decode reads [$rm MB, $rp %] are not the weights [$wm MB, $wp %] plus 0.1024 MB of K/V"; fi

# The sgemm rate the percentages use is the faster of OpenBLAS and hark's
# AVX-512 tiles; the tiles are measured wherever the AVX-512 kernels run.
sg=$(json_number $TMP/json sgemm_gflops) ob=$(json_number $TMP/json sgemm_openblas_gflops)
tl=$(json_number $TMP/json sgemm_tiles_gflops)
if awk -v s="$sg" -v o="$ob" -v t="$tl" 'BEGIN { exit !(s == (o > t ? o : t) && o > 0) }'; then ok; else
    bad "sgemm_gflops [$sg] is not the faster of OpenBLAS [$ob] and the tiles [$tl]"; fi
if [ -z "${HARK_KERNELS:-}" ] && grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo; then
    if positive "$tl"; then ok; else bad "AVX-512 CPU but no tiles rate: [$tl]"; fi
else
    expect_eq "no tiles without the AVX-512 kernels" "$tl" 0
fi

# OpenBLAS runs vectorised kernels wherever the CPU has them: Debian's OpenBLAS
# falls back to SSE3 on cores it does not know, and hark then runs itself again
# with OPENBLAS_CORETYPE set; a core the user names is kept.
core=$(grep -oE '"blas_core":"[^"]*"' $TMP/json | cut -d'"' -f4)
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
    case "$core" in
    Haswell | Zen | SkylakeX | Cooperlake | SapphireRapids) ok ;;
    *) bad "OpenBLAS core [$core] on a CPU with AVX2 and FMA" ;;
    esac
else
    skip "OPENBLAS_CORETYPE set or no AVX2: OpenBLAS's own choice is kept"
fi
# OpenBLAS's own threads: one when the user chose no count (hark never gives them work,
# and they would spin at start-up); the user's count when there is one.
blas_threads() { env -u OPENBLAS_NUM_THREADS -u GOTO_NUM_THREADS -u OMP_NUM_THREADS "$@" \
    "$HARK" bench -m $M --reps 1 --json 2>/dev/null | grep -oE '"blas_threads":[0-9]+' | cut -d: -f2; }
expect_eq "OpenBLAS threads by default" "$(blas_threads)" 1
if [ "$(nproc)" -gt 1 ]; then
    expect_eq "OpenBLAS threads the user chose" "$(blas_threads OPENBLAS_NUM_THREADS=2)" 2
    expect_eq "OpenBLAS threads from OMP_NUM_THREADS" "$(blas_threads OMP_NUM_THREADS=2)" 2
fi
OPENBLAS_CORETYPE=Prescott "$HARK" bench -m $M --reps 1 --json >$TMP/json2 2>/dev/null
expect_eq "a core the user names is kept" "$(grep -oE '"blas_core":"[^"]*"' $TMP/json2)" '"blas_core":"Prescott"'

"$HARK" bench -m $M -t 1 --reps 1 >$TMP/table 2>$TMP/err
expect_eq "bench table exit" $? 0
for r in encoder decode 5-batch prompt load "peak RSS" sgemm bandwidth "encoder peak" "decode bandwidth" \
    "decode reads"; do
    expect_eq "table row $r" "$(grep -cE "^  $r +[0-9]+\.[0-9]+ " $TMP/table)" 1
done
expect_eq "table row sgemm tiles" "$(grep -cE "^  sgemm tiles +[0-9]+\.[0-9]+ " $TMP/table)" \
    "$(positive "$tl" && echo 1 || echo 0)"
expect_eq "no parts without --verbose" "$(grep -c "decode by part" $TMP/table)" 0

# --verbose: decode's time by part, each with its bytes a token; the JSON has the same
# four parts, and each part's megabytes are what the model's shapes say.
"$HARK" bench -m $M -t 1 --reps 1 --verbose >$TMP/verbose 2>$TMP/err
expect_eq "bench --verbose exit" $? 0
for r in self-attention cross-attention MLP logits "all parts"; do
    expect_eq "parts row $r" "$(grep -cE "^    $r +[0-9]+\.[0-9]+ +[0-9]+\.[0-9] % +[0-9]+\.[0-9]+ " $TMP/verbose)" 1
done
if command -v jq >/dev/null; then
    expect_eq "JSON parts" "$(jq -r '[.decode_parts[].part] | join(",")' $TMP/json)" \
        "self-attention,cross-attention,MLP,logits"
    expect_eq "JSON parts timed" "$(jq '[.decode_parts[] | select(.ms_per_token > 0)] | length' $TMP/json)" 4
    # this f32 model (d 64, 2 layers, 462 tokens, 100 frames, 64 steps), 4-byte numbers:
    # self-attention 2 x (4 x 64 x 64 + its K and V at the mean length, 2 x 64 x 65 / 2);
    # cross-attention 2 x 2 x 64 x 64 and its K/V, 0.1024 MB; MLP 2 x 2 x 256 x 64;
    # logits the embedding, 462 x 64
    expect_eq "JSON part bytes" "$(jq -r '[.decode_parts[].mb_per_token | tostring] | join(",")' $TMP/json)" \
        "0.1644,0.1679,0.2621,0.1183"
fi

"$HARK" bench --audio $CLIP -m $M --beam-size 1 --json >$TMP/audio 2>$TMP/err
expect_eq "bench --audio exit" $? 0
for k in audio_seconds wall_seconds real_time_factor; do
    v=$(json_number $TMP/audio $k)
    if [ -n "$v" ] && positive "$v"; then ok; else bad "--audio key $k: [$v] is not a positive number"; fi
done

expect_error "hark: $TMP/missing: No such file or directory" bench -m $TMP/missing --reps 1
"$HARK" bench -m $M --reps 0 >$TMP/out 2>$TMP/err
expect_eq "bench --reps 0 exit" $? 2

# --precisions: the encoder at each, interleaved, with its CPU time and its ratio to the first
"$HARK" bench -m $M --reps 1 --precisions f32,bf16,int8 --json >$TMP/prec 2>$TMP/err
expect_eq "bench --precisions exit" $? 0
for p in f32 bf16 int8; do
    for k in encoder_ms cpu_ms vs_first cpu_vs_first peak_pct; do
        v=$(jq -r ".encoder_by_precision.$p.$k" $TMP/prec)
        if [ -n "$v" ] && positive "$v"; then ok; else bad "--precisions $p.$k: [$v] is not a positive number"; fi
    done
done
expect_eq "the first precision against itself" "$(jq -r '.encoder_by_precision.f32.vs_first' $TMP/prec)" 1
expect_eq "the stages' precision" "$(jq -r '.precision' $TMP/prec)" f32
"$HARK" bench -m $M --reps 1 --precision int8 --json | jq -r .precision >$TMP/p
expect_eq "bench --precision int8" "$(cat $TMP/p)" int8
"$HARK" bench -m $M --precisions f32,fp8 >$TMP/out 2>$TMP/err
expect_eq "bench --precisions fp8 exit" $? 2
expect_eq "bench --precisions fp8 message" "$(cat $TMP/err)" "hark: bench: --precisions takes a list of auto, f32, bf16, int8 (at most 8), not f32,fp8 (see hark bench --help)"
summary test_bench.sh
