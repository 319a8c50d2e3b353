#!/usr/bin/python3
"""Builds hark's small random test model and the reference values its C tests
compare against.

Writes tests/data/tiny-random/:
  hf-f32/, hf-f16/       Hugging Face Whisper directories (safetensors F32 / F16)
  model-f32.bin, model-f16.bin   whisper.cpp ggml files
  ref_mel.npy            log-mel of tests/data/clip.wav as transcription computes it
                         (whole clip + 30 s of zeros), first content_frames + one window
  ref_encoder.npy        encoder output of the first window
  ref_logits.npy         logits after [sot, notimestamps] for the first window
  ref.json               greedy tokens of every window, and the facts above

All weights are rounded to f16-representable values first, so the f32 and f16
files hold the same numbers and every format must give the same tokens.
Run: /usr/bin/python3 scripts/reference/make_test_model.py
"""
import json
import os
import re
import string
import sys
import wave

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
sys.path[:0] = [HERE, SCRIPTS]  # scripts/reference/ and scripts/ (hark_model)
import hark_model as hm  # noqa: E402

ROOT = os.path.dirname(SCRIPTS)
OUT = os.path.join(ROOT, "tests", "data", "tiny-random")
CLIP = os.path.join(ROOT, "tests", "data", "clip.wav")

TOK_SCALE = float(os.environ.get("TOK_SCALE", 2.0))
POS_STD = float(os.environ.get("POS_STD", 1.0))
TEXT = ("the quick brown fox jumps over the lazy dog and hark reads whisper models "
        "then writes what it hears in plain text with timestamps for every segment")


def train_bpe(text, n_merges):
    """A tiny byte-level BPE: enough merges to exercise the merge tables."""
    words = [list(bytes(" " + w, "utf-8")) for w in text.split()]
    words = [[bytes([b]) for b in w] for w in words]
    merges = []
    for _ in range(n_merges):
        counts = {}
        for w in words:
            for a, b in zip(w, w[1:]):
                counts[(a, b)] = counts.get((a, b), 0) + 1
        if not counts:
            break
        (a, b), _ = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
        merges.append((a, b))
        for w in words:
            i = 0
            while i + 1 < len(w):
                if w[i] == a and w[i + 1] == b:
                    w[i:i + 2] = [a + b]
                else:
                    i += 1
    tokens = [bytes([i]) for i in range(256)] + [a + b for a, b in merges]
    return tokens, merges


def export_sharded(model, src_dir, out_dir, n_shards=2):
    """The f32 HF directory again, its weights split over shards listed by
    model.safetensors.index.json, as large Hugging Face models come."""
    import shutil
    os.makedirs(out_dir, exist_ok=True)
    for name in os.listdir(src_dir):
        if name != "model.safetensors":
            shutil.copy(os.path.join(src_dir, name), out_dir)
    tensors = {hm.openai_to_hf_name(k): v for k, v in hm.model_state(model).items()}
    names = sorted(tensors)
    weight_map = {}
    for k in range(n_shards):
        part = names[k * len(names) // n_shards:(k + 1) * len(names) // n_shards]
        fname = "model-%05d-of-%05d.safetensors" % (k + 1, n_shards)
        hm.write_safetensors(os.path.join(out_dir, fname), {n: tensors[n] for n in part},
                             torch.float32)
        weight_map.update({n: fname for n in part})
    with open(os.path.join(out_dir, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": sum(t.numel() * 4 for t in tensors.values())},
                   "weight_map": weight_map}, f, indent=1)


def export_tokenizer_json(src_dir, out_dir):
    """The f32 HF directory with tokenizer.json (vocabulary, merges, added tokens
    in one file) instead of vocab.json + merges.txt + added_tokens.json; the
    weights are a link to the f32 directory's."""
    import shutil
    os.makedirs(out_dir, exist_ok=True)
    for name in ("config.json", "generation_config.json"):
        shutil.copy(os.path.join(src_dir, name), out_dir)
    link = os.path.join(out_dir, "model.safetensors")
    if not os.path.lexists(link):
        os.symlink("../hf-f32/model.safetensors", link)
    vocab = json.load(open(os.path.join(src_dir, "vocab.json")))
    merges = [l.rstrip("\n") for l in open(os.path.join(src_dir, "merges.txt")) if not l.startswith("#")]
    added = json.load(open(os.path.join(src_dir, "added_tokens.json")))
    tok = {"version": "1.0", "added_tokens": [{"id": i, "content": c, "special": True}
                                               for c, i in sorted(added.items(), key=lambda kv: kv[1])],
           "model": {"type": "BPE", "vocab": vocab, "merges": merges}}
    with open(os.path.join(out_dir, "tokenizer.json"), "w") as f:
        json.dump(tok, f, ensure_ascii=False)


def read_wav(path):
    with wave.open(path) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        data = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    return data.astype(np.float32) / 32768.0


def build_model(n_text, n_langs=1):
    n_audio_ctx = 100
    sp = hm.Specials(n_text, n_langs=n_langs, n_timestamps=n_audio_ctx + 1)
    dims = hm.Dims(n_mels=80, n_audio_ctx=n_audio_ctx, n_audio_state=64, n_audio_head=4,
                   n_audio_layer=2, n_vocab=sp.n_vocab, n_text_ctx=64, n_text_state=64,
                   n_text_head=4, n_text_layer=2)
    torch.manual_seed(1234)
    model = hm.Whisper(dims)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.ndim == 1:
                p.copy_(torch.randn_like(p) * 0.1 + (1.0 if name.endswith("ln.weight") or
                                                     "_ln.weight" in name else 0.0))
            else:
                p.copy_(torch.randn_like(p) / np.sqrt(p.shape[-1]))
        model.decoder.token_embedding.weight.mul_(TOK_SCALE)  # decisive logits: no near-ties
        model.decoder.positional_embedding.normal_(0, POS_STD)
        for p in model.parameters():  # f16-representable: f32 and f16 files agree
            p.copy_(p.half().float())
        model.encoder.positional_embedding.copy_(model.encoder.positional_embedding.half().float())
    return model.eval(), sp


def main():
    tokens, merges = train_bpe(TEXT, 120)
    model, sp = build_model(len(tokens))
    # generation_config's suppress_tokens: openai's list, which hark also
    # derives itself for a ggml file (which has no such list)
    sp.suppress = hm.openai_suppress_tokens(tokens)
    suppress = sp.suppress + list(range(sp.sot, sp.timestamp_begin))
    blank = tokens.index(b" ")
    os.makedirs(OUT, exist_ok=True)
    hm.export_hf(model, os.path.join(OUT, "hf-f32"), tokens, merges, sp, dtype=torch.float32)
    hm.export_hf(model, os.path.join(OUT, "hf-f16"), tokens, merges, sp, dtype=torch.float16)
    hm.export_hf(model, os.path.join(OUT, "hf-bf16"), tokens, merges, sp, dtype=torch.bfloat16)
    export_sharded(model, os.path.join(OUT, "hf-f32"), os.path.join(OUT, "hf-f32-sharded"))
    export_tokenizer_json(os.path.join(OUT, "hf-f32"), os.path.join(OUT, "hf-f32-tokenizer-json"))
    hm.export_ggml(model, os.path.join(OUT, "model-f32.bin"), tokens, sp, ftype=0)
    hm.export_ggml(model, os.path.join(OUT, "model-f16.bin"), tokens, sp, ftype=1)

    audio = read_wav(CLIP)
    mel = hm.log_mel_spectrogram(audio, 80, padding=480000)
    window = 2 * model.dims.n_audio_ctx
    content = mel.shape[-1] - 3000
    windows, margins = [], []
    seek = 0
    while seek < content:
        toks, first = hm.greedy_window(model, mel[:, seek:seek + window], sp, suppress, blank,
                                       model.dims.n_text_ctx // 2, margins=margins)
        windows.append({"seek": seek, "tokens": toks})
        seek += window
    with torch.no_grad():
        enc = model.encoder(mel[None, :, :window])[0]
        logits = model.decoder(torch.tensor([[sp.sot, sp.notimestamps]]), enc[None])[0, -1]
    np.save(os.path.join(OUT, "ref_mel.npy"), mel[:, :content + window].numpy().astype(np.float32))
    np.save(os.path.join(OUT, "ref_encoder.npy"), enc.numpy().astype(np.float32))
    np.save(os.path.join(OUT, "ref_logits.npy"), logits.numpy().astype(np.float32))
    ref = {"clip": "tests/data/clip.wav", "n_samples": len(audio), "content_frames": content,
           "window_frames": window, "sot": sp.sot, "notimestamps": sp.notimestamps,
           "eot": sp.eot, "n_vocab": sp.n_vocab, "windows": windows,
           "text": b"".join(tokens[t] for w in windows for t in w["tokens"]).decode("utf-8", "replace")}
    with open(os.path.join(OUT, "ref.json"), "w") as f:
        json.dump(ref, f, indent=1)
    text_of = lambda ids: b"".join(tokens[t] for t in ids if t < sp.eot).decode("utf-8", "replace")
    segs = hm.transcribe_greedy(model, audio, sp, suppress, blank, text_of)
    # openai encodes an initial prompt as " " + prompt
    ids = {t: i for i, t in enumerate(tokens)}
    prompt_text = "the lazy dog, then the quick brown fox"
    prompt = [t for piece in ascii_pieces(" " + prompt_text)
              for t in hm.bpe_encode_piece(ids, piece.encode())]
    segs_p = hm.transcribe_greedy(model, audio, sp, suppress, blank, text_of, prompt)
    segs_c = hm.transcribe_greedy(model, audio, sp, suppress, blank, text_of, prompt, carry=True)
    as_json = lambda ss: [{"start": round(a, 2), "end": round(b, 2), "tokens": t} for a, b, t in ss]
    with open(os.path.join(OUT, "ref_longform.json"), "w") as f:
        json.dump({"segments": as_json(segs),
                   "initial_prompt": prompt_text, "prompt_tokens": prompt,
                   "segments_with_prompt": as_json(segs_p),
                   "segments_carrying_prompt": as_json(segs_c)}, f, indent=1)
    print("long-form segments:", len(segs))
    beams = []
    for seek in range(0, content, window):
        with torch.no_grad():
            xa = model.encoder(mel[None, :, seek:seek + window])
        for ts in (False, True):
            for patience in (1.0, 2.0):
                toks, total = hm.beam_decode(model, xa, sp, suppress, blank,
                                             model.dims.n_text_ctx // 2, ts, 5, patience)
                beams.append({"seek": seek, "timestamps": ts, "patience": patience,
                              "tokens": toks, "sum_logprob": total})
    with open(os.path.join(OUT, "ref_beam.json"), "w") as f:
        json.dump(beams, f, indent=1)
    with open(os.path.join(OUT, "ref_words.json"), "w") as f:
        json.dump(word_reference(model, sp, tokens, audio), f, indent=1)
    print("windows:", len(windows), "smallest top-2 logit margin of any greedy step:",
          min(margins), "distinct tokens:", len({t for w in windows for t in w["tokens"]}))
    print("text:", ref["text"][:200])


def cross_attention_scores(model, tokens, xa):
    """Pre-softmax cross-attention scores q.k/sqrt(d_head) of every decoder layer
    for one forward pass over tokens: [layer] -> [heads, n_tokens, n_audio]."""
    dec, scores = model.decoder, []
    x = dec.token_embedding(tokens) + dec.positional_embedding[:tokens.shape[-1]]
    for block in dec.blocks:
        x = x + block.attn(block.attn_ln(x), mask=dec.mask)[0]
        out, qk = block.cross_attn(block.cross_attn_ln(x), xa)
        scores.append(qk[0])
        x = x + out
        x = x + block.mlp(block.mlp_ln(x))
    return scores


def dtw(x):
    """openai/whisper's dtw_cpu on a cost matrix."""
    n, m = x.shape
    cost = np.full((n + 1, m + 1), np.inf)
    trace = -np.ones((n + 1, m + 1))
    cost[0, 0] = 0
    for j in range(1, m + 1):
        for i in range(1, n + 1):
            c0, c1, c2 = cost[i - 1, j - 1], cost[i - 1, j], cost[i, j - 1]
            if c0 < c1 and c0 < c2:
                c, t = c0, 0
            elif c1 < c0 and c1 < c2:
                c, t = c1, 1
            else:
                c, t = c2, 2
            cost[i, j] = x[i - 1, j - 1] + c
            trace[i, j] = t
    i, j = n, m
    trace[0, :] = 2
    trace[:, 0] = 1
    path = []
    while i > 0 or j > 0:
        path.append((i - 1, j - 1))
        t = trace[i, j]
        if t == 0:
            i, j = i - 1, j - 1
        elif t == 1:
            i -= 1
        else:
            j -= 1
    path = np.array(path)[::-1, :].T
    return path[0], path[1]


def ascii_pieces(text):
    """GPT-2's pre-tokenizer pattern, for ASCII text."""
    return re.findall(r"'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+",
                      text)


def split_words_openai(ids, token_bytes, eot):
    """openai's split_tokens_on_spaces for ASCII tokens, eot last."""
    words, wtoks = [], []
    for t in ids + [eot]:
        sub = token_bytes[t].decode() if t < eot else "<|endoftext|>"
        if t >= eot or sub.startswith(" ") or sub.strip() in string.punctuation or not words:
            words.append(sub)
            wtoks.append([t])
        else:
            words[-1] += sub
            wtoks[-1].append(t)
    return words, wtoks


PREPEND = "\"'\u201c\u00bf([{-"   # openai's default prepend_punctuations
APPEND = "\"'.\u3002,\uff0c!\uff01?\uff1f:\uff1a\u201d)]}\u3001"   # and append_punctuations


def merge_punctuations(words, prepended=PREPEND, appended=APPEND):
    """openai's merge_punctuations on [word, tokens, start, end] lists."""
    i, j = len(words) - 2, len(words) - 1
    while i >= 0:
        prev, follow = words[i], words[j]
        if prev[0].startswith(" ") and prev[0].strip() in prepended:
            follow[0], follow[1] = prev[0] + follow[0], prev[1] + follow[1]
            prev[0], prev[1] = "", []
        else:
            j = i
        i -= 1
    i, j = 0, 1
    while j < len(words):
        prev, follow = words[i], words[j]
        if not prev[0].endswith(" ") and follow[0] in appended:
            prev[0], prev[1] = prev[0] + follow[0], prev[1] + follow[1]
            follow[0], follow[1] = "", []
        else:
            i = j
        j += 1


def word_reference(model, sp, tokens, audio):
    """openai's find_alignment and merge_punctuations on the first window for a
    punctuated ASCII sentence: words with window-relative times (ref_words.json)."""
    ids = {t: i for i, t in enumerate(tokens)}
    sentence = os.environ.get("WORD_SENTENCE",
                              ' Hark. Reads whisper models! Then "writes." What, it hears? Yes. In (plain) text.')
    text = [t for piece in ascii_pieces(sentence) for t in hm.bpe_encode_piece(ids, piece.encode())]
    window = 2 * model.dims.n_audio_ctx
    mel = hm.log_mel_spectrogram(audio, 80, padding=480000)[:, :window]
    seq = [sp.sot, sp.notimestamps] + text + [sp.eot]
    with torch.no_grad():
        xa = model.encoder(mel[None])
        qks = cross_attention_scores(model, torch.tensor([seq]), xa)
        # openai's word probabilities come from this pass: each text token's
        # probability among the text tokens, from the notimestamps row on
        logits = model.decoder(torch.tensor([seq]), xa)[0, 1:, :sp.eot]
        token_probs = logits.softmax(dim=-1)[np.arange(len(text)), text].tolist()
    heads = [(l, h) for l in range(model.dims.n_text_layer // 2, model.dims.n_text_layer)
             for h in range(model.dims.n_text_head)]
    w = torch.stack([qks[l][h] for l, h in heads])[:, :, :window // 2].softmax(dim=-1)
    std, mean = torch.std_mean(w, dim=-2, keepdim=True, unbiased=False)
    w = ((w - mean) / std).numpy()
    pad = np.pad(w, ((0, 0), (0, 0), (3, 3)), mode="reflect")
    w = np.median(np.lib.stride_tricks.sliding_window_view(pad, 7, axis=-1), axis=-1)
    matrix = w.mean(axis=0)[1:-1]  # rows from notimestamps to the last text token
    text_idx, time_idx = dtw(-matrix.astype(np.float64))
    jumps = np.pad(np.diff(text_idx), (1, 0), constant_values=1).astype(bool)
    times = time_idx[jumps] / 50.0
    words, wtoks = split_words_openai(text, tokens, sp.eot)
    bounds = np.pad(np.cumsum([len(t) for t in wtoks[:-1]]), (1, 0))
    timed = [[wd, tk, float(times[a]), float(times[b]), float(np.mean(token_probs[a:b]))]
             for wd, tk, a, b in zip(words[:-1], wtoks[:-1], bounds[:-1], bounds[1:])]
    # openai's sentence-end hack: words at or after ".!?" at most 2 x the median duration
    clipped = 0
    durations = np.array([e - s for _, _, s, e, _ in timed])
    durations = durations[durations.nonzero()]
    if len(durations) > 0:
        max_duration = 2 * min(0.7, float(np.median(durations)))
        for i in range(1, len(timed)):
            if timed[i][3] - timed[i][2] > max_duration:
                if timed[i][0] in ".\u3002!\uff01?\uff1f":
                    timed[i][3] = timed[i][2] + max_duration
                    clipped += 1
                elif timed[i - 1][0] in ".\u3002!\uff01?\uff1f":
                    timed[i][2] = timed[i][3] - max_duration
                    clipped += 1

    def merged(prepended, appended):
        words = [list(w) for w in timed]
        merge_punctuations(words, prepended, appended)
        return [{"word": wd, "start": round(a, 2), "end": round(b, 2), "probability": p}
                for wd, tk, a, b, p in words if wd]

    # openai's lists, and --prepend_punctuations "(Then" --append_punctuations ".?": a
    # substring test, so the word " Then" joins the next one
    return {"tokens": text, "frames": window, "sentence_end_clips": clipped,
            "words": merged(PREPEND, APPEND),
            "custom_marks": {"prepend": "(Then", "append": ".?",
                             "words": merged("(Then", ".?")}}


def make_multilingual(tokens, merges, audio):
    """A three-language variant (en, zh, de): language detection and the
    [sot, language, task] start sequence."""
    model, sp = build_model(len(tokens), n_langs=3)
    sp.suppress = hm.openai_suppress_tokens(tokens)
    out = os.path.join(OUT, "multi")
    hm.export_hf(model, out, tokens, merges, sp, dtype=torch.float32,
                 lang_codes=("en", "zh", "de"), multilingual=True)
    mel = hm.log_mel_spectrogram(audio, 80, padding=480000)[:, :2 * model.dims.n_audio_ctx]
    with torch.no_grad():
        xa = model.encoder(mel[None])
        logits = model.decoder(torch.tensor([[sp.sot]]), xa)[0, -1]
        lang = torch.softmax(logits[sp.first_lang:sp.first_lang + 3], dim=-1)
        seqs = {}
        for code, tok in (("de", sp.first_lang + 2), ("en", sp.first_lang)):
            seq = [sp.sot, tok, sp.transcribe, sp.notimestamps]
            cache = model.decoder.new_cache()
            l = model.decoder(torch.tensor([seq]), xa, cache)[0, -1]
            seqs[code] = [int(t) for t in torch.topk(l, 5).indices]
    ref = {"language_probs": {"en": float(lang[0]), "zh": float(lang[1]), "de": float(lang[2])},
           "top5_after_start": seqs, "first_lang": sp.first_lang, "transcribe": sp.transcribe,
           "translate": sp.translate}
    with open(os.path.join(out, "ref_language.json"), "w") as f:
        json.dump(ref, f, indent=1)
    print("language probabilities:", ref["language_probs"])


if __name__ == "__main__":
    main()
    make_multilingual(*train_bpe(TEXT, 120), read_wav(CLIP))
