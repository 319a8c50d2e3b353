#!/usr/bin/python3
"""Train hark's small English Whisper-architecture model on synthesized speech.

Resumable: every --ckpt-min minutes (and at each validation) it writes
  training/ckpt/model.fp16.pt   fp16 weights (+ CTC head), committed to git
  training/ckpt/state.json      step, dims, hyper-parameters, audio seen
  training/ckpt/train.log       loss / CTC / validation WER log
  /work/cache/hark-train/opt.pt     fp32 weights + AdamW state (outside the repo, $HARK_WORK)
  /work/cache/hark-train/{model.fp16.pt,state.json}  mirror of the checkpoint
  /work/cache/hark-train/snapshots/step-N.pt  fp16 weights of the last validated steps
and resumes from the newest of them (fp16 weights + fresh optimiser when opt.pt is
missing).  training/ckpt/HISTORY.md (written by hand: how the checkpoint was made, what
was tried beside it) goes into the model card at export.  Data: shards from scripts/train/synth.py
in /work/cache/hark-data ($HARK_DATA; rebuild with scripts/train/make-data; deterministic).
The batch at step s is drawn from RandomState(seed + s) over the shards present, so a
resumed run continues the same sequence as long as the cache is the same.

Inputs are exactly what hark feeds the encoder: log-mel of the clip with the
zero padding appended (max-8 clamp over the clip), frames [0, 2*n_audio_ctx);
a batch is cut to its longest clip except for --full-window-frac of batches,
which get the whole window (the engine always uses the whole window).

Targets use Whisper's English-only task format:
  [startofprev prev...]? sot notimestamps text eot
  [startofprev prev...]? sot <t0> text <t1> <t2> text <t3> ... eot
  (a sentence cut at the window end: ... <t_end> <t_start_of_cut> eot)
Tricks: auxiliary character CTC head on the encoder output (dropped at export),
short-utterance curriculum, decoder input-token corruption, SpecAugment after
--specaug-from steps, vocal-tract-length warp after --vtlp-from steps, a random
equaliser after --eq-from steps, warmup +
linear decay (restarted at --cycle-start), grad clipping.

Usage (background, one thread):
  OMP_WAIT_POLICY=PASSIVE nohup nice -n 10 /usr/bin/python3 scripts/train/train.py \
      >> /work/cache/logs/train.out 2>&1 &
The same command resumes.  On a GPU: --device cuda --workers N (scripts/train/gpu-train).
"""
import argparse
import collections
import glob
import json
import multiprocessing
import os
import re
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _threads_arg(argv, default="1"):
    """--threads N or --threads=N, read before torch is imported."""
    for i, a in enumerate(argv):
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
    return default


# torch multiplies through OpenBLAS, whose own thread pool ignores torch.set_num_threads and
# spins on every core: on 2 cores that starved the data synthesis and tripled the step time
os.environ.setdefault("OPENBLAS_NUM_THREADS", _threads_arg(sys.argv))


def _cpu_flags():
    """The CPU's feature flags from /proc/cpuinfo (empty where there is none)."""
    try:
        return set(open("/proc/cpuinfo").read().split("flags", 2)[1].split("\n", 1)[0].split())
    except (OSError, IndexError):
        return set()


CPU_FLAGS = _cpu_flags()
# Debian's OpenBLAS 0.3.21 does not recognise newer Xeons and falls back to its SSE3
# 'Prescott' kernels, 4x slower than the AVX-512 ones these CPUs run
if "OPENBLAS_CORETYPE" not in os.environ and CPU_FLAGS & {"avx512f", "avx2"}:
    os.environ["OPENBLAS_CORETYPE"] = "SkylakeX" if "avx512f" in CPU_FLAGS else "Haswell"
import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
ROOT = os.path.dirname(SCRIPTS)
sys.path[:0] = [HERE, SCRIPTS]  # scripts/train/ and scripts/ (hark_model)
import hark_model as hm  # noqa: E402
from bpe import DEFAULT_NAME, Tokenizer, checkpoint_merges  # noqa: E402

# Debian's torch 1.13 oneDNN convolution gave infinite gradients on half the batches;
# the convolutions run as matmuls (conv_as_matmul), oneDNN only for bf16 products
torch.backends.mkldnn.enabled = False
SR = 16000
CTC_CHARS = " abcdefghijklmnopqrstuvwxyz'"   # CTC ids 1.. ; 0 = blank
# outside the repo: a clean of the working tree must not take the cache or optimiser state
DATA = os.environ.get("HARK_DATA", "/work/cache/hark-data")
WORK = os.environ.get("HARK_WORK", "/work/cache/hark-train")


# ---------------------------------------------------------------- data

class Shards:
    """Clips of <data>/<name>/shard-*.npz + .pcm, audio memory-mapped."""

    def __init__(self, pattern):
        self.pattern = pattern
        self.paths = []
        self.audio, self.offsets, self.text, self.voice = [], [], [], []
        self.index = []      # (shard, clip)
        self.dur = []
        self.refresh()

    def refresh(self):
        for p in sorted(glob.glob(self.pattern)):
            if p in self.paths or p.endswith(".tmp.npz"):
                continue
            z = np.load(p)
            pcm = p[:-4] + ".pcm"
            if not os.path.exists(pcm):
                z["audio"].astype("<i2").tofile(pcm + ".tmp")
                os.replace(pcm + ".tmp", pcm)
            a = np.memmap(pcm, dtype="<i2", mode="r") if os.path.getsize(pcm) else \
                np.zeros(0, np.int16)
            s = len(self.paths)
            self.paths.append(p)
            self.audio.append(a)
            off = z["offsets"]
            self.offsets.append(off)
            self.text.append(list(z["text"]))
            self.voice.append(list(z["voice"]))
            for i in range(len(off) - 1):
                self.index.append((s, i))
                self.dur.append((off[i + 1] - off[i]) / SR)
        self.dur_np = np.array(self.dur, dtype=np.float32)
        self.order = np.argsort(self.dur_np, kind="stable")
        self.sorted_dur = self.dur_np[self.order]

    def __len__(self):
        return len(self.index)

    def size_text(self):
        """"N (H h)": what train.log records of the training set (export.py reads it)."""
        return "%d (%.1f h)" % (len(self), self.dur_np.sum() / 3600)

    def get(self, k):
        s, i = self.index[k]
        o = self.offsets[s]
        return (np.asarray(self.audio[s][o[i]:o[i + 1]], dtype=np.float32) / 32768.0,
                str(self.text[s][i]), str(self.voice[s][i]))


def window_mel(audio, n_frames, n_mels=80, filters=None):
    """log_mel_spectrogram(audio, padding=480000)[:, :n_frames], computed cheaply.

    Zero padding only adds frames of zero energy, which never move the max, so
    padding just past the frames kept gives identical values.
    """
    pad = max(0, n_frames * 160 - len(audio)) + 800
    m = hm.log_mel_spectrogram(audio, n_mels, padding=pad, filters=filters)
    return m[:, :n_frames]


_WARPED = {}


def warped_filters(alpha, n_mels=80):
    """Mel filterbank applied to a spectrum warped by alpha (vocal-tract-length
    perturbation, Jaitly & Hinton 2013): bin k takes the energy of source frequency
    k/alpha up to 80 % of Nyquist, then a straight line to Nyquist so that the whole
    band stays covered.  It moves formants as a longer or shorter vocal tract would:
    the speaker variation that the few recorded voices lack."""
    key = round(alpha, 3)
    if key not in _WARPED:
        n = hm.N_FFT // 2
        k = np.arange(n + 1, dtype=np.float64)
        b = 0.8 * n
        src = np.where(k <= b, k / alpha, b / alpha + (k - b) * (n - b / alpha) / (n - b))
        lo = np.clip(np.floor(src).astype(int), 0, n)
        hi = np.clip(lo + 1, 0, n)
        w = src - np.floor(src)
        interp = np.zeros((n + 1, n + 1))
        interp[np.arange(n + 1), lo] += 1 - w
        interp[np.arange(n + 1), hi] += w
        _WARPED[key] = torch.from_numpy(
            (hm.mel_filters(n_mels).astype(np.float64) @ interp).astype(np.float32))
    return _WARPED[key]


def filters_of(alpha, eq):
    """The [80, 201] filterbank of Batcher.filterbank's (warp factor, equaliser gains);
    None for the plain one."""
    fb = warped_filters(alpha) if alpha else None
    if eq is not None:
        fb = (fb if fb is not None else hm.mel_filterbank(80)) * eq[None, :]
    return fb


# A batch's clips as --workers send them with --features-on-device: int16 audio [B, width]
# (each clip scaled to its peak: scale [B]), warp factors [B], equaliser gains [B, 201]
RawAudio = collections.namedtuple("RawAudio", "audio scale alpha eq n_frames")


def raw_audio(ex, n_frames, banks):
    """The examples' audio and filterbanks as RawAudio for device_features(): each clip
    padded at least as window_mel pads it (the rows' further zeros only add frames of zero
    energy), in 16 bits scaled to its own peak (quantisation noise ~100 dB below it, under
    the max-8 clamp's 80): about as many bytes as its mels, and far less work here."""
    lens = [len(e["audio"]) for e in ex]
    width = max(max(lens), n_frames * 160) + 800
    audio = np.zeros((len(ex), width), np.int16)
    scale = np.zeros(len(ex), np.float32)
    for b, e in enumerate(ex):
        peak = float(np.abs(e["audio"]).max()) if lens[b] else 0.0
        scale[b] = max(peak, 1e-9) / 32767
        audio[b, :lens[b]] = np.round(e["audio"] / scale[b])
    alpha = np.array([a for a, _ in banks], np.float32)
    eq = np.stack([np.ones(hm.N_FFT // 2 + 1, np.float32) if q is None else q.numpy()
                   for _, q in banks])
    return RawAudio(audio, scale, alpha, eq, n_frames)


_DEVICE_BANKS = {}


def device_features(raw, dev):
    """window_mel of every clip of a RawAudio at once on dev, each with its filterbank."""
    banks = []
    for a in raw.alpha.tolist():
        key = (round(a, 3), str(dev))
        if key not in _DEVICE_BANKS:
            _DEVICE_BANKS[key] = (warped_filters(a) if a else hm.mel_filterbank(80)).to(dev)
        banks.append(_DEVICE_BANKS[key])
    banks = torch.stack(banks) * torch.as_tensor(raw.eq, device=dev)[:, None, :]
    x = torch.as_tensor(raw.audio, device=dev).float() * \
        torch.as_tensor(raw.scale, device=dev)[:, None]
    return hm.log_mel_spectrogram(x, filters=banks)[:, :, :raw.n_frames]


def bell(f, centre, octaves):
    """A bell over log frequency: 1 at centre, exp(-1/2) at +-octaves."""
    return np.exp(-0.5 * (np.log2(np.maximum(f, 1.0) / centre) / octaves) ** 2)


def random_eq(rng, db):
    """Power gains for the 201 FFT bins: a tilt across the band and two bell-shaped
    bumps (centre 150-6000 Hz, 0.3-1.2 octaves wide), each within +-db.  Voices and
    channels differ in spectral balance; on the held-out voice a fixed 6 dB tilt or
    bump moved greedy WER from 0.477 to 0.404-0.517 (step 46500, 100 clips), so the
    model is taught not to depend on it."""
    f = np.linspace(0, hm.SAMPLE_RATE / 2, hm.N_FFT // 2 + 1)
    gain = rng.uniform(-db, db) * (f / f[-1] - 0.5)
    for _ in range(2):
        centre = np.exp(rng.uniform(np.log(150), np.log(6000)))
        width = rng.uniform(0.3, 1.2)
        gain += rng.uniform(-db, db) * bell(f, centre, width)
    return torch.from_numpy((10.0 ** (gain / 10)).astype(np.float32))


def corpus_sentences():
    """Every training sentence of the corpus (training/corpus/train*.txt, as synth.py reads them;
    never the validation or test sentences)."""
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "training", "corpus", "train*.txt"))):
        with open(path) as f:
            out += [line.rstrip("\n") for line in f if line.strip()]
    return out


def ts_tok(sp, t, n_ts):
    return sp.timestamp_begin + int(min(max(round(t / 0.02), 0), n_ts - 1))


def ctc_target(text):
    t = re.sub(r"[^a-z' ]", " ", text.lower())
    t = re.sub(r" +", " ", t).strip()
    return [CTC_CHARS.index(c) + 1 for c in t]


def nonspeech(rng, seconds):
    """Audio without speech, for <|nospeech|> examples (Whisper's task format has them;
    without any, the model transcribed noise and hum as confident sentences): near
    silence, white / brown / pink noise, mains hum with harmonics, or a few tones
    with slow swells (music-like), at -55..-12 dB RMS.  Pink (1/f, sox's pinknoise) came
    last: a step-89411 model made a sentence of sox's seeded pink noise."""
    n = max(1, int(seconds * SR))
    t = np.arange(n) / SR
    kind = rng.randint(6)
    if kind == 0:
        x = rng.randn(n)
    elif kind in (1, 2):
        x = rng.randn(n)
        if kind == 2:       # brown: integrated, with the drift taken out
            x = np.cumsum(x)
            x -= np.convolve(x, np.ones(400) / 400, mode="same")
    elif kind == 3:
        f0 = 50.0 if rng.rand() < 0.5 else 60.0
        x = sum(rng.uniform(0.1, 1) / h * np.sin(2 * np.pi * h * f0 * t + rng.uniform(0, 6.3))
                for h in range(1, 7))
    elif kind == 5:         # pink: white noise's spectrum shaped to 1/f power
        spec = np.fft.rfft(rng.randn(n))
        spec[1:] /= np.sqrt(np.arange(1, len(spec)))
        spec[0] = 0
        x = np.fft.irfft(spec, n)
    else:
        x = np.zeros(n)
        for _ in range(rng.randint(1, 5)):
            swell = 0.5 + 0.5 * np.sin(2 * np.pi * rng.uniform(0.1, 2) * t + rng.uniform(0, 6.3))
            x += swell * np.sin(2 * np.pi * rng.uniform(100, 2000) * t)
    db = -70 if kind == 0 else rng.uniform(-55, -12)
    x *= 10 ** (db / 20) / (np.sqrt((x ** 2).mean()) + 1e-12)
    return x.astype(np.float32)


class Batcher:
    def __init__(self, shards, tok, sp, dims, args):
        self.sh, self.tok, self.sp, self.d, self.a = shards, tok, sp, dims, args
        self.n_ts = dims.n_vocab - sp.timestamp_begin
        self.win = dims.n_audio_ctx * 320          # samples
        self.win_s = self.win / SR
        # --prompt-lm: prompts speak all the training text, not only the synthesized clips'
        self.lm_text = corpus_sentences() if args.prompt_lm > 0 else None

    def pick(self, rng, lo, hi):
        """A clip with duration in [lo, hi] (the nearest one if none)."""
        sd = self.sh.sorted_dur
        i0 = int(np.searchsorted(sd, lo, "left"))
        i1 = int(np.searchsorted(sd, hi, "right"))
        if i1 <= i0:
            i0, i1 = max(0, min(i0, len(sd) - 1)), max(0, min(i0, len(sd) - 1)) + 1
        return int(self.sh.order[rng.randint(i0, i1)])

    def random_text(self, rng):
        if self.lm_text is not None:
            return self.lm_text[rng.randint(len(self.lm_text))]
        k = rng.randint(len(self.sh))
        return str(self.sh.text[self.sh.index[k][0]][self.sh.index[k][1]])

    def prompt_tokens(self, rng):
        """What hark (like openai's transcribe) prompts the next window with: the previous
        windows' tokens, with their timestamps when those windows were transcribed with
        them (which sentences: random, so that the model learns to read the prompt as
        context, not as a transcript of this audio). Half of the prompts are one to four
        sentences, half are long enough to fill the prompt's n_text_ctx / 2 - 1 tokens, as
        in long-form transcription after the first few windows: trained on short prompts
        only, the model ended windows early and misplaced timestamps once the prompt was
        long (the 65 s sample: 12 of 16 sentences bracketed with no prompt, 7 with the full
        111-token prompt)."""
        n = rng.randint(1, 5) if rng.rand() < 0.5 else rng.randint(6, 13)
        texts = [self.random_text(rng) for _ in range(n)]
        if rng.rand() < 0.5:
            return self.tok.encode(" " + " ".join(texts))
        toks, t = [], rng.uniform(0, 1.0)
        for text in texts:
            d = rng.uniform(1.0, 0.6 * self.win_s)
            if t + d > self.win_s - 0.1:
                t = rng.uniform(0, 1.0)     # the next window's timestamps start again
            toks += [ts_tok(self.sp, t, self.n_ts)] + self.tok.encode(" " + text) + \
                [ts_tok(self.sp, t + d, self.n_ts)]
            t += d + rng.uniform(0.1, 1.0)
        return toks

    def nospeech_example(self, rng, cur):
        """Non-speech audio whose transcript is <|nospeech|>: openai's decoding reads
        P(<|nospeech|>) at the step after sot to skip silent windows."""
        x = hm_augment(nonspeech(rng, rng.uniform(0.5, self.win_s - 0.05)), rng)
        prompt = []
        if (not cur) and rng.rand() < self.a.prompt_frac:
            prompt = [self.sp.startofprev] + self.prompt_tokens(rng)[-(self.d.n_text_ctx // 2 - 1):]
        seq = prompt + [self.sp.sot, self.sp.nospeech, self.sp.eot]
        return dict(audio=x, n_audio_frames=min(len(x) // 160 + 1, 2 * self.d.n_audio_ctx),
                    seq=seq, loss_from=len(prompt), prompt=len(prompt), ctc=[],
                    seconds=min(len(x), self.win) / SR)

    def example(self, rng, step, multi, lo, hi):
        a, sp = self.a, self.sp
        cur = step < a.curriculum_steps
        if step >= a.nospeech_from and a.nospeech_frac > 0 and rng.rand() < a.nospeech_frac:
            return self.nospeech_example(rng, cur)
        timestamps = rng.rand() < (a.ts_frac if not cur else a.ts_frac * 0.5)
        segs = []   # (start_s, end_s, text, complete)
        if not multi:
            k = self.pick(rng, lo, hi)
            audio, text, _ = self.sh.get(k)
            lead = rng.uniform(0, min(1.0, self.win_s - len(audio) / SR - 0.05)) \
                if timestamps and rng.rand() < 0.5 else 0.0
            lead = max(lead, 0.0)
            x = np.concatenate([np.zeros(int(lead * SR), np.float32), audio])
            segs.append((lead, lead + len(audio) / SR, text, True))
        else:
            t = rng.uniform(0, 0.8)
            x_list = [np.zeros(int(t * SR), np.float32)]
            allow_cut = timestamps and rng.rand() < a.cut_frac
            while True:
                k = self.pick(rng, 0.3, self.win_s - 0.5)
                audio, text, _ = self.sh.get(k)
                d = len(audio) / SR
                if t + d > self.win_s - 0.05:
                    if allow_cut and t < self.win_s - 0.6 and segs:
                        x_list.append(audio)
                        segs.append((t, None, text, False))
                    break
                x_list.append(audio)
                segs.append((t, t + d, text, True))
                t += d
                # an example that may end in a cut sentence fills the window until one is
                # cut: long-form windows almost always end mid-sentence
                if not allow_cut and (len(segs) >= 4 or rng.rand() < 0.25):
                    break
                gap = rng.uniform(0.1, 1.2)
                x_list.append(np.zeros(int(gap * SR), np.float32))
                t += gap
            x = np.concatenate(x_list)
            if not segs:
                return self.example(rng, step, False, 0.3, self.win_s - 0.2)
        x = hm_augment(x, rng)
        n_audio_frames = min(len(x) // 160 + 1, 2 * self.d.n_audio_ctx)
        # tokens
        body = []
        if timestamps:
            for (s, e, text, complete) in segs:
                if complete:
                    body += [ts_tok(sp, s, self.n_ts)] + self.tok.encode(" " + text) + \
                        [ts_tok(sp, e, self.n_ts)]
                else:
                    body += [ts_tok(sp, s, self.n_ts)]
            start = [sp.sot]
        else:
            body = self.tok.encode(" " + " ".join(t for (_, _, t, c) in segs if c))
            start = [sp.sot, sp.notimestamps]
        prompt = []
        if (not cur) and rng.rand() < a.prompt_frac:
            prompt = [sp.startofprev] + self.prompt_tokens(rng)[-(self.d.n_text_ctx // 2 - 1):]
        seq = prompt + start + body + [sp.eot]
        seq = seq[:self.d.n_text_ctx + 1]
        n_ctx_loss_from = len(prompt) + len(start) - 1   # predict body + eot
        ctc = ctc_target(" ".join(t for (_, _, t, c) in segs if c))
        ctc_ok = all(c for (_, _, _, c) in segs)
        return dict(audio=x,   # the max-8 clamp is over the whole clip, as hark does
                    n_audio_frames=n_audio_frames, seq=seq,
                    loss_from=n_ctx_loss_from, prompt=len(prompt), ctc=ctc if ctc_ok else [],
                    seconds=min(len(x), self.win) / SR)

    def filterbank(self, rng, step):
        """The mel filterbank of one example as (warp factor, equaliser gains): warped for
        --vtlp-frac of the examples from --vtlp-from on (factor 0: not warped), then with a
        random equaliser for --eq-frac of them from --eq-from on (None: none)."""
        alpha, eq = 0.0, None
        if step >= self.a.vtlp_from and rng.rand() < self.a.vtlp_frac:
            r = self.a.vtlp_range
            alpha = round(rng.uniform(1 - r, 1 + r), 2)
        if step >= self.a.eq_from and rng.rand() < self.a.eq_frac:
            eq = random_eq(rng, self.a.eq_db)
        return alpha, eq

    def batch(self, step):
        a = self.a
        rng = np.random.RandomState((a.seed * 1000003 + step) % (2 ** 31))
        cur = step < a.curriculum_steps
        full = rng.rand() < a.full_window_frac
        multi = (not cur) and rng.rand() < a.multi_frac
        max_frames = 2 * self.d.n_audio_ctx
        if multi:
            bs = max(4, a.batch_frames // max_frames)
            ex = [self.example(rng, step, True, 0, 0) for _ in range(bs)]
        else:
            top = a.curriculum_sec if cur else self.win_s - 0.2
            anchor = self.sh.dur_np[self.pick(rng, 0.3, top)]
            hi = float(anchor)
            lo = 0.6 * hi
            bs = int(np.clip(a.batch_frames / (hi * 100 + 30), 4, a.batch_max))
            if full:
                bs = max(4, a.batch_frames // max_frames)
            ex = [self.example(rng, step, False, lo, hi) for _ in range(bs)]
        n_frames = max_frames if full else \
            min(max_frames, max(e["n_audio_frames"] for e in ex) + 2)
        n_frames += n_frames % 2
        banks = [self.filterbank(rng, step) for _ in ex]
        if self.a.features_on_device:
            if step >= self.a.specaug_from:
                raise ValueError("SpecAugment needs the features made here: "
                                 "no --features-on-device")
            mels = raw_audio(ex, n_frames, banks)
        else:
            mels = torch.stack([window_mel(e["audio"], n_frames, filters=filters_of(*bank))
                                for e, bank in zip(ex, banks)])
        if step >= self.a.specaug_from:
            pad_val = mels.amin(dim=(1, 2))
            for b in range(len(ex)):
                for _ in range(2):   # a width of 0 still draws, keeping the batch's sequence
                    w = rng.randint(0, self.a.specaug_t + 1)
                    t0 = rng.randint(0, max(1, n_frames - w))
                    mels[b, :, t0:t0 + w] = pad_val[b]
                    fw = rng.randint(0, self.a.specaug_f + 1)
                    f0 = rng.randint(0, 80 - fw)
                    mels[b, f0:f0 + fw, :] = pad_val[b]
        T = max(len(e["seq"]) for e in ex) - 1
        inp = torch.full((len(ex), T), self.sp.eot, dtype=torch.long)
        tgt = torch.full((len(ex), T), -100, dtype=torch.long)
        lm = torch.full((len(ex), T), -100, dtype=torch.long)
        for b, e in enumerate(ex):
            s = torch.tensor(e["seq"])
            n = len(s) - 1
            inp[b, :n] = s[:-1]
            tgt[b, e["loss_from"]:n] = s[1 + e["loss_from"]:]
            # --prompt-lm: the prompt's own text tokens as next-token targets (not its
            # timestamps, not the sot that follows it)
            nxt = s[1:e["prompt"]]
            lm[b, :len(nxt)] = torch.where(nxt < len(self.tok), nxt, torch.full_like(nxt, -100))
            # decoder-input corruption (not in the prompt/start tokens)
            if self.a.corrupt > 0 and n > e["loss_from"] + 1:
                m = rng.rand(n) < self.a.corrupt
                m[:e["loss_from"] + 1] = False
                if m.any():
                    inp[b, :n][torch.from_numpy(m)] = torch.from_numpy(
                        rng.randint(0, len(self.tok), m.sum())).long()
        ctc_t = [torch.tensor(e["ctc"], dtype=torch.long) for e in ex]
        ctc_in = torch.tensor([min(n_frames, e["n_audio_frames"] + 1) // 2 + 1 for e in ex])
        ctc_in = torch.clamp(ctc_in, max=n_frames // 2)
        return mels, inp, tgt, lm, ctc_t, ctc_in, sum(e["seconds"] for e in ex)


def hm_augment(x, rng):
    from synth import augment
    return augment(x, rng)


SNAPSHOTS = 12       # validated steps whose weights are kept for averaging
_BATCHER = None     # the Batcher a --workers process inherits through fork


def _batch_np(step):
    """Batcher.batch(step) in a worker, tensors as numpy arrays: torch would send each
    tensor as shared memory with a file descriptor of its own (one per CTC target)."""
    return tuple(x.numpy() if torch.is_tensor(x) else [t.numpy() for t in x]
                 if isinstance(x, list) else x for x in _BATCHER.batch(step))


class Prefetch:
    """--workers processes build the batches of the coming steps, handed out in step
    order: the batch of a step is a pure function of the step and the shards, so these
    are the batches the training process would build itself (a GPU step takes less time
    than building its batch).  The workers hold the shards as they were at the fork:
    reset() after new ones arrive."""

    def __init__(self, batcher, workers):
        self.batcher, self.n, self.pool, self.todo = batcher, workers, None, collections.deque()

    def reset(self):
        """Stops the workers; the next batch() forks new ones."""
        if self.pool is not None:
            self.pool.terminate()
        self.pool, self.todo = None, collections.deque()

    def batch(self, step):
        global _BATCHER
        if self.n == 0:
            return self.batcher.batch(step)
        if self.pool is None:
            _BATCHER = self.batcher
            self.pool = multiprocessing.get_context("fork").Pool(
                self.n, torch.set_num_threads, (1,))
        while self.todo and self.todo[0][0] != step:       # out of order: start over
            self.todo.popleft()
        nxt = self.todo[-1][0] + 1 if self.todo else step
        while len(self.todo) < 2 * self.n + 1:
            self.todo.append((nxt, self.pool.apply_async(_batch_np, (nxt,))))
            nxt += 1
        return tuple(torch.from_numpy(x) if isinstance(x, np.ndarray) else
                     [torch.from_numpy(t) for t in x] if isinstance(x, list) else x
                     for x in self.todo.popleft()[1].get())


# ---------------------------------------------------------------- model

def make_model(dims):
    m = hm.Whisper(dims)
    with torch.no_grad():
        m.decoder.token_embedding.weight.normal_(0, 0.02)
        m.decoder.positional_embedding.normal_(0, 0.01)
    return m


def optimizer_params(model, ctc_head):
    """(name, parameter) in the optimiser's order: weight-decayed matrices, then the rest."""
    named = [("model." + n, p) for n, p in model.named_parameters()] + \
        [("ctc." + n, p) for n, p in ctc_head.named_parameters()]
    return [np_ for np_ in named if np_[1].dim() >= 2] + [np_ for np_ in named if np_[1].dim() < 2]


def freeze(model, part):
    """Stops training the decoder or the encoder (--freeze): the other half learns to fit
    it, e.g. the encoder a new kind of voice while the decoder's language model and
    timestamp habits stay as they are."""
    if part != "none":
        for p in getattr(model, part).parameters():
            p.requires_grad_(False)


def make_optimizer(model, ctc_head, lr):
    params = [p for _, p in optimizer_params(model, ctc_head) if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=lr, betas=(0.9, 0.98), eps=1e-8)


def conv_as_matmul(conv):
    """Replaces a Conv1d's forward with unfold + matmul (equal to 1e-6): a product
    that autocast can run in bf16 without oneDNN's convolution."""
    k, stride, pad = conv.kernel_size[0], conv.stride[0], conv.padding[0]

    def forward(x):
        cols = F.pad(x, (pad, pad)).unfold(2, k, stride)          # B, C, T', k
        b, c, t, _ = cols.shape
        cols = cols.permute(0, 2, 1, 3).reshape(b, t, c * k)
        w = conv.weight.reshape(conv.out_channels, c * k)
        return F.linear(cols, w, conv.bias).transpose(1, 2)
    conv.forward = forward


def bf16_wanted(choice, dev):
    """bf16 autocast: on CUDA, and on CPUs with AMX, where oneDNN's bf16 products
    ran 6.7x faster than OpenBLAS's fp32 (2x per training step)."""
    if choice != "auto":
        return choice == "on"
    if dev.type == "cuda":
        return torch.cuda.is_bf16_supported()
    return "amx_bf16" in CPU_FLAGS


class CTCHead(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = torch.nn.Linear(d, len(CTC_CHARS) + 1)

    def forward(self, xa):
        return self.proj(xa).log_softmax(-1)


def wer(ref, hyp):
    norm = lambda s: re.sub(r"[^a-z' ]", " ", s.lower()).split()
    r, h = norm(ref), norm(hyp)
    d = list(range(len(h) + 1))
    for i in range(1, len(r) + 1):
        prev, d[0] = d[0], i
        for j in range(1, len(h) + 1):
            cur = min(d[j] + 1, d[j - 1] + 1, prev + (r[i - 1] != h[j - 1]))
            prev, d[j] = d[j], cur
    return d[len(h)], len(r)


def cer(ref, hyp):
    r = re.sub(r" +", " ", re.sub(r"[^a-z' ]", " ", ref.lower())).strip()
    h = hyp.strip()
    d = list(range(len(h) + 1))
    for i in range(1, len(r) + 1):
        prev, d[0] = d[0], i
        for j in range(1, len(h) + 1):
            cur = min(d[j] + 1, d[j - 1] + 1, prev + (r[i - 1] != h[j - 1]))
            prev, d[j] = d[j], cur
    return d[len(h)], len(r)


def suppress_ids(sp):
    return [sp.translate, sp.transcribe, sp.sot, sp.startofprev, sp.startoflm, sp.nospeech,
            sp.notimestamps] + list(range(sp.first_lang, sp.first_lang + sp.n_langs))


def greedy_batch(model, xa, sp, suppress, blank, sample_len):
    """hm.greedy_window (no timestamps) for a batch of encoded windows at once:
    validation decoded clip by clip took minutes of the training core."""
    with torch.no_grad():
        n = xa.shape[0]
        cache = model.decoder.new_cache()
        logits = model.decoder(torch.tensor([[sp.sot, sp.notimestamps]] * n, device=xa.device),
                               xa, cache)[:, -1]
        out = [[] for _ in range(n)]
        done = torch.zeros(n, dtype=torch.bool, device=xa.device)
        for step in range(sample_len):
            tok = hm.suppress_greedy(logits, step, sp, suppress, blank, False).argmax(-1)
            done |= tok == sp.eot
            if done.all():
                break
            toks, dn = tok.tolist(), done.tolist()     # one device->host copy a step
            for b in range(n):
                if not dn[b]:
                    out[b].append(toks[b])
            logits = model.decoder(tok[:, None], xa, cache)[:, -1]
        return out


def ctc_greedy_text(logprobs):
    chars, prev = [], 0
    for c in logprobs.argmax(-1).tolist():
        if c != prev and c != 0:
            chars.append(CTC_CHARS[c - 1])
        prev = c
    return re.sub(" +", " ", "".join(chars))


def nospeech_check(model, sp, dims, shards, dev, n=40):
    """Mean P(<|nospeech|>) after sot on n fixed non-speech clips and on the first n
    validation clips (speech): what hark's silence test reads."""
    rng = np.random.RandomState(4321)
    quiet = [nonspeech(rng, rng.uniform(1, 9)) for _ in range(n)]
    speech = [shards.get(k)[0] for k in range(min(n, len(shards)))]
    model.eval()
    out = []
    with torch.no_grad():
        for clips in (quiet, speech):
            mels = torch.stack([window_mel(a, 2 * dims.n_audio_ctx) for a in clips]).to(dev)
            logits = model.decoder(torch.tensor([[sp.sot]] * len(clips), device=dev),
                                   model.encoder(mels))[:, -1]
            out.append(float(torch.softmax(logits.float(), -1)[:, sp.nospeech].mean()))
    model.train()
    return out


def evaluate(model, ctc_head, shards, tok, sp, dims, n, dev, chunk=25):
    model.eval()
    we = wn = ce = cn = 0
    hyps = []
    sup = suppress_ids(sp)
    blank = tok.encode(" ")[0]
    for k0 in range(0, min(n, len(shards)), chunk):
        clips = [shards.get(k) for k in range(k0, min(n, len(shards), k0 + chunk))]
        mels = torch.stack([window_mel(a, 2 * dims.n_audio_ctx) for a, _, _ in clips]).to(dev)
        with torch.no_grad():
            xa = model.encoder(mels)
            ctc_lp = ctc_head(xa).cpu()
        outs = greedy_batch(model, xa, sp, sup, blank, 60)
        for (audio, text, _), out, lp in zip(clips, outs, ctc_lp):
            hyp = tok.decode([t for t in out if t < sp.eot])
            e, m = wer(text, hyp)
            we, wn = we + e, wn + m
            hyps.append(hyp)
            e, m = cer(text, ctc_greedy_text(lp))
            ce, cn = ce + e, cn + m
    model.train()
    uniq = len(set(hyps)) / max(1, len(hyps))
    return we / max(1, wn), ce / max(1, cn), uniq, hyps[:2]


# ---------------------------------------------------------------- main

# where this machine keeps things and how much it takes at once (a GPU run's 8x batch
# must not follow the checkpoint back to a CPU): never taken from the checkpoint
MACHINE_ARGS = ("ckpt", "data", "work", "device", "threads", "workers", "max_minutes",
                "decay_by_time", "refresh_every", "features_on_device",
                "log_every", "val_every", "val_n", "val_rms_n", "ckpt_min", "bf16",
                "batch_frames", "batch_max")
SHAPE_ARGS = ("d_model", "heads", "enc_layers", "dec_layers", "n_audio_ctx", "n_text_ctx",
              "seed", "tokenizer")


def resume_args(args, saved, argv):
    """A resumed run keeps its shape and seed, and the rest of its schedule unless the
    command line names an option again (a resume once forgot --specaug-from)."""
    given = {a.split("=")[0][2:].replace("-", "_") for a in argv if a.startswith("--")}
    for k, v in saved.items():
        if k in SHAPE_ARGS or (k not in MACHINE_ARGS and k not in given and hasattr(args, k)):
            setattr(args, k, v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default=os.path.join(ROOT, "training", "ckpt"))
    ap.add_argument("--data", default=DATA)
    ap.add_argument("--work", default=WORK, help="fp32 weights + optimiser state, and a "
                    "mirror of the checkpoint (outside the repo)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--workers", type=int, default=0,
                    help="processes building the batches of the coming steps (the same "
                    "batches; 0: the training process builds each itself)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steps", type=int, default=40000)
    ap.add_argument("--d-model", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--enc-layers", type=int, default=4)
    ap.add_argument("--dec-layers", type=int, default=4)
    ap.add_argument("--n-audio-ctx", type=int, default=500)
    ap.add_argument("--n-text-ctx", type=int, default=224)
    ap.add_argument("--tokenizer", default=DEFAULT_NAME,
                    help="BPE merges, relative to the repository (scripts/train/bpe.py train)")
    ap.add_argument("--batch-frames", type=int, default=4800,
                    help="mel frames per batch (16 x 3 s); batch size follows clip length")
    ap.add_argument("--batch-max", type=int, default=48)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=600)
    ap.add_argument("--decay-steps", type=int, default=40000)
    ap.add_argument("--ctc-weight", type=float, default=0.5)
    ap.add_argument("--ctc-final", type=float, default=0.2)
    ap.add_argument("--ctc-decay", default="4000,12000")
    ap.add_argument("--curriculum-steps", type=int, default=1000)
    ap.add_argument("--curriculum-sec", type=float, default=2.5)
    ap.add_argument("--multi-frac", type=float, default=0.25)
    ap.add_argument("--ts-frac", type=float, default=0.4)
    ap.add_argument("--cut-frac", type=float, default=0.3)
    ap.add_argument("--prompt-frac", type=float, default=0.2)
    ap.add_argument("--prompt-lm", type=float, default=0.0,
                    help="weight of a next-token loss on the prompt's text, and prompts drawn "
                    "from all of training/corpus/train*.txt: the decoder reads more text than is spoken")
    ap.add_argument("--full-window-frac", type=float, default=0.1)
    ap.add_argument("--corrupt", type=float, default=0.05)
    ap.add_argument("--nospeech-frac", type=float, default=0.0,
                    help="examples of non-speech audio whose transcript is <|nospeech|>")
    ap.add_argument("--nospeech-from", type=int, default=0,
                    help="step from which --nospeech-frac applies")
    ap.add_argument("--specaug-from", type=int, default=4000)
    ap.add_argument("--specaug-t", type=int, default=27,
                    help="widest SpecAugment time mask, frames (two per example)")
    ap.add_argument("--specaug-f", type=int, default=11,
                    help="widest SpecAugment frequency mask, mel bins (two per example)")
    ap.add_argument("--vtlp-from", type=int, default=1000000,
                    help="step from which examples get a vocal-tract-length warp")
    ap.add_argument("--vtlp-frac", type=float, default=0.8)
    ap.add_argument("--vtlp-range", type=float, default=0.15,
                    help="warp factors uniform in 1 +- this")
    ap.add_argument("--eq-from", type=int, default=1000000,
                    help="step from which examples get a random equaliser curve")
    ap.add_argument("--eq-frac", type=float, default=0.5)
    ap.add_argument("--eq-db", type=float, default=6.0,
                    help="tilt and the two bumps' gains uniform in +- this many dB")
    ap.add_argument("--dropout", type=float, default=0.0,
                    help="residual dropout in every block (a training shard decoded at 6.6 %% "
                    "WER where held-out sentences in the same voices gave 16 %%)")
    ap.add_argument("--freeze", choices=("none", "decoder", "encoder"), default="none",
                    help="train only the other half of the model (and the CTC head)")
    ap.add_argument("--cycle-start", type=int, default=0,
                    help="step where the linear decay to --decay-steps starts again "
                    "from --lr (a warm restart)")
    ap.add_argument("--fast-gelu", type=int, default=1,
                    help="tanh GELU in fp32 training (ignored with bf16, where erf is faster)")
    ap.add_argument("--bf16", choices=("auto", "on", "off"), default="auto",
                    help="bf16 autocast for the forward pass (fp32 weights and optimiser)")
    ap.add_argument("--log-every", type=int, default=25)
    ap.add_argument("--val-every", type=int, default=500)
    ap.add_argument("--val-n", type=int, default=100)
    ap.add_argument("--val-rms-n", type=int, default=100,
                    help="held-out voice clips per validation (50 until step 55500: too few "
                    "to tell checkpoints apart)")
    ap.add_argument("--ckpt-min", type=float, default=10.0)
    ap.add_argument("--features-on-device", action="store_true",
                    help="the --workers send each batch's audio and the training process makes "
                    "its log-mels on --device (a GPU): the workers' slowest part")
    ap.add_argument("--refresh-every", type=int, default=200,
                    help="steps between looks for new shards (each one found restarts the "
                    "--workers, whose queued batches are lost)")
    ap.add_argument("--max-minutes", type=float, default=0, help="stop after this long")
    ap.add_argument("--decay-by-time", action="store_true",
                    help="with --max-minutes: the learning rate falls linearly over the run's "
                    "minutes instead of its steps (a GPU lease whose step count is not known "
                    "ahead)")
    args = ap.parse_args()
    if args.decay_by_time and args.max_minutes <= 0:
        ap.error("--decay-by-time needs --max-minutes")

    torch.set_num_threads(args.threads)
    dev = torch.device(args.device)
    if dev.type == "cuda":
        torch.set_float32_matmul_precision("high")     # TF32 for validation's fp32 products
    os.makedirs(args.ckpt, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    # resume from whichever copy (repo or mirror) is newer
    src_dir = args.ckpt
    try:
        if json.load(open(os.path.join(args.work, "state.json")))["step"] > \
                (json.load(open(os.path.join(args.ckpt, "state.json")))["step"]
                 if os.path.exists(os.path.join(args.ckpt, "state.json")) else -1):
            src_dir = args.work
    except (OSError, ValueError, KeyError):
        pass
    state_path = os.path.join(src_dir, "state.json")
    w_path = os.path.join(src_dir, "model.fp16.pt")
    opt_path = os.path.join(args.work, "opt.pt")
    log_path = os.path.join(args.ckpt, "train.log")

    state = None
    if os.path.exists(state_path):
        state = json.load(open(state_path))
        resume_args(args, state["args"], sys.argv[1:])
    tok = Tokenizer(checkpoint_merges(vars(args)))
    n_ts = int(round(args.n_audio_ctx * 320 / SR / 0.02)) + 1   # 0.00 .. window, 0.02 s steps
    sp = hm.Specials(len(tok), 1, n_ts)
    dims = hm.Dims(n_mels=80, n_audio_ctx=args.n_audio_ctx, n_audio_state=args.d_model,
                   n_audio_head=args.heads, n_audio_layer=args.enc_layers,
                   n_vocab=sp.n_vocab, n_text_ctx=args.n_text_ctx, n_text_state=args.d_model,
                   n_text_head=args.heads, n_text_layer=args.dec_layers)
    torch.manual_seed(args.seed)
    model = make_model(dims)
    bf16 = bf16_wanted(args.bf16, dev)
    torch.backends.mkldnn.enabled = bf16 and dev.type == "cpu"
    conv_as_matmul(model.encoder.conv1)
    conv_as_matmul(model.encoder.conv2)
    if args.fast_gelu and not bf16:
        # training-only speed-up (2.7x faster GELU on this CPU); the exported model and
        # the engine use the exact erf GELU (max difference 3e-4); finish with --fast-gelu 0
        for blk in list(model.encoder.blocks) + list(model.decoder.blocks):
            blk.mlp[1] = torch.nn.GELU(approximate="tanh")
    hm.set_dropout(model, args.dropout)
    freeze(model, args.freeze)
    ctc_head = CTCHead(args.d_model)
    opt = make_optimizer(model, ctc_head, args.lr)
    params = [p for g in opt.param_groups for p in g["params"]]   # for gradient clipping
    step, seconds_seen = 0, 0.0
    rewarm_from = None
    if state is not None:
        step, seconds_seen = state["step"], state["seconds_seen"]
        full = torch.load(opt_path, map_location="cpu") if os.path.exists(opt_path) else None
        if full is not None and full.get("step") == step:
            model.load_state_dict(full["model"])
            ctc_head.load_state_dict(full["ctc"])
            opt.load_state_dict(full["opt"])
            src = "fp32 + optimiser"
        else:
            w = torch.load(w_path, map_location="cpu")
            model.load_state_dict({k: v.float() for k, v in w["model"].items()}, strict=False)
            ctc_head.load_state_dict({k: v.float() for k, v in w["ctc"].items()})
            src = "fp16 weights (fresh optimiser)"
            rewarm_from = step      # a fresh AdamW at full lr jolts trained weights
        print("resumed step %d from %s" % (step, src), flush=True)
    model.to(dev)
    ctc_head.to(dev)
    model.train()

    n_params = sum(p.numel() for p in model.parameters())
    logf = open(log_path, "a")

    def log(msg):
        nonlocal logf
        line = time.strftime("%Y-%m-%d %H:%M:%S ") + msg
        print(line, flush=True)
        if not os.path.exists(log_path):       # the repo copy was removed: reopen
            os.makedirs(args.ckpt, exist_ok=True)
            logf = open(log_path, "a")
        logf.write(line + "\n")
        logf.flush()

    log("start step %d%s dims %s params %.2fM text_tokens %d n_vocab %d args %s" % (
        step, " (bf16 autocast)" if bf16 else "", json.dumps(dims.__dict__),
        n_params / 1e6, len(tok), sp.n_vocab,
        json.dumps(vars(args))))

    train_sh = Shards(os.path.join(args.data, "train", "shard-*.npz"))
    val_sh = Shards(os.path.join(args.data, "valid", "shard-*.npz"))
    valr_sh = Shards(os.path.join(args.data, "valid-rms", "shard-*.npz"))
    log("train clips %s, valid %d, valid-rms %d" % (train_sh.size_text(), len(val_sh),
                                                    len(valr_sh)))
    batcher = Batcher(train_sh, tok, sp, dims, args)
    prefetch = Prefetch(batcher, args.workers)

    def save():
        st = {k: v.detach().half().cpu() for k, v in model.state_dict().items()
              if k != "decoder.mask"}
        ct = {k: v.detach().half().cpu() for k, v in ctc_head.state_dict().items()}
        torch.save({"step": step, "model": model.state_dict(), "ctc": ctc_head.state_dict(),
                    "opt": opt.state_dict()}, opt_path + ".tmp")
        os.replace(opt_path + ".tmp", opt_path)
        meta = {"step": step, "seconds_seen": seconds_seen, "hours_seen": seconds_seen / 3600,
                "dims": dims.__dict__, "n_text_tokens": len(tok), "args": vars(args),
                "tokenizer": args.tokenizer, "saved": time.strftime("%Y-%m-%d %H:%M:%S")}
        meta.update({k: state[k] for k in ("grown", "reshaped") if state and k in state})
        for d in (args.ckpt, args.work):
            os.makedirs(d, exist_ok=True)
            wp, sp_ = os.path.join(d, "model.fp16.pt"), os.path.join(d, "state.json")
            torch.save({"model": st, "ctc": ct}, wp + ".tmp")
            os.replace(wp + ".tmp", wp)
            with open(sp_ + ".tmp", "w") as f:
                json.dump(meta, f, indent=1)
            os.replace(sp_ + ".tmp", sp_)
        return st, ct

    def snapshot(weights):
        """The fp16 weights of each validated step, the last SNAPSHOTS of them kept, for
        export.py --average (the mean of the last few can beat any one of them; at steps
        35000-37000 it did not)."""
        d = os.path.join(args.work, "snapshots")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "step-%06d.pt" % step)
        torch.save({"step": step, "model": weights[0], "ctc": weights[1]}, path + ".tmp")
        os.replace(path + ".tmp", path)
        for old in sorted(glob.glob(os.path.join(d, "step-*.pt")))[:-SNAPSHOTS]:
            os.remove(old)

    c0, c1 = [int(x) for x in args.ctc_decay.split(",")]
    t_start = last_ckpt = time.time()
    acc_keys = ("loss", "ctc", "lm", "n", "t", "wait")   # sums over the steps of a log line
    acc = dict.fromkeys(acc_keys, 0.0)
    while step < args.steps:
        t0 = time.time()
        if step % args.refresh_every == 0:
            n_clips = len(train_sh)
            train_sh.refresh()
            if len(train_sh) != n_clips:
                prefetch.reset()
                log("step %d train clips %s, new shards" % (step, train_sh.size_text()))
        done = (time.time() - t_start) / (args.max_minutes * 60) if args.decay_by_time else \
            (step - args.cycle_start) / (args.decay_steps - args.cycle_start)
        lr = args.lr * min(1.0, (step + 1) / args.warmup) * min(1.0, max(0.05, 1.0 - done))
        if rewarm_from is not None:
            lr *= min(1.0, (step - rewarm_from + 1) / 200)
        for g in opt.param_groups:
            g["lr"] = lr
        cw = args.ctc_weight if step < c0 else args.ctc_final if step >= c1 else \
            args.ctc_weight + (args.ctc_final - args.ctc_weight) * (step - c0) / (c1 - c0)
        mels, inp, tgt, lm, ctc_t, ctc_in, secs = prefetch.batch(step)
        t_got = time.time()
        mels = device_features(mels, dev) if isinstance(mels, RawAudio) else mels.to(dev)
        inp, tgt, lm = inp.to(dev), tgt.to(dev), lm.to(dev)
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=bf16):
            xa = model.encoder(mels)
            logits = model.decoder(inp, xa)
        xa = xa.float()
        loss_dec = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                                   tgt.reshape(-1), ignore_index=-100)
        loss_lm = torch.zeros((), device=dev)
        if args.prompt_lm > 0 and (lm >= 0).any():
            loss_lm = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                                      lm.reshape(-1), ignore_index=-100)
        keep = [i for i, t in enumerate(ctc_t) if len(t) > 0]
        if keep:
            lp = ctc_head(xa)[keep].transpose(0, 1)        # T, B, C
            tl = torch.tensor([len(ctc_t[i]) for i in keep])
            loss_ctc = F.ctc_loss(lp, torch.cat([ctc_t[i] for i in keep]).to(dev),
                                  ctc_in[keep].to(dev), tl.to(dev), blank=0,
                                  reduction="mean", zero_infinity=True)
        else:
            loss_ctc = torch.zeros((), device=dev)
        loss = loss_dec + cw * loss_ctc + args.prompt_lm * loss_lm
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(params, 1.0)
        if torch.isfinite(gn):
            opt.step()
        step += 1
        seconds_seen += secs
        acc["loss"] += loss_dec.item()
        acc["ctc"] += loss_ctc.item()
        acc["lm"] += loss_lm.item()
        acc["n"] += 1
        acc["t"] += time.time() - t0
        acc["wait"] += t_got - t0
        if step % args.log_every == 0:
            n = acc["n"]
            log("step %d loss %.3f ctc %.3f ctc_w %.2f lr %.2e gn %.2f %.2fs/step (%.2f s "
                "waiting for the batch) frames %d audio %.1f h%s" % (
                    step, acc["loss"] / n, acc["ctc"] / n, cw, lr, float(gn), acc["t"] / n,
                    acc["wait"] / n, mels.shape[-1], seconds_seen / 3600,
                    " prompt-lm %.3f" % (acc["lm"] / n) if args.prompt_lm else ""))
            acc = dict.fromkeys(acc_keys, 0.0)
        if step % args.val_every == 0 or step == args.steps:
            w1, c1_, u1, ex1 = evaluate(model, ctc_head, val_sh, tok, sp, dims, args.val_n, dev)
            w2, c2_, u2, ex2 = evaluate(model, ctc_head, valr_sh, tok, sp, dims,
                                        args.val_rms_n, dev)
            ns_quiet, ns_speech = nospeech_check(model, sp, dims, val_sh, dev)
            log("VAL step %d wer %.3f ctc_cer %.3f uniq %.2f | heldout-rms wer %.3f "
                "ctc_cer %.3f uniq %.2f | P(nospeech) non-speech %.3f speech %.3f | e.g. %r"
                % (step, w1, c1_, u1, w2, c2_, u2, ns_quiet, ns_speech, ex1[:1]))
            snapshot(save())
            last_ckpt = time.time()
        elif time.time() - last_ckpt > args.ckpt_min * 60:
            save()
            last_ckpt = time.time()
            log("checkpoint step %d" % step)
        if args.max_minutes and time.time() - t_start > args.max_minutes * 60:
            break
    prefetch.reset()
    save()
    log("stopped at step %d" % step)


if __name__ == "__main__":
    main()
