#!/usr/bin/python3
"""Synthesize hark's training / evaluation speech from the corpus.

Voices (all from Debian packages: espeak-ng, flite, festival + festvox-kallpc16k,
  festvox-kdlpc16k, festvox-us-slt-hts):
  espeak-ng  8 English accents x ~95 voice variants, rate 120..220 wpm, pitch 20..80
  flite      kal16, awb, slt, kal (8 kHz), rms   (recorded human speakers, CMU)
  festival   kal_diphone
Extra voices (--voices extra, shards 120.. of train/): flite awb, slt, kal16 with their
mean pitch drawn from 85..220 Hz (no training voice was as low as rms, ~95 Hz), festival
ked_diphone (festvox-kdlpc16k, a speaker no other engine has) and the HTS voice
cmu_us_slt_arctic_hts (festvox-us-slt-hts), pitch-shifted by sox by -400..+300 cents.
HELD-OUT voice: flite "rms" is never used for training; it is the generalisation
test (--voices heldout).
HARK_NO_FESTIVAL=1 leaves festival out of the pool (espeak 2/3, flite 1/3), for machines
without it (scripts/train/gpu-train); shards then differ from those built with festival.
HARK_FLITE_SHIFT=LO,HI (cents, e.g. -500,100) also shifts half of the flite clips of the
training splits by sox's pitch effect (pitch and formants), drawn from LO..HI: the held-out
voice lies at the low edge of what the training voices cover (scripts/eval/pitch-sensitivity).
Unset, shards are the same bytes as without it.

Synthesis-time augmentation (sox): tempo 0.85..1.15, speed 0.92..1.08, reverb,
telephone band-limit (300-3400 Hz), random peak level.  Training-time
augmentation (noise at 10..40 dB SNR, gain) is in augment() and used by train.py.

Output: shards /work/cache/hark-data/<name>/shard-XXXXX.{pcm,npz}:
  .pcm    int16 little-endian, all clips concatenated (16 kHz, silence trimmed
          to ~60 ms margins)
  .npz    offsets int64 [n+1] into the .pcm
  text    str [n], voice str [n]
Each shard is deterministic in (seed, shard index).

Usage:
  scripts/train/synth.py build --split train --out /work/cache/hark-data/train --first 0 --count 20
  scripts/train/synth.py build --split valid --voices train --out /work/cache/hark-data/valid --count 1 --per-shard 300
  scripts/train/synth.py build --split test --voices heldout --out /work/cache/hark-data/test-rms --count 1 --per-shard 300
  scripts/train/synth.py say "Some text." --voice espeak:en-us+f3:160:50 --wav out.wav
"""
import argparse
import io
import os
import random
import subprocess
import tempfile
import wave

import numpy as np

SR = 16000
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

ESPEAK_ACCENTS = ["en-us", "en-gb", "en-gb-scotland", "en-gb-x-gbclan", "en-gb-x-rp",
                  "en-gb-x-gbcwmd", "en-029", "en-us-nyc"]
# whispered / deliberately distorted variants are left out
ESPEAK_SKIP = {"whisper", "whisperf", "Demonic", "croak", "UniRobot", "anikaRobot"}
FLITE_TRAIN = ["kal16", "awb", "slt", "kal"]
HELDOUT = ["flite:rms"]
# name suffix ":f0": the voice's pitch is drawn per clip (flite: int_f0_target_mean;
# festival: a sox pitch shift)
EXTRA = [("flite:awb:f0", 0.2), ("flite:slt:f0", 0.2), ("flite:kal16:f0", 0.1),
         ("festival:ked_diphone:f0", 0.25), ("festival:cmu_us_slt_arctic_hts:f0", 0.25)]
FESTIVAL = os.environ.get("HARK_NO_FESTIVAL", "0") in ("", "0")
FLITE_SHIFT = tuple(int(c) for c in os.environ["HARK_FLITE_SHIFT"].split(",")) \
    if os.environ.get("HARK_FLITE_SHIFT") else None
TMP = "/dev/shm" if os.path.isdir("/dev/shm") else None


def espeak_variants():
    out = subprocess.run(["espeak-ng", "--voices=variant"], capture_output=True,
                         text=True).stdout.split("\n")[1:]
    names = []
    for line in out:
        f = line.split()
        if len(f) >= 5 and f[4].startswith("!v/"):
            v = f[4][3:]
            if v not in ESPEAK_SKIP:
                names.append(v)
    return sorted(set(names))


def read_wav_bytes(data):
    with wave.open(io.BytesIO(data)) as w:
        sr, n, ch = w.getframerate(), w.getnframes(), w.getnchannels()
        raw = w.readframes(n)
    if n == 0 or len(raw) == 0:
        # espeak --stdout writes a header with unknown length
        raw = data[44:]
    a = np.frombuffer(raw[:len(raw) // 2 * 2], dtype="<i2").astype(np.float32) / 32768.0
    if ch > 1:
        a = a.reshape(-1, ch).mean(1)
    return a, sr


def sox_process(wav_bytes, effects):
    """wav bytes -> 16 kHz float32 via sox with the given effect list."""
    # -R: repeatable dither, so that a shard is the same bytes on every run
    cmd = ["sox", "-q", "-R", "-t", "wav", "-", "-t", "raw", "-r", str(SR), "-e", "signed",
           "-b", "16", "-c", "1", "-"] + effects
    p = subprocess.run(cmd, input=wav_bytes, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.decode(errors="ignore"))
    return np.frombuffer(p.stdout, dtype="<i2").astype(np.float32) / 32768.0


def random_effects(rng):
    eff = []
    r = rng.random()
    if r < 0.35:
        eff += ["tempo", "-s", "%.3f" % rng.uniform(0.85, 1.15)]
    elif r < 0.55:
        eff += ["speed", "%.3f" % rng.uniform(0.92, 1.08)]
    if rng.random() < 0.15:
        eff += ["reverb", "%d" % rng.randint(10, 60), "50", "%d" % rng.randint(20, 100)]
    if rng.random() < 0.08:
        eff += ["sinc", "300-3400"]
    eff += ["rate", str(SR), "norm", "%.1f" % rng.uniform(-12, -1)]
    return eff


def synth_raw(voice, text, rng):
    """Return wav bytes for voice spec 'engine:name[:rate:pitch]' or 'flite:name:f0'."""
    eng, name = voice.split(":")[:2]
    if eng == "espeak":
        acc_var = name
        rate = rng.randint(120, 220)
        pitch = rng.randint(20, 80)
        return subprocess.run(["espeak-ng", "-v", acc_var, "-s", str(rate), "-p", str(pitch),
                               "--stdout", text], capture_output=True).stdout
    if eng == "flite":
        with tempfile.NamedTemporaryFile(suffix=".wav", dir=TMP) as tf:
            cmd = ["flite", "-voice", name, "--setf",
                   "duration_stretch=%.2f" % rng.uniform(0.85, 1.2), "-t", text, "-o", tf.name]
            if voice.endswith(":f0"):
                cmd[3:3] = ["--setf", "int_f0_target_mean=%d" % rng.randint(85, 220)]
            subprocess.run(cmd, capture_output=True)
            return open(tf.name, "rb").read()
    raise ValueError(voice)


def festival_batch(texts, voice="kal_diphone"):
    """Synthesize several texts with one festival process; returns wav bytes list."""
    with tempfile.TemporaryDirectory(dir=TMP) as d:
        # kal_diphone is festival's default: the shards built before other voices
        # existed ran without a (voice_...) call
        scm = [] if voice == "kal_diphone" else ["(voice_%s)\n" % voice]
        for i, t in enumerate(texts):
            t = t.replace("\\", " ").replace('"', " ")
            scm.append('(set! u (utt.synth (Utterance Text "%s")))\n'
                       '(utt.save.wave u "%s/%d.wav" \'riff)\n' % (t, d, i))
        path = os.path.join(d, "s.scm")
        with open(path, "w") as f:
            f.write("".join(scm))
        subprocess.run(["festival", "-b", path], capture_output=True)
        out = []
        for i in range(len(texts)):
            p = os.path.join(d, "%d.wav" % i)
            out.append(open(p, "rb").read() if os.path.exists(p) else b"")
        return out


def trim(a, margin=0.06, db=-40.0):
    """Cut leading/trailing silence, keeping `margin` seconds."""
    if len(a) == 0:
        return a
    fr = 160
    n = len(a) // fr
    if n == 0:
        return a
    e = (a[:n * fr].reshape(n, fr) ** 2).mean(1)
    thr = e.max() * 10 ** (db / 10)
    act = np.nonzero(e > thr)[0]
    if len(act) == 0:
        return a[:0]
    m = int(margin * SR)
    s = max(0, act[0] * fr - m)
    t = min(len(a), (act[-1] + 1) * fr + m)
    return a[s:t]


def voice_pool(which):
    if which == "heldout":
        return [(v, 1.0) for v in HELDOUT]
    if which == "extra":    # without festival (a GPU machine): the flite voices alone
        return [(v, w) for v, w in EXTRA if FESTIVAL or not v.startswith("festival:")]
    variants = espeak_variants()
    pool = []
    for acc in ESPEAK_ACCENTS:
        pool.append(("espeak:%s" % acc, 1.0))
        for v in variants:
            pool.append(("espeak:%s+%s" % (acc, v), 1.0))
    n_esp = len(pool)
    # weights: espeak 60 %, flite 30 %, festival 10 % (without festival: 2/3, 1/3)
    pool = [(v, 0.60 / n_esp) for v, _ in pool]
    pool += [("flite:%s" % v, 0.30 / len(FLITE_TRAIN)) for v in FLITE_TRAIN]
    if FESTIVAL:
        pool += [("festival:kal_diphone", 0.10)]
    return pool


def load_split(split):
    with open(os.path.join(ROOT, "training", "corpus", split + ".txt")) as f:
        return [l.rstrip("\n") for l in f if l.strip()]


def pitch_shift(voice, rng, flite_shift):
    """sox effects that shift a clip's pitch and formants, for voice: festival's extra
    voices always, flite's (not the held-out voice) half the time when flite_shift is a
    (lo, hi) range of cents; no draw from rng otherwise, so shards stay as they were."""
    if voice.startswith("festival:") and voice.endswith(":f0"):
        return ["pitch", "%d" % rng.randint(-400, 300)]
    if flite_shift and voice.startswith("flite:") and voice not in HELDOUT and \
            rng.random() < 0.5:
        return ["pitch", "%d" % rng.randint(*flite_shift)]
    return []


def build_shard(sentences, pool, rng, n, max_sec, flite_shift=None):
    names = [v for v, _ in pool]
    weights = [w for _, w in pool]
    jobs = []
    for _ in range(n):
        jobs.append((rng.choices(names, weights)[0], rng.choice(sentences)))
    fest_wavs = {}
    for fv in sorted({v for v, _ in jobs if v.startswith("festival:")}):
        idx = [i for i, (v, _) in enumerate(jobs) if v == fv]
        fest_wavs.update(zip(idx, festival_batch([jobs[i][1] for i in idx], fv.split(":")[1])))
    audios, texts, voices = [], [], []
    for i, (voice, text) in enumerate(jobs):
        raw = fest_wavs[i] if i in fest_wavs else synth_raw(voice, text, rng)
        if len(raw) < 100:
            continue
        try:
            eff = random_effects(rng)
            eff[:0] = pitch_shift(voice, rng, flite_shift)
            a = sox_process(raw, eff)
        except RuntimeError:
            continue
        a = trim(a)
        if len(a) < 0.3 * SR or len(a) > max_sec * SR:
            continue
        audios.append(np.clip(np.round(a * 32767), -32768, 32767).astype(np.int16))
        texts.append(text)
        voices.append(voice)
    offsets = np.zeros(len(audios) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(a) for a in audios])
    return dict(audio=np.concatenate(audios) if audios else np.zeros(0, np.int16),
                offsets=offsets, text=np.array(texts), voice=np.array(voices))


def load_shard(path):
    z = np.load(path)
    audio = z["audio"] if "audio" in z.files else np.fromfile(path[:-4] + ".pcm", dtype="<i2")
    return {"audio": audio, "offsets": z["offsets"], "text": list(z["text"]),
            "voice": list(z["voice"])}


def augment(a, rng):
    """Training-time augmentation on float32 16 kHz audio (numpy RandomState rng)."""
    a = a.astype(np.float32)
    if rng.rand() < 0.6:
        snr = rng.uniform(10, 40)
        p = float((a ** 2).mean()) + 1e-10
        kind = rng.rand()
        noise = rng.randn(len(a)).astype(np.float32)
        if kind < 0.4:      # pink-ish: integrate white noise a little
            noise = np.cumsum(noise) * 0.05
            noise -= np.convolve(noise, np.ones(200) / 200, mode="same")
        noise *= np.sqrt(p / (float((noise ** 2).mean()) + 1e-10) / 10 ** (snr / 10))
        a = a + noise
    a = a * 10 ** (rng.uniform(-10, 6) / 20)
    peak = np.abs(a).max() + 1e-9
    if peak > 0.99:
        a = a * (0.99 / peak)
    return a


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--split", default="train")
    b.add_argument("--voices", default="train", choices=["train", "heldout", "extra"])
    b.add_argument("--out", required=True)
    b.add_argument("--first", type=int, default=0)
    b.add_argument("--count", type=int, default=1)
    b.add_argument("--per-shard", type=int, default=500)
    b.add_argument("--seed", type=int, default=1234)
    b.add_argument("--max-sec", type=float, default=9.5)
    s = sub.add_parser("say")
    s.add_argument("text")
    s.add_argument("--voice", default="espeak:en-us")
    s.add_argument("--wav", required=True)
    s.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.cmd == "say":
        rng = random.Random(args.seed)
        raw = festival_batch([args.text], args.voice.split(":")[1])[0] \
            if args.voice.startswith("festival:") else \
            synth_raw(args.voice, args.text, rng)
        a = trim(sox_process(raw, ["rate", str(SR), "norm", "-3"]))
        with wave.open(args.wav, "wb") as w:
            w.setnchannels(1); w.setsampwidth(2); w.setframerate(SR)
            w.writeframes((a * 32767).astype("<i2").tobytes())
        return
    sentences = load_split(args.split)
    pool = voice_pool(args.voices)
    os.makedirs(args.out, exist_ok=True)
    for k in range(args.first, args.first + args.count):
        path = os.path.join(args.out, "shard-%05d.npz" % k)
        if os.path.exists(path):
            continue
        rng = random.Random("%d/%s/%s/%d" % (args.seed, args.split, args.voices, k))
        shard = build_shard(sentences, pool, rng, args.per_shard, args.max_sec,
                            FLITE_SHIFT if args.split.startswith("train") else None)
        # audio as raw int16 (memory-mapped by train.py), metadata in the .npz (written last)
        pcm = path[:-4] + ".pcm"
        shard["audio"].astype("<i2").tofile(pcm + ".tmp")
        os.replace(pcm + ".tmp", pcm)
        meta = {k: v for k, v in shard.items() if k != "audio"}
        tmp = path + ".tmp.npz"
        np.savez(tmp, **meta)
        os.replace(tmp, path)
        dur = shard["offsets"][-1] / SR / 3600
        print("%s: %d clips, %.2f h" % (path, len(shard["text"]), dur), flush=True)


if __name__ == "__main__":
    main()
