/* hark bench: whisper.cpp's benchmark protocol on one model, and the
 * machine's own limits measured in the same process.
 *
 * Stages (each the median of --reps repetitions):
 *   encoder  one 30 s window (n_mels x 2*n_audio_ctx of pseudo-random mel)
 *            plus the cross-attention K/V projection, which whisper.cpp's
 *            encoder time also covers;
 *   decode   256 single-token steps from an empty KV cache, ms per token;
 *   5-batch  5 sequences stepped together by hark_decode_batch for 64 steps,
 *            ms per sequence-token (total / (steps * 5)), as whisper.cpp reports;
 *   prompt   one hark_decode call of 256 tokens, ms per token.
 * Step and token counts are bounded by the model's n_text_ctx.
 *
 * Then the machine: sgemm GFLOP/s (OpenBLAS, same thread count, and hark's
 * AVX-512 tiles where they run, on hark's pool: the peak is the faster) and read
 * bandwidth (a streaming sum), each the best of a few runs, so the encoder can
 * be stated as a percentage of compute peak and decode as a percentage of
 * bandwidth for the weight bytes one token reads.  The probes run after the
 * model is freed and peak RSS is taken, so their buffers do not count.
 *
 * hark bench --audio FILE times a whole transcription instead (real-time
 * factor).  HARK_BENCH_QUICK=1 shrinks the probes (tests, sanitizers). */
#include <cJSON.h>
#include <cblas.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "base/base.h"
#include "cli.h"

enum { PROBE_RUNS = 10 }; /* best of: a busy machine interrupts some runs */

const char cli_bench_usage[] =
    "usage: hark bench -m MODEL [-t N] [--reps R] [--precision P] [--precisions LIST] [--json]\n"
    "                  [--verbose]\n"
    "       hark bench --audio FILE -m MODEL [-t N] [--json] [decoding options]\n"
    "  Times the encoder (one 30 s window), single-token decode, 5-sequence batched\n"
    "  decode and a 256-token prompt (medians of R repetitions, default 3), and measures\n"
    "  the machine's sgemm GFLOP/s and memory bandwidth in the same run.  --precisions\n"
    "  f32,bf16,int8 also times the encoder at each (7 rounds, interleaved; medians),\n"
    "  against the first and as a percentage of the f32 sgemm peak, and its CPU time\n"
    "  (steadier on a shared machine).  --verbose adds decode's time by part\n"
    "  (self-attention, cross-attention, MLP, logits) with each part's bytes read and\n"
    "  share of the bandwidth (--json always has them).  --audio transcribes FILE and\n"
    "  reports the real-time factor.  HARK_BENCH_QUICK=1 shrinks\n"
    "  the machine probes.\n";

enum { CLI_BENCH_PRECISIONS = 8, PRECISION_ROUNDS = 7 };
typedef struct bench_options {
    cli_options cli;
    const char *audio;
    int reps, json, quick, verbose;
    int precisions[CLI_BENCH_PRECISIONS], n_precisions; /* --precisions */
} bench_options;

typedef struct bench_result {
    hark_bench_stages st; /* the model's stages, timed in the library */
    double model_load_ms, load_ms, peak_rss_mb;
    double sgemm_gflops, bandwidth_gbs, encoder_peak_pct, decode_bandwidth_pct, decode_read_pct;
    double openblas_gflops, tiles_gflops; /* the sgemm rate is the higher of these */
    int blas_threads;                     /* OpenBLAS's own, as the process started */
    double precision_ms[CLI_BENCH_PRECISIONS];     /* the encoder at each of --precisions, */
    double precision_cpu_ms[CLI_BENCH_PRECISIONS]; /* and its CPU time */
} bench_result;

static int cmp_ms(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The encoder's GFLOP/s at a time, as a percentage of the f32 sgemm peak. */
static double peak_pct(const bench_result *r, double ms)
{
    return r->sgemm_gflops > 0 && ms > 0 ? 100 * r->st.encoder_gflop / (ms / 1e3) / r->sgemm_gflops : 0;
}

/* ------------------------------------------------------------ timing */

static double peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0; /* Linux reports KiB */
}

/* ------------------------------------------------------------ machine probes */

typedef struct sum_slice {
    const uint64_t *data;
    size_t n;
    uint64_t sum;
} sum_slice;

/* Four independent accumulators so the adds never limit the read rate. */
static void *sum_words(void *arg)
{
    sum_slice *s = arg;
    uint64_t a = 0, b = 0, c = 0, d = 0;
    size_t i = 0;
    for (; i + 4 <= s->n; i += 4)
        a += s->data[i], b += s->data[i + 1], c += s->data[i + 2], d += s->data[i + 3];
    for (; i < s->n; i++)
        a += s->data[i];
    s->sum = a + b + c + d;
    return NULL;
}

/* Keeps the sums alive so the reads cannot be optimised away. */
static volatile uint64_t probe_sink;

/* One parallel streaming read of the buffer; returns ms. */
static double time_stream_sum(const uint64_t *data, size_t n, int n_threads)
{
    pthread_t tid[CLI_MAX_THREADS]; /* -t's bound */
    sum_slice slice[CLI_MAX_THREADS];
    int started[CLI_MAX_THREADS] = {0};
    double t0 = 1e3 * hark_now_s();
    for (int t = 0; t < n_threads; t++) {
        size_t lo = n * t / n_threads, hi = n * (t + 1) / n_threads;
        slice[t] = (sum_slice){data + lo, hi - lo, 0};
        if (t > 0)
            started[t] = pthread_create(&tid[t], NULL, sum_words, &slice[t]) == 0;
    }
    for (int t = 0; t < n_threads; t++)
        if (!started[t]) /* slice 0, or a thread that could not start: read it here */
            sum_words(&slice[t]);
    for (int t = 1; t < n_threads; t++)
        if (started[t])
            pthread_join(tid[t], NULL);
    double ms = 1e3 * hark_now_s() - t0;
    for (int t = 0; t < n_threads; t++)
        probe_sink += slice[t].sum;
    return ms;
}

/* Best read bandwidth in GB/s over a buffer of mb MiB, split over n_threads
 * (decode reads its weights with as many threads). */
static double probe_bandwidth_gbs(size_t mb, int n_threads)
{
    size_t bytes = mb << 20;
    uint64_t *data = malloc(bytes);
    double best = 0;
    if (!data)
        return 0;
    memset(data, 1, bytes); /* fault every page in before timing */
    for (int run = 0; run <= PROBE_RUNS; run++) { /* run 0 warms up */
        double gbs = bytes / (time_stream_sum(data, bytes / sizeof(uint64_t), n_threads) * 1e6);
        if (run > 0 && gbs > best)
            best = gbs;
    }
    free(data);
    return best;
}

/* ------------------------------------------------------------ the model run */

/* The encoder at each of --precisions, interleaved: round after round, one
 * pass of each in turn, so that a busy machine slows them alike; medians. */
static int compare_precisions(const bench_options *o, const hark_model *m, bench_result *r)
{
    double ms[CLI_BENCH_PRECISIONS][PRECISION_ROUNDS], cpu[CLI_BENCH_PRECISIONS][PRECISION_ROUNDS];
    for (int k = 0; k < PRECISION_ROUNDS; k++)
        for (int p = 0; p < o->n_precisions; p++)
            if ((ms[p][k] = hark_bench_encoder_ms(m, o->cli.params.n_threads, 1, o->precisions[p],
                                                  &cpu[p][k])) < 0)
                return -1;
    for (int p = 0; p < o->n_precisions; p++) {
        qsort(ms[p], PRECISION_ROUNDS, sizeof(double), cmp_ms);
        qsort(cpu[p], PRECISION_ROUNDS, sizeof(double), cmp_ms);
        r->precision_ms[p] = ms[p][PRECISION_ROUNDS / 2];
        r->precision_cpu_ms[p] = cpu[p][PRECISION_ROUNDS / 2];
    }
    return 0;
}

/* Loads the model (timed to its first logits), runs the stages, takes peak
 * RSS and frees the model; prints the error and returns 1 on failure. */
static int measure_model(const bench_options *o, bench_result *r)
{
    double t0 = 1e3 * hark_now_s();
    hark_model *m = cli_load_model(&o->cli);
    if (!m)
        return 1;
    r->model_load_ms = 1e3 * hark_now_s() - t0;
    int rc = hark_bench_model(m, o->cli.params.n_threads, o->reps, o->cli.params.precision, &r->st);
    if (!rc && o->n_precisions)
        rc = compare_precisions(o, m, r);
    r->load_ms = r->model_load_ms + r->st.first_logits_ms;
    r->peak_rss_mb = peak_rss_mb();
    hark_model_free(m);
    if (rc)
        fprintf(stderr, "hark: %s: the benchmark could not run the model (out of memory?)\n",
                o->cli.model ? o->cli.model : "model");
    return rc ? 1 : 0;
}

static void measure_machine(const bench_options *o, bench_result *r)
{
    r->openblas_gflops = hark_bench_sgemm_gflops(o->quick ? 256 : 1024, o->cli.params.n_threads, 0);
    r->sgemm_gflops = r->openblas_gflops > r->tiles_gflops ? r->openblas_gflops : r->tiles_gflops;
    r->bandwidth_gbs = probe_bandwidth_gbs(o->quick ? 8 : 512, o->cli.params.n_threads);
    double encoder_gflops = r->st.encoder_gflop / (r->st.encoder_ms / 1e3);
    double per_s = 1e3 / r->st.decode_ms_per_token, bw = r->bandwidth_gbs * 1e3; /* MB/s */
    r->encoder_peak_pct = r->sgemm_gflops > 0 ? 100 * encoder_gflops / r->sgemm_gflops : 0;
    r->decode_bandwidth_pct = bw > 0 ? 100 * r->st.decode_weight_mb * per_s / bw : 0;
    r->decode_read_pct = bw > 0 ? 100 * r->st.decode_read_mb * per_s / bw : 0;
}

/* ------------------------------------------------------------ output */

/* Four significant digits: enough for timings, and small values stay non-zero. */
static double round_sig(double x)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.4g", x);
    return strtod(buf, NULL);
}

static void add_number(cJSON *obj, const char *key, double v)
{
    cJSON_AddNumberToObject(obj, key, round_sig(v));
}

static void print_json(cJSON *obj)
{
    char *text = cJSON_PrintUnformatted(obj);
    if (text)
        cli_print(text), cli_print("\n");
    free(text);
    cJSON_Delete(obj);
}

static void add_parts_json(cJSON *j, const bench_result *r)
{
    cJSON *parts = cJSON_AddArrayToObject(j, "decode_parts");
    for (int k = 0; parts && k < HARK_BENCH_PARTS; k++) {
        const hark_bench_part *p = &r->st.decode_parts[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "part", p->name);
        add_number(o, "ms_per_token", p->ms_per_token);
        add_number(o, "mb_per_token", p->mb_per_token);
        double gbs = p->ms_per_token > 0 ? p->mb_per_token / p->ms_per_token : 0;
        add_number(o, "bandwidth_pct", r->bandwidth_gbs > 0 ? 100 * gbs / r->bandwidth_gbs : 0);
        cJSON_AddItemToArray(parts, o);
    }
}

static void print_model_json(const bench_options *o, const bench_result *r)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", o->cli.model ? o->cli.model : "");
    cJSON_AddStringToObject(j, "weight_type", r->st.weight_type);
    cJSON_AddStringToObject(j, "precision", r->st.precision);
    cJSON_AddNumberToObject(j, "threads", o->cli.params.n_threads);
    cJSON_AddNumberToObject(j, "reps", o->reps);
    add_number(j, "encoder_ms", r->st.encoder_ms);
    add_number(j, "first_encoder_ms", r->st.first_encoder_ms);
    add_number(j, "decode_ms_per_token", r->st.decode_ms_per_token);
    add_number(j, "batch5_ms_per_token", r->st.batch5_ms_per_token);
    add_number(j, "prompt_ms_per_token", r->st.prompt_ms_per_token);
    cJSON_AddNumberToObject(j, "decode_steps", r->st.decode_steps);
    cJSON_AddNumberToObject(j, "batch_steps", r->st.batch_steps);
    cJSON_AddNumberToObject(j, "prompt_tokens", r->st.prompt_tokens);
    add_number(j, "load_ms", r->load_ms);
    add_number(j, "model_load_ms", r->model_load_ms);
    add_number(j, "peak_rss_mb", r->peak_rss_mb);
    add_number(j, "sgemm_gflops", r->sgemm_gflops);
    add_number(j, "sgemm_openblas_gflops", r->openblas_gflops);
    add_number(j, "sgemm_tiles_gflops", r->tiles_gflops);
    cJSON_AddStringToObject(j, "blas_core", openblas_get_corename());
    cJSON_AddNumberToObject(j, "blas_threads", r->blas_threads);
    add_number(j, "bandwidth_gbs", r->bandwidth_gbs);
    add_number(j, "encoder_gflop", r->st.encoder_gflop);
    add_number(j, "decode_weight_mb", r->st.decode_weight_mb);
    add_number(j, "encoder_peak_pct", r->encoder_peak_pct);
    add_number(j, "decode_bandwidth_pct", r->decode_bandwidth_pct);
    add_number(j, "decode_read_mb", r->st.decode_read_mb);
    add_number(j, "decode_read_pct", r->decode_read_pct);
    if (o->n_precisions) { /* {"bf16": {"encoder_ms":, "vs_first":, "peak_pct":}, ...} */
        cJSON *by = cJSON_AddObjectToObject(j, "encoder_by_precision");
        for (int p = 0; p < o->n_precisions; p++) {
            cJSON *e = cJSON_AddObjectToObject(by, hark_precision_effective(o->precisions[p]));
            add_number(e, "encoder_ms", r->precision_ms[p]);
            add_number(e, "vs_first", r->precision_ms[0] / r->precision_ms[p]);
            add_number(e, "peak_pct", peak_pct(r, r->precision_ms[p]));
            add_number(e, "cpu_ms", r->precision_cpu_ms[p]);
            add_number(e, "cpu_vs_first", r->precision_cpu_ms[0] / r->precision_cpu_ms[p]);
        }
    }
    add_parts_json(j, r);
    print_json(j);
}

static void row(const char *name, double value, const char *unit, const char *note)
{
    if (*note)
        printf("  %-18s %10.2f %-9s %s\n", name, value, unit, note);
    else
        printf("  %-18s %10.2f %s\n", name, value, unit);
}

static void print_precisions_table(const bench_options *o, const bench_result *r)
{
    char name[32], note[160];
    for (int p = 0; p < o->n_precisions; p++) {
        snprintf(name, sizeof name, "encoder %s", hark_precision_effective(o->precisions[p]));
        snprintf(note, sizeof note, "%.2fx the %s, %.1f %% of the f32 sgemm peak (%d rounds)",
                 r->precision_ms[0] / r->precision_ms[p],
                 hark_precision_effective(o->precisions[0]), peak_pct(r, r->precision_ms[p]),
                 PRECISION_ROUNDS);
        row(name, r->precision_ms[p], "ms", note);
        snprintf(name, sizeof name, "  its CPU time");
        snprintf(note, sizeof note, "%.2fx the %s's", r->precision_cpu_ms[0] / r->precision_cpu_ms[p],
                 hark_precision_effective(o->precisions[0]));
        row(name, r->precision_cpu_ms[p], "ms", note);
    }
}

static void print_model_table(const bench_options *o, const bench_result *r)
{
    char note[160];
    int t = o->cli.params.n_threads;
    printf("hark bench: %s (%s weights, %s encoder), %d thread%s, medians of %d run%s\n",
           o->cli.model ? o->cli.model : "default model", r->st.weight_type, r->st.precision, t,
           t == 1 ? "" : "s", o->reps, o->reps == 1 ? "" : "s");
    snprintf(note, sizeof note, "one 30 s window + cross K/V, %.3g GFLOP", r->st.encoder_gflop);
    row("encoder", r->st.encoder_ms, "ms", note);
    row("first encoder", r->st.first_encoder_ms, "ms", "the first pass, as a file's first window");
    snprintf(note, sizeof note, "%d single-token steps", r->st.decode_steps);
    row("decode", r->st.decode_ms_per_token, "ms/token", note);
    snprintf(note, sizeof note, "%d steps x %d sequences", r->st.batch_steps, HARK_BENCH_BATCH);
    row("5-batch", r->st.batch5_ms_per_token, "ms/token", note);
    snprintf(note, sizeof note, "one call of %d tokens", r->st.prompt_tokens);
    row("prompt", r->st.prompt_ms_per_token, "ms/token", note);
    snprintf(note, sizeof note, "to first logits (model load %.1f ms)", r->model_load_ms);
    row("load", r->load_ms, "ms", note);
    row("peak RSS", r->peak_rss_mb, "MB", "");
    snprintf(note, sizeof note, "%s, best of 10, OpenBLAS %s", o->quick ? "256^3" : "1024^3",
             openblas_get_corename());
    row("sgemm", r->openblas_gflops, "GFLOP/s", note);
    if (r->tiles_gflops > 0)
        row("sgemm tiles", r->tiles_gflops, "GFLOP/s", "the same, hark's AVX-512 tiles");
    row("bandwidth", r->bandwidth_gbs, "GB/s", o->quick ? "8 MiB read, best of 10"
                                                         : "512 MiB read, best of 10");
    row("encoder peak", r->encoder_peak_pct, "%", "of the faster sgemm's GFLOP/s");
    snprintf(note, sizeof note, "of the bandwidth, for %.3g MB of weights per token",
             r->st.decode_weight_mb);
    row("decode bandwidth", r->decode_bandwidth_pct, "%", note);
    snprintf(note, sizeof note, "the same for all %.3g MB read: weights and cross-attention K/V",
             r->st.decode_read_mb);
    row("decode reads", r->decode_read_pct, "%", note);
    print_precisions_table(o, r);
}

/* --verbose: where a decoding step's time goes, each part's reads per token and
 * the rate they make, as a share of the bandwidth; the total is the parts' sum. */
static void print_parts(const bench_result *r)
{
    const hark_bench_part *p = r->st.decode_parts;
    double ms = 0, mb = 0, bw = r->bandwidth_gbs;
    for (int k = 0; k < HARK_BENCH_PARTS; k++)
        ms += p[k].ms_per_token, mb += p[k].mb_per_token;
    printf("  decode by part       ms/token   share   MB/token   GB/s   of bandwidth\n");
    for (int k = 0; k <= HARK_BENCH_PARTS; k++) {
        const char *name = k < HARK_BENCH_PARTS ? p[k].name : "all parts";
        double t = k < HARK_BENCH_PARTS ? p[k].ms_per_token : ms;
        double b = k < HARK_BENCH_PARTS ? p[k].mb_per_token : mb, gbs = t > 0 ? b / t : 0;
        printf("    %-18s %8.3f %6.1f %% %9.2f %7.2f %7.1f %%\n", name, t, ms > 0 ? 100 * t / ms : 0,
               b, gbs, bw > 0 ? 100 * gbs / bw : 0);
    }
}

static int bench_model(const bench_options *o)
{
    bench_result r;
    memset(&r, 0, sizeof r);
    r.blas_threads = cli_blas_threads_at_start();
    /* the model runs as transcription runs it: hark's pool of -t threads,
     * OpenBLAS single-threaded inside; the sgemm probe uses OpenBLAS's own threads */
    openblas_set_num_threads(1);
    int failed = measure_model(o, &r);
    if (!failed)
        r.tiles_gflops = hark_bench_sgemm_gflops(o->quick ? 256 : 1024, o->cli.params.n_threads, 1);
    if (failed)
        return 1;
    openblas_set_num_threads(o->cli.params.n_threads);
    measure_machine(o, &r);
    if (o->json)
        print_model_json(o, &r);
    else
        print_model_table(o, &r);
    if (!o->json && o->verbose)
        print_parts(&r);
    return 0;
}

/* ------------------------------------------------------------ --audio */

static void print_audio(const bench_options *o, double audio_s, double wall_s, double load_ms)
{
    double rtf = audio_s > 0 ? wall_s / audio_s : 0, rss = peak_rss_mb();
    if (o->json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "audio", o->audio);
        cJSON_AddStringToObject(j, "model", o->cli.model ? o->cli.model : "");
        cJSON_AddNumberToObject(j, "threads", o->cli.params.n_threads);
        add_number(j, "audio_seconds", audio_s);
        add_number(j, "wall_seconds", wall_s);
        add_number(j, "real_time_factor", rtf);
        add_number(j, "load_ms", load_ms);
        add_number(j, "peak_rss_mb", rss);
        print_json(j);
        return;
    }
    printf("hark bench: %s, %d thread%s\n", o->audio, o->cli.params.n_threads,
           o->cli.params.n_threads == 1 ? "" : "s");
    row("audio", audio_s, "s", "");
    row("wall", wall_s, "s", "transcription, model loaded");
    row("real-time factor", rtf, "", "wall / audio (below 1: faster than real time)");
    row("load", load_ms, "ms", "model and context");
    row("peak RSS", rss, "MB", "");
}

static int bench_audio(const bench_options *o)
{
    double t0 = 1e3 * hark_now_s();
    hark_model *m = cli_load_model(&o->cli);
    if (!m)
        return 1;
    hark_context *ctx = hark_context_new(m, &o->cli.params);
    double load_ms = 1e3 * hark_now_s() - t0, t1 = 1e3 * hark_now_s();
    int rc = ctx ? hark_transcribe_file(ctx, o->audio) : HARK_ERR_NOMEM;
    double wall_s = (1e3 * hark_now_s() - t1) / 1e3;
    if (rc)
        fprintf(stderr, "hark: %s\n", ctx ? hark_last_error(ctx) : "out of memory for a context");
    else
        print_audio(o, hark_audio_seconds(ctx), wall_s, load_ms);
    hark_context_free(ctx);
    hark_model_free(m);
    return rc ? 1 : 0;
}

/* ------------------------------------------------------------ arguments */

static int bench_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "hark: bench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see hark bench --help)\n");
    return 2;
}

/* "f32,bf16,int8" into o->precisions; -1 for a name that is none of them. */
static int parse_precisions(bench_options *o, const char *list)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", list);
    o->n_precisions = 0;
    for (char *save, *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        int p = hark_precision_parse(name);
        if (p < 0 || o->n_precisions == CLI_BENCH_PRECISIONS)
            return -1;
        o->precisions[o->n_precisions++] = p;
    }
    return o->n_precisions ? 0 : -1;
}

/* Returns -1 to go on, else the exit status (0 after --help). */
static int parse_bench_args(bench_options *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end;
        int r;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            cli_print(cli_bench_usage);
            return 0;
        } else if (!strcmp(a, "--json")) {
            o->json = 1;
        } else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
            o->verbose = 1;
        } else if (v && !strcmp(a, "--reps")) {
            long reps = strtol(v, &end, 10);
            if (!*v || *end || reps < 1 || reps > 1000)
                return bench_usage_error("--reps takes a count from 1 to 1000, not %s", v);
            o->reps = (int)reps, i++;
        } else if (v && !strcmp(a, "--precisions")) {
            if (parse_precisions(o, v))
                return bench_usage_error("--precisions takes a list of auto, f32, bf16, int8 "
                                         "(at most 8), not %s", v);
            i++;
        } else if (v && !strcmp(a, "--audio")) {
            o->audio = v, i++;
        } else if ((r = cli_parse_common(&o->cli, argc, argv, &i)) != 0) {
            if (r < 0)
                return 2;
        } else {
            return bench_usage_error(a[0] == '-' ? "unknown option or missing value: %s"
                                                 : "unexpected argument: %s", a);
        }
    }
    return -1;
}

int cli_bench_main(int argc, char **argv)
{
    bench_options o;
    memset(&o, 0, sizeof o);
    cli_default_options(&o.cli);
    o.reps = 3;
    const char *quick = getenv("HARK_BENCH_QUICK");
    o.quick = quick && *quick && strcmp(quick, "0") != 0;
    int rc = parse_bench_args(&o, argc, argv);
    if (rc >= 0)
        return rc;
    if (o.cli.params.n_threads < 1)
        o.cli.params.n_threads = 1;
    return o.audio ? bench_audio(&o) : bench_model(&o);
}
