/* Hugging Face Whisper directories: config.json for the dimensions,
 * model.safetensors (or shards listed by model.safetensors.index.json) for
 * the weights, vocab.json + merges.txt or tokenizer.json for the byte-level
 * BPE, added tokens and generation_config.json for the special ids. */
#include "model/model.h"
#include "model/safetensors.h"

#include <cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { MAX_SHARDS = 64 };

typedef struct hf_source {
    st_file shards[MAX_SHARDS];
    int n_shards;
    hark_error *e;
} hf_source;

static void join(char *out, size_t n, const char *dir, const char *file)
{
    snprintf(out, n, "%s/%s", dir, file);
}

static int exists(const char *dir, const char *file)
{
    char p[1200];
    struct stat st;
    join(p, sizeof p, dir, file);
    return stat(p, &st) == 0;
}

/* Parses dir/file as JSON; *out is NULL (and 0 returned) when optional and absent. */
static int read_json(const char *dir, const char *file, int optional, cJSON **out, hark_error *e)
{
    char p[1200], *text;
    size_t size;
    *out = NULL;
    join(p, sizeof p, dir, file);
    if (optional && !exists(dir, file))
        return 0;
    int rc = hark_read_file(p, &text, &size, e);
    if (rc)
        return rc;
    *out = cJSON_ParseWithLength(text, size);
    free(text);
    if (!*out)
        return hark_fail(e, HARK_ERR_FORMAT, "%s: malformed JSON", p);
    return 0;
}

/* ---------------------------------------------------------- config */

static int config_int(const cJSON *cfg, const char *path, const char *key, int *v, hark_error *e)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(cfg, key);
    if (!it)
        return hark_fail(e, HARK_ERR_FORMAT, "%s: missing \"%s\"", path, key);
    if (!cJSON_IsNumber(it) || it->valuedouble != (double)(int)it->valuedouble)
        return hark_fail(e, HARK_ERR_FORMAT, "%s: \"%s\" is not an integer", path, key);
    *v = it->valueint;
    return 0;
}

static int read_config(hark_model *m, const char *dir, hark_error *e)
{
    cJSON *cfg;
    char path[1200];
    join(path, sizeof path, dir, "config.json");
    if (!exists(dir, "config.json"))
        return hark_fail(e, HARK_ERR_FORMAT, "%s: no config.json (not a Hugging Face Whisper directory)", dir);
    int rc = read_json(dir, "config.json", 0, &cfg, e);
    if (rc)
        return rc;
    hark_hparams *hp = &m->hp;
    const struct { const char *key; int *v; } keys[] = {
        {"vocab_size", &hp->n_vocab}, {"num_mel_bins", &hp->n_mels},
        {"d_model", &hp->n_audio_state}, {"encoder_layers", &hp->n_audio_layer},
        {"encoder_attention_heads", &hp->n_audio_head}, {"decoder_layers", &hp->n_text_layer},
        {"decoder_attention_heads", &hp->n_text_head}, {"max_source_positions", &hp->n_audio_ctx},
        {"max_target_positions", &hp->n_text_ctx}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0] && !rc; i++)
        rc = config_int(cfg, path, keys[i].key, keys[i].v, e);
    hp->n_text_state = hp->n_audio_state;
    const cJSON *act = cJSON_GetObjectItemCaseSensitive(cfg, "activation_function");
    if (!rc && act && (!cJSON_IsString(act) || strcmp(act->valuestring, "gelu") != 0))
        rc = hark_fail(e, HARK_ERR_FORMAT, "%s: activation_function must be \"gelu\"", path);
    cJSON_Delete(cfg);
    static const char *const names[10] = {
        "vocab_size", "max_source_positions", "d_model", "encoder_attention_heads",
        "encoder_layers", "max_target_positions", "d_model", "decoder_attention_heads",
        "decoder_layers", "num_mel_bins"};
    return rc ? rc : hark_hparams_check(hp, names, path, e);
}

/* ---------------------------------------------------------- weights */

static int open_shards(hf_source *s, const char *dir, hark_error *e)
{
    char path[1200];
    if (exists(dir, "model.safetensors")) {
        join(path, sizeof path, dir, "model.safetensors");
        s->n_shards = 1;
        return hark_st_open(&s->shards[0], path, e);
    }
    cJSON *idx;
    if (!exists(dir, "model.safetensors.index.json")) {
        /* older Hub directories carry only PyTorch's pickle, which is code */
        if (exists(dir, "pytorch_model.bin") || exists(dir, "pytorch_model.bin.index.json"))
            return hark_fail(e, HARK_ERR_FORMAT,
                             "%s: no model.safetensors, only pytorch_model.bin (a pickle, which "
                             "hark does not read): convert it with scripts/convert/pt-to-safetensors", dir);
        return hark_fail(e, HARK_ERR_FORMAT, "%s: no model.safetensors", dir);
    }
    int rc = read_json(dir, "model.safetensors.index.json", 0, &idx, e);
    if (rc)
        return rc;
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(idx, "weight_map");
    join(path, sizeof path, dir, "model.safetensors.index.json");
    if (!cJSON_IsObject(map))
        rc = hark_fail(e, HARK_ERR_FORMAT, "%s: missing \"weight_map\"", path);
    for (const cJSON *it = map ? map->child : NULL; it && !rc; it = it->next) {
        int known = 0;
        if (!cJSON_IsString(it) || strchr(it->valuestring, '/')) {
            rc = hark_fail(e, HARK_ERR_FORMAT, "%s: bad shard name for %s", path, it->string);
            break;
        }
        char shard[1200];
        join(shard, sizeof shard, dir, it->valuestring);
        for (int i = 0; i < s->n_shards; i++)
            known |= strcmp(s->shards[i].path, shard) == 0;
        if (known)
            continue;
        if (s->n_shards == MAX_SHARDS)
            rc = hark_fail(e, HARK_ERR_FORMAT, "%s: more than %d shards", path, MAX_SHARDS);
        else
            rc = hark_st_open(&s->shards[s->n_shards++], shard, e);
    }
    cJSON_Delete(idx);
    return rc;
}

/* openai name -> transformers name, e.g. decoder.blocks.3.cross_attn.key.weight
 * -> model.decoder.layers.3.encoder_attn.k_proj.weight. */
static void hf_name(const char *openai, char *out, size_t n)
{
    static const char *const fixed[][2] = {
        {"encoder.positional_embedding", "model.encoder.embed_positions.weight"},
        {"decoder.positional_embedding", "model.decoder.embed_positions.weight"},
        {"decoder.token_embedding.weight", "model.decoder.embed_tokens.weight"}};
    static const char *const parts[][2] = {
        {".attn.query.", ".self_attn.q_proj."}, {".attn.key.", ".self_attn.k_proj."},
        {".attn.value.", ".self_attn.v_proj."}, {".attn.out.", ".self_attn.out_proj."},
        {".attn_ln.", ".self_attn_layer_norm."}, {".cross_attn.query.", ".encoder_attn.q_proj."},
        {".cross_attn.key.", ".encoder_attn.k_proj."}, {".cross_attn.value.", ".encoder_attn.v_proj."},
        {".cross_attn.out.", ".encoder_attn.out_proj."}, {".cross_attn_ln.", ".encoder_attn_layer_norm."},
        {".mlp.0.", ".fc1."}, {".mlp.2.", ".fc2."}, {".mlp_ln.", ".final_layer_norm."},
        {"encoder.ln_post.", "encoder.layer_norm."}, {"decoder.ln.", "decoder.layer_norm."},
        {".blocks.", ".layers."}};
    for (size_t i = 0; i < 3; i++)
        if (strcmp(openai, fixed[i][0]) == 0) {
            snprintf(out, n, "%s", fixed[i][1]);
            return;
        }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", openai);
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        char *at = strstr(buf, parts[i][0]);
        if (!at)
            continue;
        char tail[256];
        snprintf(tail, sizeof tail, "%s", at + strlen(parts[i][0]));
        size_t room = sizeof buf - (size_t)(at - buf);
        size_t lp = strlen(parts[i][1]), lt = strlen(tail);
        if (lp + lt < room) {
            memcpy(at, parts[i][1], lp);
            memcpy(at + lp, tail, lt + 1);
        }
    }
    snprintf(out, n, "model.%s", buf);
}

static int lookup(void *source, const char *name, hark_raw_tensor *t)
{
    hf_source *s = source;
    char hf[300];
    hf_name(name, hf, sizeof hf);
    for (int i = 0; i < s->n_shards; i++) {
        const st_tensor *st = hark_st_find(&s->shards[i], hf);
        if (!st)
            continue;
        if ((int)st->raw.type < 0) {
            /* report the type problem, then say "missing" is not the story */
            hark_fail(s->e, HARK_ERR_FORMAT, "%s: tensor %s has dtype %s; hark reads F32, F16 and BF16",
                      s->shards[i].path, hf, st->dtype_name);
            return -2;
        }
        *t = st->raw;
        return 0;
    }
    return -1;
}

/* ---------------------------------------------------------- vocabulary */

/* GPT-2's byte-to-unicode map, inverted: code point -> byte (-1: none). */
static void unicode_to_byte(int *map /* [324] */)
{
    int n = 0;
    for (int i = 0; i < 324; i++)
        map[i] = -1;
    for (int b = 0; b < 256; b++) {
        int printable = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae);
        map[printable ? b : 256 + n++] = b;
    }
}

static int map[324];
static pthread_once_t map_once = PTHREAD_ONCE_INIT;
static void build_map(void) { unicode_to_byte(map); }

/* Token string (GPT-2 unicode form) -> raw bytes; returns length or -1. */
static int token_to_bytes(const char *s, char *out, int cap)
{
    pthread_once(&map_once, build_map);
    int n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && n < cap;) {
        unsigned cp;
        if (p[0] < 0x80) {
            cp = p[0];
            p += 1;
        } else if ((p[0] >> 5) == 6 && (p[1] & 0xc0) == 0x80) {
            cp = (unsigned)(p[0] & 0x1f) << 6 | (p[1] & 0x3f);
            p += 2;
        } else {
            return -1;
        }
        if (cp >= 324 || map[cp] < 0)
            return -1;
        out[n++] = (char)map[cp];
    }
    return n < cap ? n : -1;
}

/* The integer it holds when that is one in [0, n) (a token id, a layer), else -1. */
static int index_in(const cJSON *it, int n)
{
    if (!cJSON_IsNumber(it) || it->valuedouble != (double)(int)it->valuedouble)
        return -1;
    return it->valueint >= 0 && it->valueint < n ? it->valueint : -1;
}

static int add_text_tokens(hark_model *m, const cJSON *vocab, const char *path, hark_error *e)
{
    char bytes[1024];
    for (const cJSON *it = vocab->child; it; it = it->next) {
        int id = index_in(it, m->hp.n_vocab);
        if (id < 0)
            return hark_fail(e, HARK_ERR_FORMAT, "%s: token \"%.40s\" has no id in [0, %d)", path,
                             it->string, m->hp.n_vocab);
        int len = token_to_bytes(it->string, bytes, sizeof bytes);
        if (len < 0) /* special tokens written literally, e.g. <|endoftext|> */
            len = snprintf(bytes, sizeof bytes, "%s", it->string);
        if (len >= (int)sizeof bytes || hark_vocab_set(&m->vocab, id, bytes, len))
            return hark_fail(e, HARK_ERR_FORMAT, "%s: token \"%.40s\" is too long", path, it->string);
    }
    return 0;
}

/* added_tokens.json ({"<|en|>": id, ...}) or tokenizer.json's added_tokens
 * ([{"id": id, "content": "<|en|>", ...}, ...]). */
static int add_special_tokens(hark_model *m, const cJSON *added, const char *path, hark_error *e)
{
    for (const cJSON *it = added ? added->child : NULL; it; it = it->next) {
        const cJSON *id = cJSON_IsObject(it) ? cJSON_GetObjectItemCaseSensitive(it, "id") : it;
        const cJSON *content = cJSON_IsObject(it) ? cJSON_GetObjectItemCaseSensitive(it, "content") : NULL;
        const char *text = content ? (cJSON_IsString(content) ? content->valuestring : NULL) : it->string;
        if (!text)
            return hark_fail(e, HARK_ERR_FORMAT, "%s: an added token without its text", path);
        int k = index_in(id, m->hp.n_vocab);
        if (k < 0)
            return hark_fail(e, HARK_ERR_FORMAT, "%s: added token \"%.40s\" has no id in [0, %d)",
                             path, text, m->hp.n_vocab);
        hark_vocab_set(&m->vocab, k, text, (int)strlen(text));
    }
    return 0;
}

static int add_merge(hark_model *m, const char *a, const char *b, int rank)
{
    char buf[2100], l[1024];
    int la = token_to_bytes(a, buf, 1024), lb = token_to_bytes(b, l, 1024);
    if (la < 0 || lb < 0)
        return -1;
    memcpy(buf + la, l, (size_t)lb);
    int id = hark_vocab_lookup(&m->vocab, buf, la + lb);
    if (id >= 0 && m->vocab.rank[id] > rank)
        m->vocab.rank[id] = rank;
    return 0;
}

static int read_merges_txt(hark_model *m, const char *dir, hark_error *e)
{
    char path[1200], *text;
    size_t size;
    join(path, sizeof path, dir, "merges.txt");
    int rc = hark_read_file(path, &text, &size, e), rank = 0;
    if (rc)
        return rc;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *sp = strchr(line, ' ');
        if (line[0] == '#' || !sp)
            continue;
        *sp = 0;
        char *end = strchr(sp + 1, '\r');
        if (end)
            *end = 0;
        if (add_merge(m, line, sp + 1, rank++)) {
            rc = hark_fail(e, HARK_ERR_FORMAT, "%s: merge %d is not byte-level", path, rank);
            break;
        }
    }
    free(text);
    return rc;
}

static int read_merges_json(hark_model *m, const cJSON *merges, const char *path, hark_error *e)
{
    int rank = 0;
    for (const cJSON *it = merges ? merges->child : NULL; it; it = it->next, rank++) {
        char buf[2100];
        const char *a = NULL, *b = NULL;
        if (cJSON_IsString(it)) {
            snprintf(buf, sizeof buf, "%s", it->valuestring);
            char *sp = strchr(buf, ' ');
            if (sp) {
                *sp = 0;
                a = buf;
                b = sp + 1;
            }
        } else if (cJSON_GetArraySize(it) == 2) {
            a = cJSON_GetStringValue(cJSON_GetArrayItem(it, 0));
            b = cJSON_GetStringValue(cJSON_GetArrayItem(it, 1));
        }
        if (!a || !b || add_merge(m, a, b, rank))
            return hark_fail(e, HARK_ERR_FORMAT, "%s: bad merge %d", path, rank);
    }
    return 0;
}

/* Tokens first (vocab.json or tokenizer.json), then the index, then merges. */
static int read_vocab(hark_model *m, const char *dir, hark_error *e)
{
    cJSON *vocab = NULL, *tok = NULL, *added = NULL;
    char path[1200];
    int rc = hark_vocab_alloc(&m->vocab, m->hp.n_vocab, dir, e);
    int use_json = !exists(dir, "vocab.json") || !exists(dir, "merges.txt");
    join(path, sizeof path, dir, use_json ? "tokenizer.json" : "vocab.json");
    if (!rc && use_json && !exists(dir, "tokenizer.json"))
        rc = hark_fail(e, HARK_ERR_FORMAT, "%s: no vocab.json + merges.txt or tokenizer.json", dir);
    if (!rc)
        rc = read_json(dir, use_json ? "tokenizer.json" : "vocab.json", 0, use_json ? &tok : &vocab, e);
    const cJSON *model = tok ? cJSON_GetObjectItemCaseSensitive(tok, "model") : NULL;
    if (!rc && tok)
        vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    if (!rc && !cJSON_IsObject(vocab))
        rc = hark_fail(e, HARK_ERR_FORMAT, "%s: no token vocabulary", path);
    if (!rc)
        rc = add_text_tokens(m, vocab, path, e);
    if (!rc && tok)
        rc = add_special_tokens(m, cJSON_GetObjectItemCaseSensitive(tok, "added_tokens"), path, e);
    if (!rc && !tok && !(rc = read_json(dir, "added_tokens.json", 1, &added, e))) {
        join(path, sizeof path, dir, "added_tokens.json");
        rc = add_special_tokens(m, added, path, e);
    }
    if (!rc)
        rc = hark_vocab_index(&m->vocab, e);
    if (!rc)
        rc = tok ? read_merges_json(m, cJSON_GetObjectItemCaseSensitive(model, "merges"), path, e)
                 : read_merges_txt(m, dir, e);
    if (!tok)
        cJSON_Delete(vocab);
    cJSON_Delete(tok);
    cJSON_Delete(added);
    return rc;
}

/* ---------------------------------------------------------- specials */

static int special_id(const hark_vocab *v, const char *name)
{
    return hark_vocab_lookup(v, name, (int)strlen(name));
}

static int find_specials(hark_model *m, const char *dir, hark_error *e)
{
    hark_vocab *v = &m->vocab;
    hark_specials *s = &v->sp;
    s->eot = special_id(v, "<|endoftext|>");
    s->sot = special_id(v, "<|startoftranscript|>");
    s->translate = special_id(v, "<|translate|>");
    s->transcribe = special_id(v, "<|transcribe|>");
    s->startoflm = special_id(v, "<|startoflm|>");
    s->startofprev = special_id(v, "<|startofprev|>");
    s->nospeech = special_id(v, "<|nospeech|>");
    if (s->nospeech < 0)
        s->nospeech = special_id(v, "<|nocaptions|>");
    s->notimestamps = special_id(v, "<|notimestamps|>");
    if (s->eot < 0 || s->sot < 0 || s->notimestamps < 0 || s->translate < 0 ||
        s->translate <= s->sot)
        return hark_fail(e, HARK_ERR_FORMAT,
                         "%s: the vocabulary lacks Whisper's special tokens (<|endoftext|>, <|startoftranscript|>, <|translate|>, <|notimestamps|>)",
                         dir);
    s->first_lang = s->sot + 1;
    s->n_langs = s->translate - s->first_lang;
    s->timestamp_begin = s->notimestamps + 1;
    s->n_timestamps = m->hp.n_vocab - s->timestamp_begin;
    v->n_text = s->eot;
    v->multilingual = s->n_langs > 1;
    /* The timestamp tokens often are not listed: name them, then re-index. */
    free(v->table);
    v->table = NULL;
    if (hark_vocab_name_specials(v))
        return hark_fail(e, HARK_ERR_NOMEM, "%s: out of memory", dir);
    return hark_vocab_index(v, e);
}

static int int_list(const cJSON *arr, int **out, int *n, int max)
{
    int k = cJSON_GetArraySize(arr);
    *out = malloc(sizeof(int) * (size_t)(k ? k : 1));
    if (!*out)
        return -1;
    *n = 0;
    for (const cJSON *it = arr->child; it; it = it->next)
        if (cJSON_IsNumber(it) && it->valueint >= 0 && it->valueint < max)
            (*out)[(*n)++] = it->valueint;
    return 0;
}

/* [[layer, head], ...]: the cross-attention heads that time words (openai and
 * HF fail on a head the model lacks; so does hark, naming it). */
static int read_alignment_heads(hark_model *m, const cJSON *heads, const char *dir, hark_error *e)
{
    char path[1200];
    join(path, sizeof path, dir, "generation_config.json");
    if (heads && !cJSON_IsArray(heads))
        return hark_fail(e, HARK_ERR_FORMAT, "%s: alignment_heads is not a list", path);
    for (const cJSON *h = heads ? heads->child : NULL; h && m->n_alignment_heads < 64; h = h->next) {
        int l = index_in(cJSON_GetArrayItem(h, 0), m->hp.n_text_layer);
        int k = index_in(cJSON_GetArrayItem(h, 1), m->hp.n_text_head);
        if (l < 0 || k < 0 || cJSON_GetArraySize(h) != 2)
            return hark_fail(e, HARK_ERR_FORMAT,
                             "%s: alignment head %d is not [layer, head] of %d layers x %d heads",
                             path, m->n_alignment_heads, m->hp.n_text_layer, m->hp.n_text_head);
        m->alignment_heads[m->n_alignment_heads][0] = l;
        m->alignment_heads[m->n_alignment_heads++][1] = k;
    }
    return 0;
}

static int read_generation_config(hark_model *m, const char *dir, hark_error *e)
{
    cJSON *gen;
    int rc = read_json(dir, "generation_config.json", 1, &gen, e);
    if (rc || !gen)
        return rc;
    const cJSON *multi = cJSON_GetObjectItemCaseSensitive(gen, "is_multilingual");
    if (cJSON_IsBool(multi))
        m->vocab.multilingual = cJSON_IsTrue(multi);
    const cJSON *sup = cJSON_GetObjectItemCaseSensitive(gen, "suppress_tokens");
    if (cJSON_IsArray(sup) && int_list(sup, &m->suppress, &m->n_suppress, m->hp.n_vocab))
        rc = hark_fail(e, HARK_ERR_NOMEM, "%s: out of memory", dir);
    if (!rc)
        rc = read_alignment_heads(m, cJSON_GetObjectItemCaseSensitive(gen, "alignment_heads"), dir, e);
    cJSON_Delete(gen);
    return rc;
}

int hark_load_hf(hark_model *m, const char *dir, hark_error *e)
{
    hf_source *s = calloc(1, sizeof *s);
    if (!s)
        return hark_fail(e, HARK_ERR_NOMEM, "%s: out of memory", dir);
    s->e = e;
    int rc = read_config(m, dir, e);
    if (!rc)
        rc = read_vocab(m, dir, e);
    if (!rc)
        rc = find_specials(m, dir, e);
    if (!rc)
        rc = read_generation_config(m, dir, e);
    if (!rc)
        rc = open_shards(s, dir, e);
    if (!rc)
        rc = hark_model_bind(m, lookup, s, s->n_shards == 1 ? s->shards[0].path : dir, e);
    for (int i = 0; i < s->n_shards; i++) {
        if (!rc && !hark_model_add_map(m, &s->shards[i].map))
            memset(&s->shards[i].map, 0, sizeof(hark_map)); /* the model owns it now */
        hark_st_close(&s->shards[i]);
    }
    free(s);
    return rc;
}
