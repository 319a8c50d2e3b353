#!/usr/bin/python3
"""Reshape a training checkpoint: drop or insert residual blocks, widen the vocabulary.

- --encoder-keep 0,1,3,4: keep only these encoder blocks (a pre-LN block that adds
  little to its residual stream can go; measure first: at step 79000 dropping blocks 2
  and 5 of 6 raised the validation loss from 0.427 to 0.444 nats, any other one 2x+).
- --encoder-after 1,3 / --decoder-after 2: insert a block after these (old) blocks, its
  attention and MLP output projections zeroed, so it starts as the identity.
- --merges tokenizer/merges-3000.txt: a BPE that extends the checkpoint's (its first
  merges are the old ones, as bpe.py's greedy training makes them): old text tokens keep
  their ids, the special and timestamp tokens move up, and each new token's embedding
  starts as the mean of its two parts' (the logits tie to it).

What is left unchanged is checked: with the same encoder blocks kept, the reshaped model
gives the old logits, mapped to the new ids, for any old-vocabulary input. The weights
are read from models/train-ckpt/model.fp16.pt (what export.py exports, averaged or not);
the optimiser starts afresh (train.py's fp16 resume: lr re-warmed over 200 steps), so
$HARK_WORK/opt.pt and the snapshots of the old shape are moved aside.

Writes models/train-ckpt/ and $HARK_WORK/{model.fp16.pt,state.json} (training stopped).
Usage: scripts/reshape_ckpt.py --encoder-keep 0,1,3,4 --decoder-after 2 \\
           --merges tokenizer/merges-3000.txt
"""
import argparse
import json
import os

import torch

import train as T
import hark_model as hm
from bpe import Tokenizer, checkpoint_merges


def ints(text):
    return [int(x) for x in text.split(",")] if text else []


def block_plan(n_old, keep, after):
    """new index -> old index (None: a new identity block)."""
    plan = []
    for i in range(n_old):
        if keep is None or i in keep:
            plan.append(i)
        if i in after:
            plan.append(None)
    return plan


def move_blocks(sd, new_sd, prefix, plan):
    """Copy the kept blocks' weights to their new places; new blocks start as the identity."""
    for j, i in enumerate(plan):
        mine = [k for k in new_sd if k.startswith("%s.blocks.%d." % (prefix, j))]
        for k in mine:
            if i is None:
                is_out = any(s in k for s in (".attn.out.", ".cross_attn.out.", ".mlp.2."))
                new_sd[k] = torch.zeros_like(new_sd[k]) if is_out else new_sd[k]
            else:
                new_sd[k] = sd[k.replace(".blocks.%d." % j, ".blocks.%d." % i, 1)]


def id_map(n_old_text, n_new_text, n_vocab_old):
    """Old token id -> new id: text tokens stay, specials and timestamps move up."""
    shift = n_new_text - n_old_text
    return torch.tensor([i if i < n_old_text else i + shift for i in range(n_vocab_old)])


def widen_embedding(old_emb, ids, new_tok, n_old_text, n_vocab):
    emb = torch.zeros(n_vocab, old_emb.shape[1])
    emb[ids] = old_emb
    for t in range(n_old_text, len(new_tok)):
        a, b = new_tok.merges[t - 256]
        emb[t] = (emb[new_tok.ids[a]] + emb[new_tok.ids[b]]) / 2
    return emb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--encoder-keep", default="", help="encoder blocks to keep (default all)")
    ap.add_argument("--encoder-after", default="", help="insert an encoder block after these")
    ap.add_argument("--decoder-after", default="", help="insert a decoder block after these")
    ap.add_argument("--merges", default="", help="a BPE merges file extending the current one")
    ap.add_argument("--work", default=T.WORK)
    ap.add_argument("--ckpt", default=os.path.join(T.ROOT, "models", "train-ckpt"))
    a = ap.parse_args()
    state = json.load(open(os.path.join(a.ckpt, "state.json")))
    w = torch.load(os.path.join(a.ckpt, "model.fp16.pt"), map_location="cpu")
    old_dims = hm.Dims(**state["dims"])
    old_tok_path = os.path.relpath(checkpoint_merges(state["args"]), T.ROOT)
    old_tok = Tokenizer(os.path.join(T.ROOT, old_tok_path))
    new_tok_path = os.path.relpath(os.path.abspath(a.merges), T.ROOT) if a.merges else old_tok_path
    new_tok = Tokenizer(os.path.join(T.ROOT, new_tok_path))
    assert new_tok.merges[:len(old_tok.merges)] == old_tok.merges, \
        "%s does not extend %s" % (new_tok_path, old_tok_path)

    keep = ints(a.encoder_keep) or None
    enc_plan = block_plan(old_dims.n_audio_layer, keep, ints(a.encoder_after))
    dec_plan = block_plan(old_dims.n_text_layer, None, ints(a.decoder_after))
    n_vocab = old_dims.n_vocab + len(new_tok) - len(old_tok)
    dims = hm.Dims(**dict(state["dims"], n_audio_layer=len(enc_plan),
                          n_text_layer=len(dec_plan), n_vocab=n_vocab))
    old_sd = {k: v.float() for k, v in w["model"].items()}
    torch.manual_seed(state["args"]["seed"])    # a new block's own weights: the same every run
    model = hm.Whisper(dims)
    sd = {k: v.clone() for k, v in model.state_dict().items()}
    for k in sd:
        if ".blocks." not in k and k in old_sd and k != "decoder.token_embedding.weight":
            sd[k] = old_sd[k]
    move_blocks(old_sd, sd, "encoder", enc_plan)
    move_blocks(old_sd, sd, "decoder", dec_plan)
    ids = id_map(len(old_tok), len(new_tok), old_dims.n_vocab)
    sd["decoder.token_embedding.weight"] = widen_embedding(
        old_sd["decoder.token_embedding.weight"], ids, new_tok, len(old_tok), n_vocab)
    model.load_state_dict(sd)
    check_unchanged(old_dims, old_sd, model, enc_plan, ids)

    what = []
    if enc_plan != list(range(old_dims.n_audio_layer)):
        what.append("encoder blocks %s of %d kept, in that order (new: -)" % (
            ",".join("-" if i is None else str(i) for i in enc_plan), old_dims.n_audio_layer))
    if dec_plan != list(range(old_dims.n_text_layer)):
        what.append("decoder blocks %s of %d (new: -, starting as the identity)" % (
            ",".join("-" if i is None else str(i) for i in dec_plan), old_dims.n_text_layer))
    if len(new_tok) != len(old_tok):
        what.append("BPE %d -> %d merges (%s; new tokens start as the mean of their parts)" % (
            len(old_tok.merges), len(new_tok.merges), new_tok_path))
    args = dict(state["args"], enc_layers=dims.n_audio_layer, dec_layers=dims.n_text_layer,
                tokenizer=new_tok_path)
    meta = dict(state, dims=dims.__dict__, args=args, n_text_tokens=len(new_tok),
                tokenizer=new_tok_path,
                reshaped=state.get("reshaped", []) + [{"step": state["step"],
                                                       "what": "; ".join(what)}])
    meta.pop("averaged", None)
    save(model, w["ctc"], meta, a)
    print("step %d: %s" % (state["step"], "; ".join(what)))


def save(model, ctc, meta, a):
    st = {n: v.half() for n, v in model.state_dict().items() if n != "decoder.mask"}
    for d in (a.ckpt, a.work):
        torch.save({"model": st, "ctc": ctc}, os.path.join(d, "model.fp16.pt"))
        with open(os.path.join(d, "state.json"), "w") as f:
            json.dump(meta, f, indent=1)
    tag = "%d-%d-%d" % (meta["step"], meta["dims"]["n_audio_layer"], meta["dims"]["n_vocab"])
    for name in ("opt.pt", "snapshots"):
        p = os.path.join(a.work, name)
        if os.path.exists(p):
            os.replace(p, p + ".before-" + tag)


def check_unchanged(old_dims, old_sd, model, enc_plan, ids):
    """Old logits, mapped to new ids, from the reshaped model (fp32, a random input)."""
    kept = [i for i in enc_plan if i is not None]
    ref = hm.Whisper(hm.Dims(**dict(old_dims.__dict__, n_audio_layer=len(kept))))
    ref_sd = {k: old_sd.get(k, v) for k, v in ref.state_dict().items()}
    move_blocks(old_sd, ref_sd, "encoder", kept)
    ref.load_state_dict(ref_sd)
    ref.eval()
    model.eval()
    g = torch.Generator().manual_seed(0)
    mel = torch.randn(2, old_dims.n_mels, 2 * old_dims.n_audio_ctx, generator=g)
    tokens = torch.randint(0, old_dims.n_vocab, (2, 12), generator=g)
    with torch.no_grad():
        diff = (ref(mel, tokens) - model(mel, ids[tokens])[:, :, ids]).abs().max().item()
    assert diff < 1e-3, "reshaped model differs from the old one by %g" % diff


if __name__ == "__main__":
    main()
