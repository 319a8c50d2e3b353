/* Whisper's audio encoder: conv1 + GELU, conv2 (stride 2) + GELU, sinusoidal
 * positions, pre-LN transformer blocks, final LayerNorm.  Activations are
 * time-major [frames][channels]. */
#include "nn/nn.h"
#include "kernels/kernels.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* cols[t][c * 3 + k] = x[stride * t + k - 1][c] for a [frames][ch] input
 * (time-major) or x[c][t'] for a channel-major one; zero outside. */
static void im2col(float *cols, const float *x, int frames, int ch, int stride, int out_frames,
                   int channel_major)
{
    for (int t = 0; t < out_frames; t++)
        for (int c = 0; c < ch; c++)
            for (int k = 0; k < 3; k++) {
                int src = stride * t + k - 1;
                float v = 0.0f;
                if (src >= 0 && src < frames)
                    v = channel_major ? x[(size_t)c * frames + src] : x[(size_t)src * ch + c];
                cols[((size_t)t * ch + c) * 3 + k] = v;
            }
}

/* Floats of scratch a block needs: h, q, k, v and the attention's output
 * (the MLP's 4 x d hidden units reuse q..att, dead by then), then the
 * attention's own scratch. */
static size_t block_floats(int n, int d, int n_head)
{
    return (size_t)n * d * 5 + hark_attention_scratch(n, n, n_head);
}

/* The encoder's packed matrices when the thread's precision is lower than f32
 * (hark_model_packed's order), and scratch for the products' converted x. */
typedef struct lowp {
    const hark_packed *pk;
    void *scratch;
} lowp;

/* y = x . W^T + bias (then GELU) in f32, or by the packed matrix i of lp when
 * there is one (lp not NULL). */
static void product(float *y, const float *x, int n, const hark_weight *w, const float *bias,
                    int gelu, const lowp *lp, int i)
{
    if (lp)
        hark_linear_packed(y, x, n, &lp->pk[i], bias, gelu, lp->scratch);
    else if (gelu)
        hark_linear_gelu(y, x, n, w, bias);
    else
        hark_linear(y, x, n, w, bias);
}

/* The most scratch bytes lp's products take (hark_linear_packed_scratch), for
 * n frames; 0 for f32. */
static size_t lowp_scratch(const hark_model *m, const hark_packed *pk, int n)
{
    size_t most = 0;
    for (int i = 0; pk && i < 2 + HARK_ENC_PACKED * m->hp.n_audio_layer; i++) {
        size_t b = hark_linear_packed_scratch(&pk[i], i == 0 ? 2 * n : n);
        most = b > most ? b : most;
    }
    return most;
}

/* One pre-LN self-attention block over x[n][d] (in place); layer l shown to
 * probe; lp: the packed matrices, or NULL (f32). */
static void encoder_block(const hark_block *b, float *x, int n, int d, int n_head, float *buf,
                          const hark_probe *probe, int l, const lowp *lp)
{
    int at = 2 + HARK_ENC_PACKED * l; /* the layer's first packed matrix */
    float *h = buf, *q = h + (size_t)n * d, *k = q + (size_t)n * d, *v = k + (size_t)n * d;
    float *att = v + (size_t)n * d, *mlp = q;
    float *scores = att + (size_t)n * d;
    hark_layer_norm(h, x, n, d, b->attn.ln_w, b->attn.ln_b);
    if (lp) { /* h converted once for the three */
        hark_packed_product qkv[3] = {{q, &lp->pk[at], b->attn.q_b, 0},
                                      {k, &lp->pk[at + 1], NULL, 0},
                                      {v, &lp->pk[at + 2], b->attn.v_b, 0}};
        hark_linear_packed_many(qkv, 3, h, n, lp->scratch);
    } else {
        hark_linear(q, h, n, &b->attn.q, b->attn.q_b);
        hark_linear(k, h, n, &b->attn.k, NULL);
        hark_linear(v, h, n, &b->attn.v, b->attn.v_b);
    }
    if (probe)
        probe->encoder_qk(probe->user, l, q, k, n);
    /* at a lower precision, attention's products in bf16 where the CPU has it */
    hark_attention_at(att, q, k, v, n, n, d, n_head, -1, scores,
                      lp ? lp->pk[0].prec : HARK_PREC_F32);
    product(h, att, n, &b->attn.o, b->attn.o_b, 0, lp, at + 3);
    hark_add(x, h, (size_t)n * d);
    hark_layer_norm(h, x, n, d, b->mlp_ln_w, b->mlp_ln_b);
    product(mlp, h, n, &b->fc1, b->fc1_b, 1, lp, at + 4);
    product(h, mlp, n, &b->fc2, b->fc2_b, 0, lp, at + 5);
    hark_add(x, h, (size_t)n * d);
}

float *hark_workspace_get(hark_workspace *ws, size_t n)
{
    if (n > ws->cap) {
        free(ws->p);
        ws->p = hark_alloc_populated(sizeof(float) * n);
        ws->cap = ws->p ? n : 0;
    }
    return ws->p;
}

void hark_workspace_free(hark_workspace *ws)
{
    free(ws->p);
    ws->p = NULL;
    ws->cap = 0;
}

int hark_encode(const hark_model *m, const float *mel, float *out, hark_workspace *ws)
{
    return hark_encode_probed(m, mel, out, ws, NULL);
}

int hark_encode_probed(const hark_model *m, const float *mel, float *out, hark_workspace *ws,
                       const hark_probe *probe)
{
    const hark_hparams *hp = &m->hp;
    int d = hp->n_audio_state, n = hp->n_audio_ctx, frames = 2 * n;
    /* the convolutions' im2col columns and conv1's output are dead once the
     * blocks start, so the blocks' scratch reuses them: every float of the
     * workspace is a page a first window faults in, at a cost a page (base/files.c) */
    size_t cols1 = (size_t)frames * hp->n_mels * 3, cols2 = (size_t)n * d * 3;
    size_t cols_size = cols1 > cols2 ? cols1 : cols2, h1_size = (size_t)frames * d;
    size_t conv_size = cols_size + h1_size, block_size = block_floats(n, d, hp->n_audio_head);
    size_t used = conv_size > block_size ? conv_size : block_size;
    /* NULL (f32) unless the thread's precision is lower and its packing succeeds */
    lowp lp = {hark_model_packed(m, hark_precision_current()), NULL};
    size_t scratch = lowp_scratch(m, lp.pk, n); /* bytes, after the floats, 64-aligned */
    hark_workspace own = {0};
    float *all = hark_workspace_get(ws ? ws : &own, used + (scratch ? scratch / 4 + 16 : 0));
    if (!all)
        return HARK_ERR_NOMEM;
    float *cols = all, *h1 = cols + cols_size, *buf = all;
    lp.scratch = (void *)(((uintptr_t)(all + used) + 63) & ~(uintptr_t)63);
    const lowp *low = lp.pk ? &lp : NULL;
    im2col(cols, mel, frames, hp->n_mels, 1, frames, 1);
    product(h1, cols, frames, &m->conv1, m->conv1_b, 1, low, 0);
    im2col(cols, h1, frames, d, 2, n, 0);
    product(out, cols, n, &m->conv2, m->conv2_b, 1, low, 1);
    hark_add(out, m->enc_pos, (size_t)n * d);
    for (int l = 0; l < hp->n_audio_layer; l++)
        encoder_block(&m->enc[l], out, n, d, hp->n_audio_head, buf, probe, l, low);
    hark_layer_norm(out, out, n, d, m->enc_ln_w, m->enc_ln_b);
    hark_workspace_free(&own);
    return 0;
}
