/* Silero VAD (v5/v6, 16 kHz) from whisper.cpp's ggml VAD file: a speech
 * probability for every 512 samples.  Each chunk is read after the 64 samples
 * before it (zeros before the first), as silero-vad's own wrapper feeds its
 * model, and the LSTM's state runs through the whole file.  whisper.cpp instead
 * reflects each chunk's edges; hark follows the model's authors, whose ONNX
 * file through onnxruntime is the reference (scripts/reference/vad-reference.js).
 *
 * Per chunk: a 256-point STFT (the file's basis, a conv of stride 128 over the
 * 576 samples reflected 64 more on the right: 4 frames of 129 magnitudes),
 * four conv1d + ReLU (strides 1 2 2 1: 4 frames -> 1), an LSTM cell of 128,
 * then ReLU, a 1x1 conv and a sigmoid.  Everything but the LSTM's recurrence
 * is done a block of chunks at a time as matrix products. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/audio.h"

enum {
    CONTEXT = 64,
    INPUT = HARK_VAD_CHUNK + CONTEXT, /* 576 */
    PADDED = INPUT + CONTEXT,         /* reflected on the right: 640 */
    N_FFT = 256,
    HOP = 128,
    FRAMES = 4,                       /* (640 - 256) / 128 + 1 */
    BINS = N_FFT / 2 + 1,             /* 129 */
    HIDDEN = 128,
    GATES = 4 * HIDDEN,
    LAYERS = 4,
    BLOCK = 256,                      /* chunks a block (8 s) */
};

static const int layer_in[LAYERS] = {BINS, 128, 64, 64};
static const int layer_out[LAYERS] = {128, 64, 64, 128};
static const int layer_stride[LAYERS] = {1, 2, 2, 1};

struct hark_vad {
    float *basis;                 /* [2 * BINS][N_FFT]: real rows, then imaginary */
    float *conv_w[LAYERS];        /* [out][3][in]: taps outside channels, for im2col rows */
    float *conv_b[LAYERS];
    float *w_ih, *w_hh, *bias;    /* [GATES][HIDDEN] twice; bias_ih + bias_hh */
    float *out_w, out_b;          /* the final 1x1 conv */
};

/* ------------------------------------------------------------ loading */

typedef struct vad_tensor {
    const char *name;
    int n_dims, dims[3];          /* ggml order: innermost first */
} vad_tensor;

static const vad_tensor expected[] = {
    {"_model.encoder.0.reparam_conv.weight", 3, {3, BINS, 128}},
    {"_model.encoder.0.reparam_conv.bias", 1, {128}},
    {"_model.encoder.1.reparam_conv.weight", 3, {3, 128, 64}},
    {"_model.encoder.1.reparam_conv.bias", 1, {64}},
    {"_model.encoder.2.reparam_conv.weight", 3, {3, 64, 64}},
    {"_model.encoder.2.reparam_conv.bias", 1, {64}},
    {"_model.encoder.3.reparam_conv.weight", 3, {3, 64, 128}},
    {"_model.encoder.3.reparam_conv.bias", 1, {128}},
    {"_model.decoder.rnn.weight_ih", 2, {HIDDEN, GATES}},
    {"_model.decoder.rnn.weight_hh", 2, {HIDDEN, GATES}},
    {"_model.decoder.rnn.bias_ih", 1, {GATES}},
    {"_model.decoder.rnn.bias_hh", 1, {GATES}},
    {"_model.decoder.decoder.2.weight", 1, {HIDDEN}},
    {"_model.decoder.decoder.2.bias", 0, {0}},
    {"_model.stft.forward_basis_buffer", 3, {N_FFT, 1, 2 * BINS}},
};
enum { N_TENSORS = sizeof expected / sizeof expected[0] };

/* The header after the magic: the model type, its version, then the shapes,
 * which must be Silero's (hark runs that one network). */
static int read_header(hark_cursor *c)
{
    int32_t len, v;
    int rc = hark_read_i32(c, &len, "the header");
    if (rc)
        return rc;
    if (len != 10 || (rc = hark_need(c, 10, "the header")) || memcmp(c->p, "silero-16k", 10))
        return rc ? rc : hark_fail(c->e, HARK_ERR_FORMAT, "%s: not a Silero VAD model (its "
                                   "ggml header names no \"silero-16k\")", c->path);
    c->p += len;
    static const int32_t shape[] = {HARK_VAD_CHUNK, CONTEXT, LAYERS, BINS, 128, 3, 128, 64, 3,
                                    64, 64, 3, 64, 128, 3, HIDDEN, HIDDEN, HIDDEN, 1};
    for (int i = 0; i < 3; i++) /* the version: informative only */
        if ((rc = hark_read_i32(c, &v, "the header")))
            return rc;
    for (size_t i = 0; i < sizeof shape / sizeof shape[0]; i++) {
        if ((rc = hark_read_i32(c, &v, "the header")))
            return rc;
        if (v != shape[i])
            return hark_fail(c->e, HARK_ERR_FORMAT, "%s: header value %zu is %d, not Silero VAD's %d",
                             c->path, i + 1, v, shape[i]);
    }
    return 0;
}

static int tensor_index(const char *name, int len)
{
    for (int i = 0; i < N_TENSORS; i++)
        if ((int)strlen(expected[i].name) == len && memcmp(expected[i].name, name, (size_t)len) == 0)
            return i;
    return -1;
}

/* count values of a tensor (type 0: f32, 1: f16) as a new f32 array in *out. */
static int read_values(hark_cursor *c, int type, size_t count, const char *name, float **out)
{
    size_t size = type ? 2 : 4;
    int rc = hark_need(c, count * size, name);
    if (rc)
        return rc;
    if (!(*out = malloc(sizeof(float) * count)))
        return hark_fail(c->e, HARK_ERR_NOMEM, "%s: out of memory", c->path);
    for (size_t i = 0; i < count; i++, c->p += size)
        if (type)
            (*out)[i] = hark_f16_to_f32((uint16_t)(c->p[0] | c->p[1] << 8));
        else
            memcpy(&(*out)[i], c->p, 4); /* little-endian, as the hosts hark builds for */
    return 0;
}

/* One tensor record; its values, as f32, into out[] at its place in expected[]. */
static int read_tensor(hark_cursor *c, float **out)
{
    int32_t n_dims, len, type, d;
    int rc, dims[3] = {0};
    if ((rc = hark_read_i32(c, &n_dims, "a tensor header")) ||
        (rc = hark_read_i32(c, &len, "a tensor header")) ||
        (rc = hark_read_i32(c, &type, "a tensor header")))
        return rc;
    if (n_dims < 0 || n_dims > 3 || len <= 0 || len > 128 || (type != 0 && type != 1))
        return hark_fail(c->e, HARK_ERR_FORMAT, "%s: bad tensor header (%d dims, name length %d, "
                         "type %d)", c->path, n_dims, len, type);
    for (int i = 0; i < n_dims; i++) {
        if ((rc = hark_read_i32(c, &d, "a tensor header")))
            return rc;
        dims[i] = d;
    }
    if ((rc = hark_need(c, (size_t)len, "a tensor name")))
        return rc;
    const char *name = (const char *)c->p;
    int k = tensor_index(name, len);
    if (k < 0 || out[k])
        return hark_fail(c->e, HARK_ERR_FORMAT, "%s: %s tensor %.*s", c->path,
                         k < 0 ? "unexpected" : "repeated", len, name);
    if (expected[k].n_dims != n_dims || memcmp(dims, expected[k].dims, sizeof dims))
        return hark_fail(c->e, HARK_ERR_FORMAT, "%s: tensor %.*s is not of Silero VAD's shape",
                         c->path, len, name);
    c->p += len;
    size_t count = 1;
    for (int i = 0; i < n_dims; i++)
        count *= (size_t)dims[i];
    return read_values(c, type, count, expected[k].name, &out[k]);
}

/* Conv weights [out][in][3] (the file's order) as [out][3][in]. */
static float *taps_outside(const float *w, int cout, int cin)
{
    float *t = malloc(sizeof(float) * (size_t)cout * cin * 3);
    if (t)
        for (int o = 0; o < cout; o++)
            for (int i = 0; i < cin; i++)
                for (int k = 0; k < 3; k++)
                    t[((size_t)o * 3 + k) * cin + i] = w[((size_t)o * cin + i) * 3 + k];
    return t;
}

/* Takes the tensors read (t, indexed as expected[]) into vad's layout. */
static int assemble(hark_vad *vad, float **t)
{
    for (int l = 0; l < LAYERS; l++) {
        if (!(vad->conv_w[l] = taps_outside(t[2 * l], layer_out[l], layer_in[l])))
            return -1;
        vad->conv_b[l] = t[2 * l + 1];
        t[2 * l + 1] = NULL;
    }
    for (int g = 0; g < GATES; g++)
        t[10][g] += t[11][g];
    vad->w_ih = t[8], vad->w_hh = t[9], vad->bias = t[10], vad->out_w = t[12];
    vad->out_b = t[13][0];
    vad->basis = t[14];
    t[8] = t[9] = t[10] = t[12] = t[14] = NULL;
    return 0;
}

static int read_model(hark_vad *vad, hark_cursor *c)
{
    float *t[N_TENSORS] = {0};
    int32_t magic;
    int rc = hark_read_i32(c, &magic, "the magic");
    if (!rc && (uint32_t)magic != 0x67676d6c)
        rc = hark_fail(c->e, HARK_ERR_FORMAT, "%s: bad magic 0x%08x (not a whisper.cpp ggml file)",
                       c->path, (uint32_t)magic);
    if (!rc)
        rc = read_header(c);
    for (int i = 0; i < N_TENSORS && !rc; i++)
        rc = read_tensor(c, t);
    if (!rc && c->p != c->end)
        rc = hark_fail(c->e, HARK_ERR_FORMAT, "%s: %zu bytes after the last tensor", c->path,
                       (size_t)(c->end - c->p));
    if (!rc && assemble(vad, t))
        rc = hark_fail(c->e, HARK_ERR_NOMEM, "%s: out of memory", c->path);
    for (int i = 0; i < N_TENSORS; i++)
        free(t[i]);
    return rc;
}

hark_vad *hark_vad_load(const char *path, char *err, size_t errlen)
{
    hark_error e = {{0}};
    hark_map map;
    hark_vad *vad = calloc(1, sizeof *vad);
    int rc = vad ? hark_map_file(path, &map, &e)
                 : hark_fail(&e, HARK_ERR_NOMEM, "%s: out of memory", path);
    if (!rc) {
        hark_cursor c = {map.data, map.data + map.size, path, &e};
        rc = read_model(vad, &c);
        hark_map_release(&map);
    }
    if (rc) {
        hark_vad_free(vad);
        vad = NULL;
        if (err && errlen)
            snprintf(err, errlen, "%s", e.msg);
    }
    return vad;
}

void hark_vad_free(hark_vad *vad)
{
    if (!vad)
        return;
    for (int l = 0; l < LAYERS; l++) {
        free(vad->conv_w[l]);
        free(vad->conv_b[l]);
    }
    free(vad->basis);
    free(vad->w_ih);
    free(vad->w_hh);
    free(vad->bias);
    free(vad->out_w);
    free(vad);
}

/* ------------------------------------------------------------ inference */

typedef struct vad_work {
    float *frames; /* [chunk][FRAMES][N_FFT] */
    float *a, *b;  /* activations [chunk][time][channels], and the next layer's */
    float *cols;   /* im2col rows [chunk * time][3 * in] */
} vad_work;

/* Chunk i's 640 samples: the 64 before it, its 512 (zeros past the end), then
 * the last 64 reflected about the last sample, as torch's reflect padding; s
 * holds the samples from base on (n in all). */
static void chunk_input(const float *s, long long base, size_t n, size_t i, float *x)
{
    size_t at = i * HARK_VAD_CHUNK;
    for (int t = 0; t < INPUT; t++) {
        size_t k = at + (size_t)t;
        x[t] = k >= CONTEXT && k - CONTEXT < n ? s[(long long)(k - CONTEXT) - base] : 0.0f;
    }
    for (int t = 0; t < CONTEXT; t++)
        x[INPUT + t] = x[INPUT - 2 - t];
}

/* The STFT magnitudes of chunks [first, first + n) into w->a: [chunk][FRAMES][BINS]. */
static void magnitudes(const hark_vad *vad, const float *s, long long base, size_t len,
                       size_t first, int n, vad_work *w)
{
    float x[PADDED];
    for (int c = 0; c < n; c++) {
        chunk_input(s, base, len, first + (size_t)c, x);
        for (int f = 0; f < FRAMES; f++)
            memcpy(w->frames + ((size_t)c * FRAMES + f) * N_FFT, x + f * HOP, sizeof(float) * N_FFT);
    }
    int rows = n * FRAMES;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, 2 * BINS, N_FFT, 1.0f, w->frames,
                N_FFT, vad->basis, N_FFT, 0.0f, w->b, 2 * BINS);
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < BINS; k++) {
            float re = w->b[(size_t)r * 2 * BINS + k], im = w->b[(size_t)r * 2 * BINS + BINS + k];
            w->a[(size_t)r * BINS + k] = sqrtf(re * re + im * im);
        }
}

/* Layer l over n chunks of len frames each (w->a) into w->a: conv1d of kernel 3,
 * padding 1, the layer's stride, then ReLU; returns the frames out. */
static int conv_layer(const hark_vad *vad, int l, int n, int len, vad_work *w)
{
    int cin = layer_in[l], cout = layer_out[l], stride = layer_stride[l];
    int out_len = (len - 1) / stride + 1, width = 3 * cin;
    for (int c = 0; c < n; c++)
        for (int t = 0; t < out_len; t++) {
            float *row = w->cols + ((size_t)c * out_len + t) * width;
            for (int k = 0; k < 3; k++) {
                int at = t * stride + k - 1;
                if (at < 0 || at >= len)
                    memset(row + k * cin, 0, sizeof(float) * cin);
                else
                    memcpy(row + k * cin, w->a + ((size_t)c * len + at) * cin, sizeof(float) * cin);
            }
        }
    int rows = n * out_len;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, cout, width, 1.0f, w->cols, width,
                vad->conv_w[l], width, 0.0f, w->b, cout);
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < cout; o++) {
            float v = w->b[(size_t)r * cout + o] + vad->conv_b[l][o];
            w->a[(size_t)r * cout + o] = v > 0 ? v : 0;
        }
    return out_len;
}

static float sigmoid(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

/* The LSTM cell and the output head over n chunks, whose input projections
 * (bias included) are in gates; h and c carry the state from chunk to chunk. */
static void recur(const hark_vad *vad, float *gates, int n, float *h, float *c, float *probs)
{
    for (int i = 0; i < n; i++) {
        float *g = gates + (size_t)i * GATES;
        cblas_sgemv(CblasRowMajor, CblasNoTrans, GATES, HIDDEN, 1.0f, vad->w_hh, HIDDEN, h, 1, 1.0f,
                    g, 1);
        float out = vad->out_b;
        for (int j = 0; j < HIDDEN; j++) { /* PyTorch's gate order: input, forget, cell, output */
            c[j] = sigmoid(g[HIDDEN + j]) * c[j] + sigmoid(g[j]) * tanhf(g[2 * HIDDEN + j]);
            h[j] = sigmoid(g[3 * HIDDEN + j]) * tanhf(c[j]);
            out += vad->out_w[j] * (h[j] > 0 ? h[j] : 0);
        }
        probs[i] = sigmoid(out);
    }
}

/* A block at a time, its samples read from the source (with the 64 before it):
 * memory does not grow with the input. */
int hark_vad_probs_of(const hark_vad *vad, const hark_source *src, float *probs)
{
    size_t n_chunks = hark_vad_n_chunks(src->n);
    vad_work w = {malloc(sizeof(float) * BLOCK * FRAMES * N_FFT),
                  malloc(sizeof(float) * BLOCK * FRAMES * 2 * BINS),
                  malloc(sizeof(float) * BLOCK * FRAMES * 2 * BINS),
                  malloc(sizeof(float) * BLOCK * FRAMES * 3 * BINS)};
    float h[HIDDEN] = {0}, c[HIDDEN] = {0};
    float *x = malloc(sizeof(float) * (BLOCK * HARK_VAD_CHUNK + CONTEXT));
    int rc = w.frames && w.a && w.b && w.cols && x ? 0 : HARK_ERR_NOMEM;
    for (size_t first = 0; first < n_chunks && !rc; first += BLOCK) {
        int n = n_chunks - first < BLOCK ? (int)(n_chunks - first) : BLOCK, len = FRAMES;
        long long base = (long long)(first * HARK_VAD_CHUNK) - CONTEXT;
        if ((rc = hark_source_read(src, base, (size_t)n * HARK_VAD_CHUNK + CONTEXT, x)))
            break;
        magnitudes(vad, x, base, src->n, first, n, &w);
        for (int l = 0; l < LAYERS; l++)
            len = conv_layer(vad, l, n, len, &w);
        for (int i = 0; i < n; i++) /* the bias of both projections, then x W_ih^T */
            memcpy(w.b + (size_t)i * GATES, vad->bias, sizeof(float) * GATES);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, GATES, HIDDEN, 1.0f, w.a, HIDDEN,
                    vad->w_ih, HIDDEN, 1.0f, w.b, GATES);
        recur(vad, w.b, n, h, c, probs + first);
    }
    free(x);
    free(w.frames);
    free(w.a);
    free(w.b);
    free(w.cols);
    return rc;
}

int hark_vad_probs(const hark_vad *vad, const float *samples, size_t n_samples, float *probs)
{
    hark_source src;
    hark_source_memory(&src, samples, n_samples);
    return hark_vad_probs_of(vad, &src, probs);
}

size_t hark_vad_n_chunks(size_t n_samples)
{
    return (n_samples + HARK_VAD_CHUNK - 1) / HARK_VAD_CHUNK;
}
