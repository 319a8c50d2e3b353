/* Loading a model: the path's format chosen (a Hugging Face directory or a
 * whisper.cpp .bin), the model's defaults filled in where its files have none
 * (first tokens, suppressed tokens, alignment heads), and its dimensions. */
#include "model/model.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int is_directory(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Adds the first token of text's encoding when it is a single token (or
 * always, when any_length), as openai's non_speech_tokens() does. */
static int add_first_token(hark_model *m, const char *text, int any_length)
{
    int *ids, n = hark_tokenize(&m->vocab, text, &ids);
    if (n < 0)
        return -1;
    int id = n > 0 ? ids[0] : -1;
    free(ids);
    if (id < 0 || (n != 1 && !any_length))
        return 0;
    for (int i = 0; i < m->n_suppress; i++)
        if (m->suppress[i] == id)
            return 0;
    m->suppress[m->n_suppress++] = id;
    return 0;
}

/* Suppressed when a model states no list of its own (ggml files): openai's
 * suppress_tokens "-1", the non-speech symbols as this vocabulary encodes them. */
static int default_suppress(hark_model *m)
{
    static const char *const symbols[] = {
        "\"", "#", "(", ")", "*", "+", "/", ":", ";", "<", "=", ">", "@", "[", "\\", "]", "^",
        "_", "`", "{", "|", "}", "~", "「", "」", "『", "』", "<<", ">>", "<<<", ">>>", "--",
        "---", "-(", "-[", "('", "(\"", "((", "))", "(((", ")))", "[[", "]]", "{{", "}}",
        "♪♪", "♪♪♪"};
    static const char *const misc[] = {"♩", "♪", "♫", "♬", "♭", "♮", "♯"};
    int n_sym = (int)(sizeof symbols / sizeof symbols[0]), n_misc = 7;
    m->suppress = malloc(sizeof(int) * (size_t)(2 * (n_sym + n_misc) + 2));
    if (!m->suppress)
        return -1;
    int rc = add_first_token(m, " -", 1) | add_first_token(m, " '", 1);
    char spaced[16];
    for (int i = 0; i < n_sym + n_misc; i++) {
        const char *sym = i < n_sym ? symbols[i] : misc[i - n_sym];
        snprintf(spaced, sizeof spaced, " %s", sym);
        rc |= add_first_token(m, sym, i >= n_sym) | add_first_token(m, spaced, i >= n_sym);
    }
    return rc;
}

/* Without a list from the model: every head of the last half of the decoder
 * layers, as openai does for models it has no alignment heads for. */
static void default_alignment_heads(hark_model *m)
{
    for (int l = m->hp.n_text_layer / 2; l < m->hp.n_text_layer; l++)
        for (int h = 0; h < m->hp.n_text_head && m->n_alignment_heads < 64; h++) {
            m->alignment_heads[m->n_alignment_heads][0] = l;
            m->alignment_heads[m->n_alignment_heads++][1] = h;
        }
}

hark_model *hark_model_load(const char *path, char *err, size_t errlen)
{
    hark_error e = {{0}};
    if (!path) {
        if (err && errlen)
            snprintf(err, errlen, "no model path given");
        return NULL;
    }
    hark_model *m = calloc(1, sizeof *m);
    if (!m) {
        if (err && errlen)
            snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    snprintf(m->path, sizeof m->path, "%s", path);
    int rc = is_directory(path) ? hark_load_hf(m, path, &e) : hark_load_ggml(m, path, &e);
    if (!rc && !m->suppress && default_suppress(m))
        rc = hark_fail(&e, HARK_ERR_NOMEM, "%s: out of memory", path);
    if (!rc && m->n_alignment_heads == 0)
        default_alignment_heads(m);
    if (!rc && !(m->packed = hark_packed_cache_new()))
        rc = hark_fail(&e, HARK_ERR_NOMEM, "%s: out of memory", path);
    if (rc) {
        if (err && errlen)
            snprintf(err, errlen, "%s", e.msg);
        hark_model_free(m);
        return NULL;
    }
    return m;
}

int hark_model_n_mels(const hark_model *m) { return m->hp.n_mels; }
int hark_model_n_vocab(const hark_model *m) { return m->hp.n_vocab; }
int hark_model_window_samples(const hark_model *m) { return m->hp.n_audio_ctx * 320; }
int hark_model_is_multilingual(const hark_model *m) { return m->vocab.multilingual; }
