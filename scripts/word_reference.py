#!/usr/bin/python3
"""openai's transcribe() with word_timestamps=True, greedy at temperature 0, on
samples/ with the default model, in PyTorch (scripts/hark_model.py): each window
decoded with the previous text as prompt, split into segments at timestamp pairs,
its words timed by the model's alignment heads (find_alignment: cross-attention,
median filter, DTW; word probabilities from the same pass), clipped at sentence
ends, punctuation merged, rounded, the segments fitted to their words, and the
next window started after the last word.  Writes tests/golden/torch_words.json,
which tests/test_golden_words.c compares with hark's segments and words.

As hark (README: deliberate differences), frames past the audio's end are the log-mel
of the zero padding, and segments without text are dropped.
Run after each export:  /usr/bin/python3 scripts/word_reference.py [MODEL_DIR]
"""
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_reference as gr  # noqa: E402
import hark_model as hm  # noqa: E402
import make_test_model as tm  # noqa: E402
import word_rules_reference as rules  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLIPS = ["samples/long-espeak-en-us.wav", "samples/sample03-en-gb-scotland.wav",
         "samples/sample06-slt.wav"]
SENTENCE_ENDS = ".\u3002!\uff01?\uff1f"


def find_alignment(model, sp, token_bytes, heads, xa, text, size):
    """openai's find_alignment: [word, tokens, start, end, probability] per word."""
    seq = [sp.sot, sp.notimestamps] + text + [sp.eot]
    with torch.no_grad():
        qks = tm.cross_attention_scores(model, torch.tensor([seq]), xa)
        logits = model.decoder(torch.tensor([seq]), xa)[0, 1:, :sp.eot]
    probs = logits.softmax(dim=-1)[np.arange(len(text)), text].tolist()
    w = torch.stack([qks[l][h] for l, h in heads])[:, :, :size // 2].softmax(dim=-1)
    std, mean = torch.std_mean(w, dim=-2, keepdim=True, unbiased=False)
    w = ((w - mean) / std).numpy()
    pad = np.pad(w, ((0, 0), (0, 0), (3, 3)), mode="reflect")
    w = np.median(np.lib.stride_tricks.sliding_window_view(pad, 7, axis=-1), axis=-1)
    text_idx, time_idx = tm.dtw(-w.mean(axis=0)[1:-1].astype(np.float64))
    words, wtoks = tm.split_words_openai(text, token_bytes, sp.eot)
    if len(wtoks) <= 1:
        return []
    bounds = np.pad(np.cumsum([len(t) for t in wtoks[:-1]]), (1, 0))
    times = time_idx[np.pad(np.diff(text_idx), (1, 0), constant_values=1).astype(bool)] / 50.0
    return [[wd, tk, float(times[a]), float(times[b]), float(np.mean(probs[a:b]))]
            for wd, tk, a, b in zip(words[:-1], wtoks[:-1], bounds[:-1], bounds[1:])]


def add_word_timestamps(model, sp, token_bytes, heads, xa, segments, size, t0, last_speech):
    """openai's add_word_timestamps on one window's segments (dicts with tokens)."""
    per_seg = [[t for t in s["tokens"] if t < sp.eot] for s in segments]
    timed = find_alignment(model, sp, token_bytes, heads, xa, sum(per_seg, []), size)
    durations = np.array([e - s for _, _, s, e, _ in timed])
    durations = durations[durations.nonzero()]
    median = min(0.7, float(np.median(durations))) if len(durations) > 0 else 0.0
    if len(durations) > 0:
        for i in range(1, len(timed)):
            if timed[i][3] - timed[i][2] > 2 * median:
                if timed[i][0] in SENTENCE_ENDS:
                    timed[i][3] = timed[i][2] + 2 * median
                elif timed[i - 1][0] in SENTENCE_ENDS:
                    timed[i][2] = timed[i][3] - 2 * median
    tm.merge_punctuations(timed)
    k = 0
    for seg, text in zip(segments, per_seg):
        saved, seg["words"] = 0, []
        while k < len(timed) and saved < len(text):
            wd, tk, a, b, p = timed[k]
            if wd:
                seg["words"].append({"word": wd, "start": round(t0 + a, 2),
                                     "end": round(t0 + b, 2), "probability": p})
            saved += len(tk)
            k += 1
    rules.fit_segments(segments, median, last_speech)


def split_window(sp, toks, t0, size):
    """Segments of a window at its timestamp pairs, and the frames consumed."""
    tb, is_ts = sp.timestamp_begin, [t >= sp.timestamp_begin for t in toks]
    cuts = [i for i in range(1, len(toks)) if is_ts[i - 1] and is_ts[i]]
    single_end = is_ts[-2:] == [False, True]
    if not cuts:
        stamps = [t for t in toks if t >= tb]
        end = (stamps[-1] - tb) * 0.02 if stamps and stamps[-1] != tb else size / 100
        return [{"start": t0, "end": t0 + end, "tokens": toks}], size, single_end
    if single_end:
        cuts.append(len(toks))
    segs, last = [], 0
    for cut in cuts:
        piece = toks[last:cut]
        segs.append({"start": t0 + (piece[0] - tb) * 0.02, "end": t0 + (piece[-1] - tb) * 0.02,
                     "tokens": piece})
        last = cut
    return segs, size if single_end else (toks[last - 1] - tb) * 2, single_end


def transcribe_words(model, sp, suppress, blank, token_bytes, heads, audio):
    mel = hm.log_mel_spectrogram(audio, model.dims.n_mels, padding=480000)
    window = 2 * model.dims.n_audio_ctx
    content = mel.shape[-1] - 3000
    seek, all_tokens, out, last_speech = 0, [], [], 0.0
    text_of = lambda ids: b"".join(token_bytes[t] for t in ids if t < sp.eot).decode()
    while seek < content:
        size = min(window, content - seek)
        with torch.no_grad():
            xa = model.encoder(mel[None, :, seek:seek + window])
        toks = hm.decode_greedy(model, xa, sp, suppress, blank, model.dims.n_text_ctx // 2, True,
                                all_tokens)
        t0 = seek / 100
        segs, advance, single_end = split_window(sp, toks, t0, size)
        add_word_timestamps(model, sp, token_bytes, heads, xa, segs, size, t0, last_speech)
        nxt = seek + advance
        end = rules.get_end(segs)
        if not single_end and end is not None and end > t0:
            nxt = round(end * 100)
        if end is not None:
            last_speech = end
        segs = [s for s in segs if s["start"] != s["end"] and text_of(s["tokens"]).strip()]
        out += [{"seek": seek, **s} for s in segs]
        all_tokens += [t for s in segs for t in s["tokens"]]
        seek = nxt
    return out


def main():
    model_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "models", "hark-en-tiny")
    model, cfg = gr.load_model(model_dir)
    sp = gr.specials(model_dir, cfg["vocab_size"])
    gen = json.load(open(os.path.join(model_dir, "generation_config.json")))
    vocab = json.load(open(os.path.join(model_dir, "vocab.json")))
    suppress = gen["suppress_tokens"] + list(range(sp.sot, sp.timestamp_begin))
    blank = vocab["\u0120"]
    u2b = {u: b for b, u in hm.bytes_to_unicode().items()}
    token_bytes = [b""] * len(vocab)
    for s, i in vocab.items():
        token_bytes[i] = bytes(u2b[c] for c in s)
    clips = {}
    for rel in CLIPS:
        segs = transcribe_words(model, sp, suppress, blank, token_bytes, gen["alignment_heads"],
                                gr.read_wav(os.path.join(ROOT, rel)))
        clips[os.path.basename(rel)] = segs
        print("%s: %d segments, %d words" % (rel, len(segs), sum(len(s["words"]) for s in segs)))
    dest = os.path.join(ROOT, "tests", "golden", "torch_words.json")
    with open(dest, "w") as f:
        json.dump({"model": os.path.relpath(model_dir, ROOT), "clips": clips}, f,
                  separators=(",", ":"))


if __name__ == "__main__":
    main()
