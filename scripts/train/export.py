#!/usr/bin/python3
"""Export a training checkpoint to a Hugging Face Whisper directory hark loads.

  scripts/train/export.py [--ckpt training/ckpt] [--out models/hark-en-tiny] [--eval 200]

Writes config.json, model.safetensors (fp16), vocab.json, merges.txt,
added_tokens.json, generation_config.json (via hark_model.export_hf; the CTC
head is training-only and dropped) and a model card README.md.  With --eval N
it measures greedy WER in PyTorch on N clips of each evaluation set
(test sentences in the training voices, test sentences in the held-out voice
flite rms), synthesizing the sets into $HARK_DATA first if missing.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
ROOT = os.path.dirname(SCRIPTS)
sys.path[:0] = [HERE, SCRIPTS]  # scripts/train/ and scripts/ (hark_model)
import hark_model as hm  # noqa: E402
import bpe  # noqa: E402

DATA = os.environ.get("HARK_DATA", "/work/cache/hark-data")
EVAL_SETS = [  # name, split, voices, clips
    ("test", "test", "train", 300),
    ("test-rms", "test", "heldout", 300),
]


def averaged_weights(paths):
    """The mean of one or more checkpoints' weights, in fp32: {"model": ..., "ctc": ...}
    (the CTC head), each file read once."""
    total = None
    for p in paths:
        w = torch.load(p, map_location="cpu")
        parts = {part: {k: v.float() for k, v in w[part].items()} for part in ("model", "ctc")}
        total = parts if total is None else \
            {part: {k: total[part][k] + parts[part][k] for k in total[part]} for part in total}
    return {part: {k: v / len(paths) for k, v in sd.items()} for part, sd in total.items()}


def snapshot_step(path):
    return int(os.path.basename(path)[len("step-"):-len(".pt")])


def snapshots_upto(work, step, n):
    """The last n snapshot files of steps <= step (train.py keeps them in work/snapshots)."""
    found = sorted(glob.glob(os.path.join(work, "snapshots", "step-*.pt")))
    found = [p for p in found if snapshot_step(p) <= step]
    if len(found) < n:
        sys.exit("export: --average %d: only %d snapshots up to step %d in %s/snapshots"
                 % (n, len(found), step, work))
    return found[-n:]


def checkpoint_paths(ckpt, state, average, work):
    """The files whose mean is the model: the checkpoint's, or its last snapshots
    (state gets their steps as "averaged")."""
    if average <= 1:
        return [os.path.join(ckpt, "model.fp16.pt")]
    paths = snapshots_upto(work, state["step"], average)
    state["averaged"] = [snapshot_step(p) for p in paths]
    return paths


def load_checkpoint(ckpt, average=0, work=None):
    """(model, state, weights): weights are the fp32 means the model was loaded from."""
    state = json.load(open(os.path.join(ckpt, "state.json")))
    dims = hm.Dims(**state["dims"])
    model = hm.Whisper(dims)
    weights = averaged_weights(checkpoint_paths(ckpt, state, average, work))
    missing, unexpected = model.load_state_dict(weights["model"], strict=False)
    assert not unexpected and all(k == "decoder.mask" for k in missing), (missing, unexpected)
    model.eval()
    return model, state, weights


def save_half(weights, path):
    """averaged_weights' {"model": ..., "ctc": ...} in fp16 at path: a model.fp16.pt."""
    torch.save({part: {k: v.half() for k, v in sd.items()} for part, sd in weights.items()},
               path)


def write_averaged_checkpoint(ckpt, state, weights):
    """Replace ckpt's weights by the mean of its last snapshots (fp16, CTC head too),
    state.json saying which: the committed checkpoint then exports to the default model
    byte for byte, as de5ef25's does.  train.py resumes from the fp32 weights and
    optimiser of the same step when $HARK_WORK has them, not from this mean."""
    w_path, s_path = os.path.join(ckpt, "model.fp16.pt"), os.path.join(ckpt, "state.json")
    save_half(weights, w_path + ".tmp")
    with open(s_path + ".tmp", "w") as f:
        json.dump(state, f, indent=1)
    os.replace(w_path + ".tmp", w_path)   # each file whole, as train.py writes them
    os.replace(s_path + ".tmp", s_path)


def specials_for(dims, n_text):
    n_ts = dims.n_vocab - (n_text + 2 + 1 + 6)
    sp = hm.Specials(n_text, 1, n_ts)
    assert sp.n_vocab == dims.n_vocab
    return sp


def suppress_list(tokens, sp):
    """Text tokens with symbols the corpus never has, plus the task/special tokens."""
    ok = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ',.?!")
    sym = [i for i, t in enumerate(tokens)
           if any(chr(c) not in ok for c in t) and i >= 0]
    return sym + [sp.translate, sp.transcribe, sp.sot, sp.startofprev, sp.startoflm,
                  sp.nospeech]


def evaluate(model, sp, tok, n):
    import train
    res = {}
    sup = suppress_list(tok.tokens, sp) + [sp.notimestamps]
    for name, split, voices, count in EVAL_SETS:
        d = os.path.join(DATA, name)
        if not os.path.exists(os.path.join(d, "shard-00000.npz")):
            subprocess.run([sys.executable, os.path.join(HERE, "synth.py"), "build", "--split",
                            split, "--voices", voices, "--out", d, "--count", "1",
                            "--per-shard", str(count)], check=True)
        sh = train.Shards(os.path.join(d, "shard-*.npz"))
        errs = words = 0
        t0 = time.time()
        for k in range(min(n, len(sh))):
            audio, text, _ = sh.get(k)
            mel = train.window_mel(audio, 2 * model.dims.n_audio_ctx)
            out, _ = hm.greedy_window(model, mel, sp, sup, 32, model.dims.n_text_ctx // 2)
            hyp = tok.decode([t for t in out if t < sp.eot])
            e, m = train.wer(text, hyp)
            errs, words = errs + e, words + m
        res[name] = {"wer": errs / max(1, words), "clips": min(n, len(sh)), "words": words,
                     "seconds": time.time() - t0}
        print(name, res[name], flush=True)
    return res


CARD = """# hark-en-tiny: hark's own small English model (synthetic voices only)

{status}**What it is:** a {params:.1f} M-parameter Whisper-architecture model (d_model {d}, {h} heads,
{el} encoder + {dl} decoder layers, 80 mel bins, a {win:.0f} s window: `n_audio_ctx` {ctx}),
trained by the hark project from scratch on **synthesized** English speech, for demos and tests.
It has never heard a human speaker apart from the recorded voices of the flite/festival
synthesizers; use real Whisper models (see hark's README: download and convert them) for real
recordings.

- Tokenizer: byte-level BPE trained by the project ({merges} merges, {n_text} text tokens) plus
  Whisper's special tokens (English-only layout: `<|endoftext|>` {eot}, `<|startoftranscript|>`
  {sot}, `<|en|>`, task tokens, `<|notimestamps|>` {nots}, {n_ts} timestamp tokens
  0.00-{win:.2f} s from id {tsb}); n_vocab {n_vocab}.
- Data: sentences from Debian's `fortunes`/`fortunes-min` and package short descriptions, every
  word in `wamerican`, 3-20 words (`scripts/train/make-corpus`; training/corpus/ holds the train/valid/test lists);
  for training only also WordNet's example sentences and definitions and apt's long package
  descriptions (training/corpus/train-wordnet.txt, train-glosses.txt, train-descriptions.txt).
  Speech from espeak-ng (8 English accents x ~95 variants, rate 120-220 wpm, pitch 20-80),
  flite (kal16, awb, slt, kal; from step 28000 also awb, slt and kal16 at drawn mean pitch
  85-220 Hz) and festival (kal_diphone; from step 28000 also ked_diphone and the HTS slt voice,
  pitch-shifted) with sox tempo/speed/reverb/telephone augmentation and noise at 10-40 dB SNR
  (`scripts/train/synth.py`); from step 28000 a vocal-tract-length warp of the filterbank (factor
  0.85-1.15) on 80 % of examples (`scripts/train/train.py --vtlp-from`){eq}. **Held-out voice: flite
  rms** (never trained on). Multi-sentence clips with timestamps, previous-text prompts.{data}
- Training: `scripts/train/start` (= `scripts/train/train.py`, PyTorch, CPU{gpu}), auxiliary character CTC
  head on the encoder (dropped at export), short-utterance curriculum; {steps} steps,
  {hours:.1f} h of audio seen.{grown} Checkpoint: training/ckpt/{history_ref}.
- Export: `scripts/train/export.py --out {out}{avg_opt}` (fp16 safetensors, {size:.1f} MB){avg_text}.
- Word timestamps: {heads}

## Measured WER (greedy, PyTorch reference model, lower-cased, punctuation removed)

| set | clips | words | WER |
|---|---|---|---|
{rows}

## Measured through hark (the C engine, greedy)

{hark_rows}
{history}"""

HARK = os.path.join(ROOT, "build", "hark")


def wer_fields(f):
    """(wer, cer, words) of the words of a line "WER 15.4 %  CER 4.9 %  words 2444"
    (scripts/eval/greedy-wer's, which eval-golden prints after each set's name)."""
    return float(f[1]), float(f[4]), int(f[7])


def golden_wer(out):
    """{"train": (wer, cer, words), "heldout": (...)} from scripts/eval/eval-golden."""
    text = subprocess.run([os.path.join(SCRIPTS, "eval", "eval-golden"), out], capture_output=True,
                          text=True).stdout
    res = {}
    for line in text.splitlines():
        f = line.split()       # train WER 78.5 %  CER 58.1 %  words 297
        if len(f) >= 9 and f[0] in ("train", "heldout"):
            res[f[0]] = wer_fields(f[1:])
        elif f[:1] == ["long"]:  # long 4 of 16 sentences bracketed; WER 48.3 %
            res["long"] = line.split(None, 1)[1]
    return res


def human_wer(out):
    """(wer, cer, words) on pocketsphinx-testdata from scripts/eval/eval-pocketsphinx, or None."""
    text = subprocess.run([os.path.join(SCRIPTS, "eval", "eval-pocketsphinx"), out], capture_output=True,
                          text=True).stdout
    for line in text.splitlines():
        f = line.split()       # TOTAL  WER  CER  words  result
        if f[:1] == ["TOTAL"] and len(f) >= 4:
            return float(f[1]), float(f[2]), int(f[3])
    return None


def clean_valid_wer(out):
    """{"train": (wer, cer, words), "heldout": (...)} on scripts/eval/clean-valid's sets: the
    golden set's condition on eight times its words, and sentences no model was chosen on."""
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([os.path.join(SCRIPTS, "eval", "clean-valid"), tmp], check=True)
        for name in ("train", "heldout"):
            f = subprocess.run([os.path.join(SCRIPTS, "eval", "greedy-wer"), os.path.join(tmp, name + ".tsv"),
                                out], capture_output=True, text=True).stdout.split()
            if len(f) >= 8:
                res[name] = wer_fields(f)
    return res


def run_history(ckpt, final_step):
    """[(step, args, data)] of each training start before final_step in ckpt/train.log
    that the checkpoint descends from (a resume from step s drops what an earlier start
    logged from s on); data is the size of the training set, "N (H h)", as logged."""
    runs = []
    try:
        lines = open(os.path.join(ckpt, "train.log")).read().splitlines()
    except OSError:
        return runs
    for line in lines:
        if " start step " in line and " args {" in line:
            step = int(line.split(" start step ")[1].split()[0])
            runs = [r for r in runs if r[0] < step]
            runs.append((step, json.loads(line[line.index(" args {") + 6:]), ""))
        elif " train clips " in line and runs:
            data = line.split(" train clips ")[1].split(",")[0]
            if " step " in line:     # shards that arrived while it ran
                runs.append((int(line.split(" step ")[1].split()[0]), runs[-1][1], data))
            else:
                runs[-1] = runs[-1][:2] + (data,)
    return [r for r in runs if r[0] < final_step]


def changes(runs, final_step, describe):
    """[(step, text)] where each new value of describe(start, end, args, data) -> (step it
    took effect, text or None for off) began, for the runs' spans [start, end); leading
    offs are left out."""
    out = []
    ends = [r[0] for r in runs[1:]] + [final_step]
    for (start, args, data), end in zip(runs, ends):
        step, text = describe(start, end, args, data)
        if (out and out[-1][1] != text) or (not out and text is not None):
            out.append((step, text))
    return out


def schedule_text(parts, what, unit=""):
    """"; <what>: from step A x, from step B off, ..." for the card, "" if never on."""
    if not parts:
        return ""
    return "; %s: %s" % (what, ", ".join("from step %d %s" % (s, t + unit if t else "off")
                                          for s, t in parts))


def eq_text(runs, final_step):
    """The card's words for train.py's random equaliser, as each run set it."""
    def describe(start, end, a, data):
        if a.get("eq_from", 10 ** 9) >= end:
            return start, None
        return max(start, a["eq_from"]), "+-%g dB on %d %%" % (a["eq_db"],
                                                               round(100 * a["eq_frac"]))
    return schedule_text(changes(runs, final_step, describe), "a random equaliser (a tilt and "
                         "two bumps, each within the dB given) on the examples' filterbank "
                         "(`--eq-from`)", " of examples")


def specaug_text(runs, final_step):
    """The card's words for SpecAugment, as each run set it."""
    def describe(start, end, a, data):
        if a.get("specaug_from", 10 ** 9) >= end:
            return start, None
        t, f = a.get("specaug_t", 27), a.get("specaug_f", 11)
        masks = (["two time masks up to %d frames" % t] if t else []) + \
            (["two frequency masks up to %d mel bins" % f] if f else [])
        return max(start, a["specaug_from"]), " and ".join(masks) or None
    return schedule_text(changes(runs, final_step, describe), "SpecAugment (`--specaug-from`)")


def nospeech_text(runs, final_step):
    """The card's words for train.py's non-speech examples, as each run set it."""
    def describe(start, end, a, data):
        if a.get("nospeech_frac", 0) <= 0 or a.get("nospeech_from", 10 ** 9) >= end:
            return start, None
        return max(start, a["nospeech_from"]), "%g %%" % (100 * a["nospeech_frac"])
    return schedule_text(changes(runs, final_step, describe), "examples without speech (near "
                         "silence, white / pink / brown noise, mains hum, swelling tones at "
                         "-55..-12 dB; transcript `<|startoftranscript|><|nospeech|>"
                         "<|endoftext|>`, `--nospeech-frac`)", " of examples")


def data_text(runs, final_step):
    """The card's words for the synthesized training set's sizes between runs, as a range
    (each size, step by step, is in train.log's "train clips" lines)."""
    parts = changes(runs, final_step, lambda start, end, a, data: (start, data or None))
    sizes = [re.match(r"(\d+) \(([\d.]+) h\)", t).groups() for _, t in parts if t]
    if not sizes:
        return ""
    clips = [int(c) for c, _ in sizes]
    hours = [float(h) for _, h in sizes]
    # "grew" would be wrong after a machine change: the new machine rebuilds the
    # (deterministic) shards from the first while training reads those that exist
    return (" The training set changed %d times as synthesis went on and machines changed, "
            "from %d to %d clips (%.1f-%.1f h) at a time (training/ckpt/train.log's "
            "\"train clips\" lines)." % (len(sizes), min(clips), max(clips), min(hours),
                                           max(hours)))


def gpu_text(runs, final_step):
    """The card's words for the steps trained on a GPU (scripts/train/gpu-train), "" if none: each
    span with its batch as a multiple of the CPU runs' before it (runs log batch_frames)."""
    cpu_frames = [None]

    def describe(start, end, a, data):
        frames = a.get("batch_frames")
        if not str(a.get("device", "cpu")).startswith("cuda"):
            cpu_frames[0] = frames
            return start, None
        if cpu_frames[0] and frames:
            return start, "%gx the frames a batch" % (frames / cpu_frames[0])
        return start, "%s frames a batch" % frames
    parts = changes(runs, final_step, describe)
    ends = [s for s, _ in parts[1:]] + [final_step]
    spans = ["%d-%d (%s)" % (s, e, t) for (s, t), e in zip(parts, ends) if t]
    if not spans:
        return ""
    return "; steps %s on a GPU: `scripts/train/gpu-train`, speech synthesized alongside" % \
        ", ".join(spans)


def grown_text(state):
    """The card's words for the model's changes of shape (scripts/train/reshape-ckpt), if any."""
    grown = "".join(" At step %d the encoder grew from %d to %d layers (new blocks %s start as "
                    "the identity)." % (g["step"], g["encoder_layers"][0], g["encoder_layers"][1],
                                        ", ".join(map(str, g["new_blocks"])))
                    for g in state.get("grown", []))
    return grown + "".join(" At step %d (`scripts/train/reshape-ckpt`): %s." % (r["step"], r["what"])
                           for r in state.get("reshaped", []))


def history_text(ckpt):
    """The checkpoint's own account of how it was made and what was tried beside it
    (HISTORY.md, kept with the weights so that every export carries it), as a card section."""
    path = os.path.join(ckpt, "HISTORY.md")
    if not os.path.exists(path):
        return "", ""
    with open(path) as f:
        return " (how it was made: below)", "\n## How this checkpoint was made\n\n" + f.read()


def hark_measurements(out, wanted=True):
    """The card's status line and C-engine table, when build/hark exists and they are
    wanted (scripts/eval/eval-candidate measures for itself: export.py --no-measure)."""
    if not wanted or not os.path.exists(HARK):
        return "", "Not measured: build hark (`make`) and export again."
    golden, human, clean = golden_wer(out), human_wer(out), clean_valid_wer(out)
    names = {"train": "tests/golden, 30 clips in training voices (held-out sentences)",
             "heldout": "tests/golden, 10 clips in the held-out voice flite rms"}
    clean_names = {"train": "training/corpus/valid.txt spoken as the golden set is (`scripts/eval/clean-valid`), "
                            "300 clips in training voices",
                   "heldout": "the same, 200 clips in the held-out voice flite rms"}
    rows = ["| set | WER | CER | words |", "|---|---|---|---|"]
    rows += ["| %s | %.1f %% | %.1f %% | %d |" % ((clean_names[k],) + clean[k])
             for k in clean_names if k in clean]
    rows += ["| %s | %.1f %% | %.1f %% | %d |" % ((names[k],) + golden[k])
             for k in names if k in golden]
    if human:
        rows.append("| Debian pocketsphinx-testdata: 10 human recordings (LibriVox sentences, "
                    "card names) | %.1f %% | %.1f %% | %d |" % human)
    if "long" in golden:
        rows.append("\nThe 65 s long sample `samples/long-espeak-en-us.wav` with default decoding "
                    "(beam 5, fallback, previous-text prompts): %s (target: all 16, each segment "
                    "starting and ending in the pause at its sentence's boundary, give or take "
                    "0.5 s: `scripts/eval/long-brackets`)." % golden["long"])
    table = "\n".join(rows) + "\n\nThe golden set is small (one error in 297 words is 0.3 %%) " \
        "and candidates were chosen partly on it, so its figures flatter the model; the " \
        "clean validation rows measure the same condition on sentences nothing was chosen on." \
        "\n\nCommands: `scripts/eval/clean-valid DIR` then `scripts/eval/greedy-wer DIR/train.tsv %s`, " \
        "`scripts/eval/eval-golden %s`, `scripts/eval/eval-pocketsphinx %s`." % (out, out, out)
    status = ""
    judged = clean if "train" in clean and "heldout" in clean else golden
    if "train" in judged and "heldout" in judged:
        status = ("> **Status: a training checkpoint, not yet the target model.** Greedy WER "
                  "through hark on held-out sentences: %.0f %% in training voices, %.0f %% in "
                  "the held-out voice (targets: 5 %% and 15 %%). Training continues from "
                  "training/ckpt/.\n\n" % (judged["train"][0], judged["heldout"][0]))
        if judged["train"][0] <= 5 and judged["heldout"][0] <= 15:
            status = ""
    return status, table


def chosen_alignment_heads(ckpt, step):
    """The heads scripts/train/alignment-heads chose for this checkpoint's step, or None
    (every head of the last half of the decoder layers)."""
    path = os.path.join(ckpt, "alignment_heads.json")
    chosen = json.load(open(path)) if os.path.exists(path) else {}
    if chosen and chosen.get("step") != step:
        print("alignment heads were chosen at step %s, not %d: run scripts/train/alignment-heads "
              "--apply on the export" % (chosen.get("step"), step))
        return None
    return chosen.get("alignment_heads")


def alignment_heads_text(ckpt, step):
    """The card's words for generation_config.json's alignment_heads."""
    heads = chosen_alignment_heads(ckpt, step)
    if heads is None:
        return ("alignment heads: every head of the last half of the decoder layers (not "
                "chosen: `scripts/train/alignment-heads --apply`).")
    err = json.load(open(os.path.join(ckpt, "alignment_heads.json"))).get("mean_error_s")
    return ("alignment heads %s, chosen by `scripts/train/alignment-heads` (words' distance from "
            "known sentence starts and ends, mean %.3f s)." % (heads, err))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default=os.path.join(ROOT, "training", "ckpt"))
    ap.add_argument("--out", default=os.path.join(ROOT, "models", "hark-en-tiny"))
    ap.add_argument("--eval", type=int, default=0, help="clips per evaluation set (0: none)")
    ap.add_argument("--average", type=int, default=0,
                    help="export the mean weights of the last N validated steps up to the "
                    "checkpoint's (train.py's snapshots in --work)")
    ap.add_argument("--work", default=os.environ.get("HARK_WORK", "/work/cache/hark-train"))
    ap.add_argument("--write-ckpt", action="store_true",
                    help="with --average: also write that mean into --ckpt as its weights")
    ap.add_argument("--no-measure", action="store_true",
                    help="leave the card's measurements through hark out (minutes of decoding)")
    args = ap.parse_args()
    if args.write_ckpt and args.average <= 1:
        ap.error("--write-ckpt needs --average N (N >= 2): the checkpoint already is the model")
    torch.set_num_threads(1)
    model, state, weights = load_checkpoint(args.ckpt, args.average, args.work)
    if args.write_ckpt:
        write_averaged_checkpoint(args.ckpt, state, weights)
    tok_path = bpe.checkpoint_merges(state["args"])
    tokens, merges = bpe.load(tok_path)
    assert len(tokens) == state["n_text_tokens"], "tokenizer does not match the checkpoint"
    sp = specials_for(model.dims, len(tokens))
    sp.suppress = suppress_list(tokens, sp)
    hm.export_hf(model, args.out, tokens, merges, sp, dtype=torch.float16, lang_codes=("en",),
                 alignment_heads=chosen_alignment_heads(args.ckpt, state["step"]))
    # Whisper's begin_suppress_tokens: " " and eot at the first sampled step
    gp = os.path.join(args.out, "generation_config.json")
    gen = json.load(open(gp))
    gen["begin_suppress_tokens"] = [32, sp.eot]
    json.dump(gen, open(gp, "w"), indent=2)
    res = {}
    if args.eval:
        tok = bpe.Tokenizer(tok_path)
        res = evaluate(model, sp, tok, args.eval)
    d = model.dims
    size = os.path.getsize(os.path.join(args.out, "model.safetensors")) / 1e6
    rows = "\n".join("| %s | %d | %d | %.1f %% |" % (
        {"test": "test sentences, training voices", "test-rms":
         "test sentences, held-out voice (flite rms)"}[k], v["clips"], v["words"],
        100 * v["wer"]) for k, v in res.items()) or "| (not measured) | | | |"
    status, hark_rows = hark_measurements(os.path.relpath(args.out, ROOT), not args.no_measure)
    avg = state.get("averaged", [])
    runs = run_history(args.ckpt, state["step"])
    history_ref, history = history_text(args.ckpt)
    heads = alignment_heads_text(args.ckpt, state["step"])
    card = CARD.format(
        params=sum(p.numel() for p in model.parameters()) / 1e6, d=d.n_audio_state,
        h=d.n_audio_head, el=d.n_audio_layer, dl=d.n_text_layer, ctx=d.n_audio_ctx,
        win=d.n_audio_ctx * 320 / 16000, merges=len(merges), n_text=len(tokens), eot=sp.eot,
        sot=sp.sot, nots=sp.notimestamps, n_ts=d.n_vocab - sp.timestamp_begin,
        tsb=sp.timestamp_begin, n_vocab=d.n_vocab, steps=state["step"],
        gpu=gpu_text(runs, state["step"]),
        heads=heads, hours=state["hours_seen"], out=os.path.relpath(args.out, ROOT), size=size,
        rows=rows,
        status=status, hark_rows=hark_rows, grown=grown_text(state),
        eq=eq_text(runs, state["step"]) + specaug_text(runs, state["step"]) +
        nospeech_text(runs, state["step"]),
        data=data_text(runs, state["step"]), history_ref=history_ref, history=history,
        avg_opt=" --average %d" % len(avg) if avg else "",
        avg_text="; the mean of the weights of steps %s" % ", ".join(map(str, avg)) if avg else "")
    with open(os.path.join(args.out, "README.md"), "w") as f:
        f.write(card)
    if res:
        with open(os.path.join(args.out, "eval.json"), "w") as f:
            json.dump({"step": state["step"], "results": res}, f, indent=1)
    print("exported step %d to %s (%.1f MB)" % (state["step"], args.out, size))


if __name__ == "__main__":
    main()
