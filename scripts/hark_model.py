"""The Whisper architecture in PyTorch, as hark's C engine implements it.

One module shared by the reference-value scripts and the training scripts, so
the model that is trained is, by construction, the model the engine runs.
It also holds the log-mel front end, the Slaney filterbank, the GPT-2
byte<->unicode map and the two exporters (Hugging Face directory, whisper.cpp
ggml .bin).  Only Debian's python3-torch and python3-numpy are needed.
"""
import json
import math
import os
import struct
import sys
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

# Debian's torch 1.13 oneDNN convolution produced infinite gradients on CPU.
torch.backends.mkldnn.enabled = False

SAMPLE_RATE = 16000
N_FFT = 400
HOP = 160


@dataclass
class Dims:
    n_mels: int
    n_audio_ctx: int
    n_audio_state: int
    n_audio_head: int
    n_audio_layer: int
    n_vocab: int
    n_text_ctx: int
    n_text_state: int
    n_text_head: int
    n_text_layer: int


# ---------------------------------------------------------------- front end

def hz_to_mel(f):
    """Slaney mel scale (librosa htk=False)."""
    f = np.asarray(f, dtype=np.float64)
    f_sp = 200.0 / 3
    mels = f / f_sp
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = math.log(6.4) / 27.0
    return np.where(f >= min_log_hz,
                    min_log_mel + np.log(np.maximum(f, 1e-12) / min_log_hz) / logstep, mels)


def mel_to_hz(m):
    m = np.asarray(m, dtype=np.float64)
    f_sp = 200.0 / 3
    freqs = f_sp * m
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = math.log(6.4) / 27.0
    return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), freqs)


def mel_filters(n_mels, sr=SAMPLE_RATE, n_fft=N_FFT):
    """librosa.filters.mel(sr, n_fft, n_mels) with norm='slaney', as float32."""
    n_bins = n_fft // 2 + 1
    fftfreqs = np.linspace(0, sr / 2, n_bins)
    mel_f = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(sr / 2), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = mel_f[:, None] - fftfreqs[None, :]
    weights = np.zeros((n_mels, n_bins))
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    enorm = 2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels])
    weights *= enorm[:, None]
    return weights.astype(np.float32)


_FILTERBANKS = {}


def mel_filterbank(n_mels):
    """mel_filters(n_mels) as a tensor, built once per size (shared: do not modify)."""
    if n_mels not in _FILTERBANKS:
        _FILTERBANKS[n_mels] = torch.from_numpy(mel_filters(n_mels))
    return _FILTERBANKS[n_mels]


def log_mel_spectrogram(audio, n_mels=80, padding=0, filters=None):
    """openai/whisper's log_mel_spectrogram: float32 [n_mels, frames], or [B, n_mels, frames]
    for a batch of equal-length rows [B, samples] (a tensor stays on its device), each row
    clamped to its own max - 8.

    filters: another [n_mels, 201] filterbank (training's vocal-tract warp), or [B, n_mels,
    201], one per row."""
    if not torch.is_tensor(audio):
        audio = torch.as_tensor(np.asarray(audio, dtype=np.float32))
    if padding > 0:
        audio = F.pad(audio, (0, padding))
    window = torch.hann_window(N_FFT, device=audio.device)
    stft = torch.stft(audio, N_FFT, HOP, window=window, return_complex=True)
    magnitudes = stft[..., :-1].abs() ** 2
    if filters is None:
        filters = mel_filterbank(n_mels).to(audio.device)
    mel_spec = filters @ magnitudes
    log_spec = torch.clamp(mel_spec, min=1e-10).log10()
    log_spec = torch.maximum(log_spec, log_spec.amax(dim=(-2, -1), keepdim=True) - 8.0)
    return (log_spec + 4.0) / 4.0


# ---------------------------------------------------------------- model

class LayerNorm(nn.LayerNorm):
    def forward(self, x):
        return super().forward(x.float()).type(x.dtype)


class Linear(nn.Linear):
    def forward(self, x):
        return F.linear(x, self.weight.to(x.dtype),
                        None if self.bias is None else self.bias.to(x.dtype))


class Conv1d(nn.Conv1d):
    def _conv_forward(self, x, weight, bias):
        return super()._conv_forward(x, weight.to(x.dtype),
                                     None if bias is None else bias.to(x.dtype))


def sinusoids(length, channels, max_timescale=10000):
    assert channels % 2 == 0
    log_timescale_increment = np.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2))
    scaled_time = torch.arange(length)[:, None] * inv_timescales[None, :]
    return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)


class MultiHeadAttention(nn.Module):
    def __init__(self, n_state, n_head):
        super().__init__()
        self.n_head = n_head
        self.query = Linear(n_state, n_state)
        self.key = Linear(n_state, n_state, bias=False)
        self.value = Linear(n_state, n_state)
        self.out = Linear(n_state, n_state)

    def forward(self, x, xa=None, mask=None, kv_cache=None, key_padding_mask=None):
        q = self.query(x)
        if kv_cache is None or xa is None or self.key not in kv_cache:
            k = self.key(x if xa is None else xa)
            v = self.value(x if xa is None else xa)
        else:
            k = kv_cache[self.key]
            v = kv_cache[self.value]
        if kv_cache is not None and xa is None:
            # self-attention cache: append this step's keys and values
            if self.key in kv_cache:
                k = torch.cat([kv_cache[self.key], k], dim=1)
                v = torch.cat([kv_cache[self.value], v], dim=1)
            kv_cache[self.key], kv_cache[self.value] = k, v
        elif kv_cache is not None:
            kv_cache[self.key], kv_cache[self.value] = k, v
        wv, qk = self.qkv_attention(q, k, v, mask, key_padding_mask)
        return self.out(wv), qk

    def qkv_attention(self, q, k, v, mask=None, key_padding_mask=None):
        n_batch, n_ctx, n_state = q.shape
        scale = (n_state // self.n_head) ** -0.25
        q = q.view(*q.shape[:2], self.n_head, -1).permute(0, 2, 1, 3) * scale
        k = k.view(*k.shape[:2], self.n_head, -1).permute(0, 2, 3, 1) * scale
        v = v.view(*v.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
        qk = q @ k
        if mask is not None:
            n_past = k.shape[-1] - n_ctx
            qk = qk + mask[n_past:n_past + n_ctx, :k.shape[-1]]
        if key_padding_mask is not None:
            qk = qk.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
        qk = qk.float()
        w = F.softmax(qk, dim=-1).to(q.dtype)
        return (w @ v).permute(0, 2, 1, 3).flatten(start_dim=2), qk.detach()


class ResidualAttentionBlock(nn.Module):
    def __init__(self, n_state, n_head, cross_attention=False):
        super().__init__()
        self.attn = MultiHeadAttention(n_state, n_head)
        self.attn_ln = LayerNorm(n_state)
        self.cross_attn = MultiHeadAttention(n_state, n_head) if cross_attention else None
        self.cross_attn_ln = LayerNorm(n_state) if cross_attention else None
        n_mlp = n_state * 4
        self.mlp = nn.Sequential(Linear(n_state, n_mlp), nn.GELU(), Linear(n_mlp, n_state))
        self.mlp_ln = LayerNorm(n_state)

    # residual dropout while training (train.py --dropout); 0 at inference and export
    dropout = 0.0

    def forward(self, x, xa=None, mask=None, kv_cache=None, self_cache=None):
        x = x + self.drop(self.attn(self.attn_ln(x), mask=mask, kv_cache=self_cache)[0])
        if self.cross_attn is not None:
            x = x + self.drop(self.cross_attn(self.cross_attn_ln(x), xa, kv_cache=kv_cache)[0])
        x = x + self.drop(self.mlp(self.mlp_ln(x)))
        return x

    def drop(self, y):
        return F.dropout(y, self.dropout, self.training) if self.dropout else y


def set_dropout(model, p):
    """Residual dropout p in every block of model (training only: F.dropout is the
    identity in eval mode)."""
    for m in model.modules():
        if isinstance(m, ResidualAttentionBlock):
            m.dropout = p


class AudioEncoder(nn.Module):
    def __init__(self, n_mels, n_ctx, n_state, n_head, n_layer):
        super().__init__()
        self.conv1 = Conv1d(n_mels, n_state, kernel_size=3, padding=1)
        self.conv2 = Conv1d(n_state, n_state, kernel_size=3, stride=2, padding=1)
        self.register_buffer("positional_embedding", sinusoids(n_ctx, n_state))
        self.blocks = nn.ModuleList([ResidualAttentionBlock(n_state, n_head)
                                     for _ in range(n_layer)])
        self.ln_post = LayerNorm(n_state)

    def forward(self, x):
        """x: [batch, n_mels, 2 * n_ctx] -> [batch, n_ctx, n_state]"""
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.conv2(x))
        x = x.permute(0, 2, 1)
        x = (x + self.positional_embedding[:x.shape[1]]).to(x.dtype)
        for block in self.blocks:
            x = block(x)
        return self.ln_post(x)


class TextDecoder(nn.Module):
    def __init__(self, n_vocab, n_ctx, n_state, n_head, n_layer):
        super().__init__()
        self.token_embedding = nn.Embedding(n_vocab, n_state)
        self.positional_embedding = nn.Parameter(torch.empty(n_ctx, n_state))
        self.blocks = nn.ModuleList([ResidualAttentionBlock(n_state, n_head, cross_attention=True)
                                     for _ in range(n_layer)])
        self.ln = LayerNorm(n_state)
        mask = torch.empty(n_ctx, n_ctx).fill_(-np.inf).triu_(1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x, xa, kv_cache=None):
        """x: [batch, n_tokens] token ids; xa: encoder output.

        kv_cache: None, or a dict {"offset": int, "blocks": [({}, {}) per block]}
        holding self-attention and cross-attention K/V across incremental calls.
        """
        offset = 0 if kv_cache is None else kv_cache["offset"]
        x = self.token_embedding(x) + self.positional_embedding[offset:offset + x.shape[-1]]
        x = x.to(xa.dtype)
        for i, block in enumerate(self.blocks):
            self_c, cross_c = (None, None) if kv_cache is None else kv_cache["blocks"][i]
            x = block(x, xa, mask=self.mask, kv_cache=cross_c, self_cache=self_c)
        x = self.ln(x)
        if kv_cache is not None:
            kv_cache["offset"] = offset + x.shape[1] - 0
        return (x @ torch.transpose(self.token_embedding.weight.to(x.dtype), 0, 1)).float()

    def new_cache(self):
        return {"offset": 0, "blocks": [({}, {}) for _ in self.blocks]}


class Whisper(nn.Module):
    def __init__(self, dims: Dims):
        super().__init__()
        self.dims = dims
        self.encoder = AudioEncoder(dims.n_mels, dims.n_audio_ctx, dims.n_audio_state,
                                    dims.n_audio_head, dims.n_audio_layer)
        self.decoder = TextDecoder(dims.n_vocab, dims.n_text_ctx, dims.n_text_state,
                                   dims.n_text_head, dims.n_text_layer)

    def forward(self, mel, tokens):
        return self.decoder(tokens, self.encoder(mel))


# ---------------------------------------------------------------- tokens

def bytes_to_unicode():
    """GPT-2's reversible map from bytes to printable unicode characters."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


def special_token_names(n_langs, n_timestamps, lang_codes=("en",)):
    """Whisper's special tokens after eot, in the reference order."""
    names = ["<|endoftext|>", "<|startoftranscript|>"]
    names += ["<|%s|>" % lang_codes[i] if i < len(lang_codes) else "<|lang%d|>" % i
              for i in range(n_langs)]
    names += ["<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>",
              "<|nospeech|>", "<|notimestamps|>"]
    names += ["<|%.2f|>" % (i * 0.02) for i in range(n_timestamps)]
    return names


class Specials:
    """Ids of Whisper's special tokens for a vocabulary of n_text text tokens."""

    def __init__(self, n_text, n_langs, n_timestamps):
        self.eot = n_text
        self.sot = n_text + 1
        self.first_lang = n_text + 2
        self.n_langs = n_langs
        base = self.first_lang + n_langs
        (self.translate, self.transcribe, self.startoflm, self.startofprev,
         self.nospeech, self.notimestamps) = range(base, base + 6)
        self.timestamp_begin = base + 6
        self.n_vocab = self.timestamp_begin + n_timestamps


# ---------------------------------------------------------------- exporters

HF_LAYER_NAMES = [
    ("attn.query", "self_attn.q_proj"), ("attn.key", "self_attn.k_proj"),
    ("attn.value", "self_attn.v_proj"), ("attn.out", "self_attn.out_proj"),
    ("attn_ln", "self_attn_layer_norm"),
    ("cross_attn.query", "encoder_attn.q_proj"), ("cross_attn.key", "encoder_attn.k_proj"),
    ("cross_attn.value", "encoder_attn.v_proj"), ("cross_attn.out", "encoder_attn.out_proj"),
    ("cross_attn_ln", "encoder_attn_layer_norm"),
    ("mlp.0", "fc1"), ("mlp.2", "fc2"), ("mlp_ln", "final_layer_norm"),
]


def openai_to_hf_name(name):
    """openai/whisper parameter name -> transformers WhisperForConditionalGeneration name."""
    fixed = {
        "encoder.positional_embedding": "model.encoder.embed_positions.weight",
        "decoder.positional_embedding": "model.decoder.embed_positions.weight",
        "decoder.token_embedding.weight": "model.decoder.embed_tokens.weight",
    }
    if name in fixed:
        return fixed[name]
    name = name.replace("encoder.ln_post", "encoder.layer_norm").replace("decoder.ln.", "decoder.layer_norm.")
    name = name.replace(".blocks.", ".layers.")
    for a, b in HF_LAYER_NAMES:
        name = name.replace("." + a + ".", "." + b + ".")
    return "model." + name


def model_state(model):
    """All tensors of the model by openai name, the encoder positions included."""
    sd = {k: v.detach().float().contiguous() for k, v in model.state_dict().items()}
    sd.pop("decoder.mask", None)
    return sd


SAFETENSORS_DTYPES = {torch.float16: "F16", torch.float32: "F32", torch.bfloat16: "BF16"}


def load_weights_file(path, prog):
    """torch.load of tensors and plain containers only (weights_only: a pickle is a
    program, and this runs none of it); a file it cannot read ends the program with
    one line naming it."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # zip, pickle and I/O errors alike
        sys.exit("%s: %s: not a PyTorch weights file (%s)" % (prog, path, str(e).split("\n")[0]))


def write_safetensors(path, tensors, dtype=torch.float16):
    """tensors: {name: float tensor}, all written as dtype (None: each in its own dtype);
    1-D tensors and positions stay F32 only if dtype is F32."""
    names = sorted(tensors)
    header, blobs, offset = {}, [], 0
    for name in names:
        t = (tensors[name] if dtype is None else tensors[name].to(dtype)).contiguous()
        raw = t.numpy().tobytes() if t.dtype != torch.bfloat16 else \
            t.view(torch.int16).numpy().tobytes()
        code = SAFETENSORS_DTYPES[t.dtype]
        header[name] = {"dtype": code, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    header["__metadata__"] = {"format": "pt"}
    hjson = json.dumps(header, separators=(",", ":")).encode()
    hjson += b" " * ((8 - len(hjson) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for b in blobs:
            f.write(b)


def export_hf(model, outdir, text_tokens, merges, specials, dtype=torch.float16,
              lang_codes=("en",), alignment_heads=None, multilingual=False):
    """Write a Hugging Face Whisper directory hark (and transformers) can load.

    text_tokens: list of bytes, index = id; merges: list of (bytes, bytes).
    """
    d = model.dims
    os.makedirs(outdir, exist_ok=True)
    tensors = {openai_to_hf_name(k): v for k, v in model_state(model).items()}
    write_safetensors(os.path.join(outdir, "model.safetensors"), tensors, dtype)
    b2u = bytes_to_unicode()
    enc = lambda b: "".join(b2u[x] for x in b)
    vocab = {enc(t): i for i, t in enumerate(text_tokens)}
    n_ts = d.n_vocab - specials.timestamp_begin
    names = special_token_names(specials.n_langs, n_ts, lang_codes)
    added = {name: specials.eot + i for i, name in enumerate(names)}
    with open(os.path.join(outdir, "vocab.json"), "w") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(outdir, "merges.txt"), "w") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write(enc(a) + " " + enc(b) + "\n")
    with open(os.path.join(outdir, "added_tokens.json"), "w") as f:
        json.dump(added, f, ensure_ascii=False, indent=0)
    suppress = [] if not hasattr(specials, "suppress") else specials.suppress
    config = {
        "architectures": ["WhisperForConditionalGeneration"], "model_type": "whisper",
        "vocab_size": d.n_vocab, "num_mel_bins": d.n_mels, "d_model": d.n_audio_state,
        "encoder_layers": d.n_audio_layer, "encoder_attention_heads": d.n_audio_head,
        "decoder_layers": d.n_text_layer, "decoder_attention_heads": d.n_text_head,
        "encoder_ffn_dim": 4 * d.n_audio_state, "decoder_ffn_dim": 4 * d.n_text_state,
        "max_source_positions": d.n_audio_ctx, "max_target_positions": d.n_text_ctx,
        "activation_function": "gelu", "scale_embedding": False, "tie_word_embeddings": True,
        "pad_token_id": specials.eot, "bos_token_id": specials.eot, "eos_token_id": specials.eot,
        "decoder_start_token_id": specials.sot, "begin_suppress_tokens": [],
        "suppress_tokens": suppress, "torch_dtype": {torch.float16: "float16",
                                                      torch.float32: "float32",
                                                      torch.bfloat16: "bfloat16"}[dtype],
    }
    with open(os.path.join(outdir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    if alignment_heads is None:
        alignment_heads = [[l, h] for l in range(d.n_text_layer // 2, d.n_text_layer)
                           for h in range(d.n_text_head)]
    gen = {
        "alignment_heads": alignment_heads,
        "lang_to_id": {"<|%s|>" % c: specials.first_lang + i for i, c in enumerate(lang_codes)},
        "task_to_id": {"translate": specials.translate, "transcribe": specials.transcribe},
        "no_timestamps_token_id": specials.notimestamps,
        "prev_sot_token_id": specials.startofprev,
        "decoder_start_token_id": specials.sot, "eos_token_id": specials.eot,
        "pad_token_id": specials.eot, "bos_token_id": specials.eot,
        "max_initial_timestamp_index": 50, "max_length": d.n_text_ctx,
        "is_multilingual": multilingual, "suppress_tokens": suppress,
        "begin_suppress_tokens": [],
    }
    with open(os.path.join(outdir, "generation_config.json"), "w") as f:
        json.dump(gen, f, indent=2)


def export_ggml(model, path, text_tokens, specials, ftype=1):
    """Write a whisper.cpp ggml .bin: ftype 0 = f32, 1 = f16 (converter's rules)."""
    d = model.dims
    with open(path, "wb") as f:
        f.write(struct.pack("<I", 0x67676D6C))
        f.write(struct.pack("<11i", d.n_vocab, d.n_audio_ctx, d.n_audio_state, d.n_audio_head,
                            d.n_audio_layer, d.n_text_ctx, d.n_text_state, d.n_text_head,
                            d.n_text_layer, d.n_mels, ftype))
        filters = mel_filters(d.n_mels)
        f.write(struct.pack("<2i", *filters.shape))
        f.write(filters.tobytes())
        stored = list(text_tokens) + [b"<|endoftext|>"]
        f.write(struct.pack("<i", len(stored)))
        for t in stored:
            f.write(struct.pack("<I", len(t)))
            f.write(t)
        for name, t in model_state(model).items():
            data = t.numpy()
            if name in ("encoder.conv1.bias", "encoder.conv2.bias"):
                data = data.reshape(-1, 1)
            n_dims = data.ndim
            keep_f32 = ftype == 0 or n_dims < 2 or name in (
                "encoder.conv1.bias", "encoder.conv2.bias",
                "encoder.positional_embedding", "decoder.positional_embedding")
            data = data.astype(np.float32 if keep_f32 else np.float16)
            ttype = 0 if keep_f32 else 1
            nb = name.encode()
            f.write(struct.pack("<3i", n_dims, len(nb), ttype))
            for dim in reversed(data.shape):
                f.write(struct.pack("<i", dim))
            f.write(nb)
            f.write(data.tobytes())


# ---------------------------------------------------------------- decoding

def suppress_greedy(logits, step, specials, suppress, blank_id, timestamps):
    """openai's greedy suppression on logits [..., vocab], in place: the suppress
    list, timestamps when they are off, and blank / eot at the first step."""
    logits[..., suppress] = -np.inf
    if not timestamps:
        logits[..., specials.timestamp_begin:] = -np.inf
    if step == 0:
        logits[..., [blank_id, specials.eot]] = -np.inf
    return logits


def greedy_window(model, mel_window, specials, suppress, blank_id, sample_len,
                  timestamps=False, margins=None):
    """Greedy decode one window from [sot] (+ notimestamps), openai rules.

    Returns (tokens, first_step_logits).  With timestamps off the timestamp
    tokens are suppressed too (whisper.cpp's behaviour, which hark follows).
    """
    with torch.no_grad():
        xa = model.encoder(mel_window[None])
        seq = [specials.sot] + ([] if timestamps else [specials.notimestamps])
        cache = model.decoder.new_cache()
        logits = model.decoder(torch.tensor([seq]), xa, cache)[0, -1]
        first = logits.clone()
        out = []
        for step in range(sample_len):
            l = suppress_greedy(logits.clone(), step, specials, suppress, blank_id, timestamps)
            tok = int(torch.argmax(l))
            if margins is not None:  # how far the choice is from a tie
                top = torch.topk(l, 2).values
                margins.append(float(top[0] - top[1]))
            if tok == specials.eot:
                break
            out.append(tok)
            logits = model.decoder(torch.tensor([[tok]]), xa, cache)[0, -1]
        return out, first


def bpe_encode_piece(token_ids, piece):
    """tiktoken-style BPE of one pre-token: merge the adjacent pair whose merged
    bytes have the lowest rank (token id) until none is in the vocabulary."""
    parts = [bytes([b]) for b in piece]
    while len(parts) > 1:
        ranks = [(token_ids.get(a + b, None), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
        ranks = [r for r in ranks if r[0] is not None]
        if not ranks:
            break
        _, i = min(ranks)
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
    return [token_ids[p] for p in parts]


def openai_suppress_tokens(text_tokens):
    """openai/whisper's non_speech_tokens() for a byte-level vocabulary (every
    symbol here is a single GPT-2 pre-token, so BPE of the whole string is exact)."""
    ids = {t: i for i, t in enumerate(text_tokens)}
    enc = lambda s: bpe_encode_piece(ids, s.encode("utf-8"))
    symbols = list('"#()*+/:;<=>@[\\]^_`{|}~「」『』')
    symbols += "<< >> <<< >>> -- --- -( -[ (' (\" (( )) ((( ))) [[ ]] {{ }} ♪♪ ♪♪♪".split()
    misc = "♩♪♫♬♭♮♯"
    result = {enc(" -")[0], enc(" '")[0]}
    for symbol in symbols + list(misc):
        for toks in (enc(symbol), enc(" " + symbol)):
            if len(toks) == 1 or symbol in misc:
                result.add(toks[0])
    return sorted(result)


# ---------------------------------------------------------------- long-form reference

def timestamp_rules(l, sampled, sp, max_initial=50):
    """openai/whisper's ApplyTimestampRules for one sequence (in place)."""
    tb = sp.timestamp_begin
    last = len(sampled) >= 1 and sampled[-1] >= tb
    penult = len(sampled) < 2 or sampled[-2] >= tb
    if last:
        if penult:
            l[tb:] = -np.inf
        else:
            l[:sp.eot] = -np.inf
    ts = [t for t in sampled if t >= tb]
    if ts:
        l[tb:ts[-1] if (last and not penult) else ts[-1] + 1] = -np.inf
    if not sampled:
        l[:tb] = -np.inf
        l[tb + max_initial + 1:] = -np.inf
    lp = F.log_softmax(l.float(), dim=-1)
    if torch.logsumexp(lp[tb:], dim=-1) > lp[:tb].max():
        l[:tb] = -np.inf


def apply_filters(l, sampled, sp, suppress, blank, timestamps):
    """hark's logit filters in openai's order (SuppressBlank, SuppressTokens,
    timestamp rules); timestamps are suppressed when they are off (in place)."""
    if not sampled:
        l[[blank, sp.eot]] = -np.inf
    l[suppress] = -np.inf
    if timestamps:
        timestamp_rules(l, sampled, sp)
    else:
        l[sp.timestamp_begin:] = -np.inf


def decode_greedy(model, xa, sp, suppress, blank, sample_len, timestamps, prompt):
    """One window, greedy, with hark's filters (openai's, plus every special but
    eot and timestamps suppressed); returns the sampled tokens."""
    n_ctx = model.dims.n_text_ctx
    initial = ([sp.startofprev] + prompt[-(n_ctx // 2 - 1):] if prompt else []) + [sp.sot]
    initial += [] if timestamps else [sp.notimestamps]
    with torch.no_grad():
        cache = model.decoder.new_cache()
        logits = model.decoder(torch.tensor([initial]), xa, cache)[0, -1]
        sampled = []
        for step in range(sample_len):
            l = logits.clone()
            apply_filters(l, sampled, sp, suppress, blank, timestamps)
            tok = int(torch.argmax(l))
            if tok == sp.eot:
                break
            sampled.append(tok)
            if len(initial) + len(sampled) > n_ctx:
                break
            logits = model.decoder(torch.tensor([[tok]]), xa, cache)[0, -1]
    return sampled


def transcribe_greedy(model, audio, sp, suppress, blank, text_of, initial_prompt=(),
                      prompt_keep=None, carry=False):
    """openai/whisper's transcribe() loop at temperature 0 with timestamps and
    the previous text as prompt (no fallback, no silence skipping), starting
    from the tokens of an initial prompt if given; segments
    whose text is blank are dropped (as hark does).  prompt_keep: pass only the last
    prompt_keep tokens of the previous text (0: none; None: as hark, the decoder's limit).
    carry: openai's carry_initial_prompt (the initial prompt, then the text after it cut
    to what fits beside it).  Returns [(start, end, tokens)]."""
    mel = log_mel_spectrogram(audio, model.dims.n_mels, padding=480000)
    window = 2 * model.dims.n_audio_ctx
    content, seek, all_tokens, segments = mel.shape[-1] - 3000, 0, list(initial_prompt), []
    tb = sp.timestamp_begin
    while seek < content:
        size = min(window, content - seek)
        with torch.no_grad():
            xa = model.encoder(mel[None, :, seek:seek + window])
        prompt = all_tokens if prompt_keep is None else \
            (all_tokens[-prompt_keep:] if prompt_keep else [])
        if carry:
            n0 = len(initial_prompt)
            remaining = model.dims.n_text_ctx // 2 - 1 - n0
            prompt = list(initial_prompt) + all_tokens[n0:][-remaining:]
        toks = decode_greedy(model, xa, sp, suppress, blank, model.dims.n_text_ctx // 2, True,
                             prompt)
        t0, current = seek * 0.01, []
        is_ts = [t >= tb for t in toks]
        single_end = is_ts[-2:] == [False, True]
        cuts = [i for i in range(1, len(toks)) if is_ts[i - 1] and is_ts[i]]
        if cuts:
            if single_end:
                cuts.append(len(toks))
            last = 0
            for cut in cuts:
                piece = toks[last:cut]
                current.append((t0 + (piece[0] - tb) * 0.02, t0 + (piece[-1] - tb) * 0.02, piece))
                last = cut
            seek += size if single_end else (toks[last - 1] - tb) * 2
        else:
            stamps = [t for t in toks if t >= tb]
            duration = size * 0.01
            if stamps and stamps[-1] != tb:
                duration = (stamps[-1] - tb) * 0.02
            current.append((t0, t0 + duration, toks))
            seek += size
        current = [c for c in current if c[0] != c[1] and text_of(c[2]).strip() != ""]
        segments += current
        all_tokens += [t for c in current for t in c[2]]
    return segments


def beam_decode(model, xa, sp, suppress, blank, sample_len, timestamps, beam_size, patience):
    """openai/whisper's BeamSearchDecoder (with hark's filters) on one window:
    returns (tokens, sum_logprob) of the sequence ranked first by sum / length."""
    initial = [sp.sot] + ([] if timestamps else [sp.notimestamps])
    n0, n_ctx = len(initial), model.dims.n_text_ctx
    max_candidates = round(beam_size * patience)
    tokens, sums, finished = [list(initial)] * beam_size, [0.0] * beam_size, {}
    with torch.no_grad():
        for step in range(sample_len):
            scores, order = {}, []
            for j, prefix in enumerate(tokens):
                l = model.decoder(torch.tensor([prefix]), xa)[0, -1].clone()
                apply_filters(l, prefix[n0:], sp, suppress, blank, timestamps)
                lp = F.log_softmax(l.float(), dim=-1)
                top = lp.topk(beam_size + 1)
                for v, t in zip(top.values.tolist(), top.indices.tolist()):
                    seq = tuple(prefix + [t])
                    if seq not in scores:
                        order.append(seq)
                    scores[seq] = sums[j] + v
            ranked = sorted(order, key=lambda q: scores[q], reverse=True)
            next_tokens, next_sums, newly = [], [], []
            for seq in ranked:
                if seq[-1] == sp.eot:
                    newly.append(seq)
                else:
                    next_tokens.append(list(seq))
                    next_sums.append(scores[seq])
                    if len(next_tokens) == beam_size:
                        break
            for seq in newly:
                if len(finished) >= max_candidates:
                    break
                finished[seq] = scores[seq]
            tokens, sums = next_tokens, next_sums
            if len(finished) >= max_candidates or any(len(t) > n_ctx for t in tokens):
                break
    for j in np.argsort(sums)[::-1]:
        if len(finished) >= beam_size:
            break
        finished[tuple(tokens[j] + [sp.eot])] = sums[j]
    best = max(finished, key=lambda q: finished[q] / (len(q) - n0 - 1))
    return list(best[n0:-1]), finished[best]
