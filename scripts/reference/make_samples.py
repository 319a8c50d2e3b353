#!/usr/bin/python3
"""Makes samples/ (example clips with transcripts, one long multi-sentence clip
with its sentence boundaries) and tests/golden/ (held-out clips for the WER
regression test), from held-out test sentences (training/corpus/test.txt) that training
never sees, in training voices and in the held-out voice (flite rms).

Deterministic: a fixed seed picks sentences, voices and rates.
Run: /usr/bin/python3 scripts/reference/make_samples.py
"""
import json
import os
import random
import sys
import wave

import numpy as np

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SCRIPTS, "train"))  # synth.py
import synth  # noqa: E402

ROOT = os.path.dirname(SCRIPTS)
SR = synth.SR
TRAIN_VOICES = ["espeak:en-us", "espeak:en-gb", "espeak:en-gb-scotland", "flite:kal16",
                "flite:awb", "flite:slt", "espeak:en-us+f3", "flite:kal"]
HELDOUT_VOICE = "flite:rms"


def speak(voice, text, rng):
    """16 kHz float audio of text, resampled by sox and normalised to -3 dB."""
    raw = synth.synth_raw(voice, text, rng)
    return synth.trim(synth.sox_process(raw, ["rate", str(SR), "norm", "-3"]))


def write_wav(path, a):
    pcm = np.clip(np.round(a * 32767), -32768, 32767).astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        w.writeframes(pcm.tobytes())


def write_pair(folder, name, audio, text):
    write_wav(os.path.join(folder, name + ".wav"), audio)
    with open(os.path.join(folder, name + ".txt"), "w") as f:
        f.write(text + "\n")


def long_clip(sentences, voice, rng):
    """Sentences with pauses; returns audio and [start, end, text] per sentence."""
    parts, marks, t = [], [], 0.0
    for s in sentences:
        pause = np.zeros(int(SR * rng.uniform(0.5, 0.9)), dtype=np.float32)
        a = speak(voice, s, rng)
        parts += [pause, a]
        t += len(pause) / SR
        marks.append([round(t, 2), round(t + len(a) / SR, 2), s])
        t += len(a) / SR
    parts.append(np.zeros(int(SR * 0.5), dtype=np.float32))
    return np.concatenate(parts), marks


def main():
    rng = random.Random(2026)
    corpus = os.path.join(ROOT, "training", "corpus", "test.txt")
    sentences = [s.strip() for s in open(corpus) if s.strip()]
    rng.shuffle(sentences)
    samples = os.path.join(ROOT, "samples")
    golden = os.path.join(ROOT, "tests", "golden")
    os.makedirs(samples, exist_ok=True)
    os.makedirs(golden, exist_ok=True)
    at = 0
    for i in range(10):  # 2-25 s: one to three sentences each
        voice = (TRAIN_VOICES + [HELDOUT_VOICE])[i % (len(TRAIN_VOICES) + 1)]
        k = 1 + i % 3
        text = " ".join(sentences[at:at + k])
        at += k
        audio = speak(voice, text, rng)
        while len(audio) < 2.5 * SR:  # at least 2 s: add a sentence
            text += " " + sentences[at]
            at += 1
            audio = speak(voice, text, rng)
        write_pair(samples, "sample%02d-%s" % (i + 1, voice.split(":")[1].replace("+", "-")),
                   audio, text)
    chosen = sentences[at:at + 16]
    at += 16
    audio, marks = long_clip(chosen, "espeak:en-us", rng)
    write_pair(samples, "long-espeak-en-us", audio, " ".join(chosen))
    with open(os.path.join(samples, "long-espeak-en-us.json"), "w") as f:
        json.dump({"sentences": [{"start": a, "end": b, "text": s} for a, b, s in marks]}, f,
                  indent=1)
    print("long clip: %.1f s" % (len(audio) / SR))
    for i in range(40):  # 30 in training voices, 10 in the held-out voice
        voice = HELDOUT_VOICE if i >= 30 else TRAIN_VOICES[i % len(TRAIN_VOICES)]
        text = sentences[at]
        at += 1
        tag = "heldout" if i >= 30 else "train"
        write_pair(golden, "g%02d-%s-%s" % (i + 1, tag, voice.split(":")[1].replace("+", "-")),
                   speak(voice, text, rng), text)


if __name__ == "__main__":
    main()
