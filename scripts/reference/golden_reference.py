#!/usr/bin/python3
"""Greedy tokens of the PyTorch reference (scripts/hark_model.py) for every
golden clip, with the weights of an exported Hugging Face model directory:
tests/golden/torch_greedy.json, which tests/test_golden_tokens.c compares with
hark's tokens (greedy, no timestamps, no prompt, one 2*n_audio_ctx window).
Also openai's beam search (5 beams, patience 1, with timestamps) on the first
window of every sample in samples/ and on each later window wholly inside it, and
without timestamps on the first:
tests/golden/torch_beam.json (tokens and summed log-probability), compared by the
same test.

Run after each export:  /usr/bin/python3 scripts/reference/golden_reference.py [MODEL_DIR]
"""
import glob
import json
import os
import struct
import sys
import wave

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
sys.path[:0] = [HERE, SCRIPTS]  # scripts/reference/ and scripts/ (hark_model)
import hark_model as hm  # noqa: E402

ROOT = os.path.dirname(SCRIPTS)


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    types = {"F32": np.float32, "F16": np.float16}
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        arr = np.frombuffer(data[a:b], dtype=types[t["dtype"]]).reshape(t["shape"])
        out[name] = torch.from_numpy(arr.astype(np.float32))
    return out


def load_model(model_dir):
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    dims = hm.Dims(n_mels=cfg["num_mel_bins"], n_audio_ctx=cfg["max_source_positions"],
                   n_audio_state=cfg["d_model"], n_audio_head=cfg["encoder_attention_heads"],
                   n_audio_layer=cfg["encoder_layers"], n_vocab=cfg["vocab_size"],
                   n_text_ctx=cfg["max_target_positions"], n_text_state=cfg["d_model"],
                   n_text_head=cfg["decoder_attention_heads"], n_text_layer=cfg["decoder_layers"])
    model = hm.Whisper(dims)
    tensors = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    state = {k: tensors[hm.openai_to_hf_name(k)] for k in model.state_dict() if k != "decoder.mask"}
    model.load_state_dict(state, strict=False)
    return model.eval(), cfg


def specials(model_dir, n_vocab):
    added = json.load(open(os.path.join(model_dir, "added_tokens.json")))
    eot = added["<|endoftext|>"]
    n_langs = added["<|translate|>"] - added["<|startoftranscript|>"] - 1
    sp = hm.Specials(eot, n_langs, n_vocab - added["<|notimestamps|>"] - 1)
    assert sp.notimestamps == added["<|notimestamps|>"]
    return sp


def read_wav(path):
    with wave.open(path) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1
        return np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768.0


def main():
    model_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "models", "hark-en-tiny")
    model, cfg = load_model(model_dir)
    sp = specials(model_dir, cfg["vocab_size"])
    gen = json.load(open(os.path.join(model_dir, "generation_config.json")))
    vocab = json.load(open(os.path.join(model_dir, "vocab.json")))
    suppress = gen["suppress_tokens"] + list(range(sp.sot, sp.timestamp_begin))
    blank = vocab["Ġ"]  # GPT-2's printable form of the byte 0x20
    window = 2 * model.dims.n_audio_ctx
    out, margins = {}, []
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "golden", "*.wav"))):
        mel = hm.log_mel_spectrogram(read_wav(path), model.dims.n_mels, padding=480000)
        toks, _ = hm.greedy_window(model, mel[:, :window], sp, suppress, blank,
                                   model.dims.n_text_ctx // 2, margins=margins)
        out[os.path.basename(path)] = toks
    dest = os.path.join(ROOT, "tests", "golden", "torch_greedy.json")
    with open(dest, "w") as f:
        json.dump({"model": os.path.relpath(model_dir, ROOT), "tokens": out}, f, indent=0)
    print("%d clips; smallest top-2 logit margin of a greedy step: %.4f" % (len(out), min(margins)))
    beams = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "samples", "*.wav"))):
        audio = read_wav(path)
        mel = hm.log_mel_spectrogram(audio, model.dims.n_mels, padding=480000)
        # the first window, and every later one that lies wholly inside the audio
        # (a window past the end is padded differently by hark's transcription loop);
        # the first also without timestamps
        seeks = [0] + list(range(window, len(audio) // 160 - window + 1, window))
        for seek, timestamps in [(s, True) for s in seeks] + [(0, False)]:
            with torch.no_grad():
                xa = model.encoder(mel[None, :, seek:seek + window])
            toks, total = hm.beam_decode(model, xa, sp, suppress, blank,
                                         model.dims.n_text_ctx // 2, timestamps, 5, 1.0)
            name = os.path.basename(path) + ("@%d" % seek if seek else "") + \
                ("" if timestamps else "@0 without timestamps")
            beams[name] = {"seek": seek, "timestamps": timestamps, "tokens": toks,
                           "sum_logprob": total}
    dest = os.path.join(ROOT, "tests", "golden", "torch_beam.json")
    with open(dest, "w") as f:
        json.dump({"model": os.path.relpath(model_dir, ROOT), "windows": beams}, f, indent=0)
    print("%d sample windows decoded with 5 beams" % len(beams))


if __name__ == "__main__":
    main()
