#!/usr/bin/python3
"""Deepen a training checkpoint's encoder without changing what it computes.

New residual blocks are inserted after the given existing ones with their attention
output and MLP output projections zeroed, so each starts as the identity (the model's
outputs are unchanged, checked below) and training grows them from there. The AdamW
state of every existing parameter is carried over by name; the new ones start fresh.

Reads and rewrites the training state that scripts/train.py resumes from:
  $HARK_WORK/opt.pt (fp32 weights + optimiser), $HARK_WORK/{model.fp16.pt,state.json}
  and models/train-ckpt/{model.fp16.pt,state.json}. Old snapshots (another shape) are
  moved to $HARK_WORK/snapshots-<N>-layers, so export.py --average never mixes shapes.

Usage: scripts/grow_encoder.py --after 1,3     (4 layers -> 6: blocks 0 1 new 2 3 new)
"""
import argparse
import json
import os

import torch

import train as T
import hark_model as hm


def new_name(name, mapping):
    """The grown model's name of an old encoder-block parameter."""
    parts = name.split(".")
    if parts[1:3] == ["encoder", "blocks"]:
        parts[3] = str(mapping[int(parts[3])])
    return ".".join(parts)


def build(dims, args):
    model, ctc = T.make_model(dims), T.CTCHead(args["d_model"])
    return model, ctc, T.make_optimizer(model, ctc, args["lr"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--after", required=True, help="old block indices to insert a block after")
    ap.add_argument("--work", default=T.WORK)
    ap.add_argument("--ckpt", default=os.path.join(T.ROOT, "models", "train-ckpt"))
    a = ap.parse_args()
    state = json.load(open(os.path.join(a.work, "state.json")))
    full = torch.load(os.path.join(a.work, "opt.pt"), map_location="cpu")
    assert full["step"] == state["step"], "opt.pt and state.json disagree on the step"
    old_dims = hm.Dims(**state["dims"])
    after = sorted(int(x) for x in a.after.split(","))
    n_old = old_dims.n_audio_layer
    mapping, k = {}, 0
    for i in range(n_old):
        mapping[i] = k
        k += 2 if i in after else 1
    fresh = sorted(set(range(k)) - set(mapping.values()))
    dims = hm.Dims(**dict(state["dims"], n_audio_layer=k))
    args = dict(state["args"], enc_layers=k)

    old_model, old_ctc, old_opt = build(old_dims, args)
    old_model.load_state_dict(full["model"])
    old_ctc.load_state_dict(full["ctc"])
    old_opt.load_state_dict(full["opt"])
    model, ctc, opt = build(dims, args)
    sd = {new_name("model." + n, mapping)[6:]: v for n, v in full["model"].items()}
    with torch.no_grad():
        for i in fresh:
            blk = model.encoder.blocks[i]
            for lin in (blk.attn.out, blk.mlp[2]):
                lin.weight.zero_()
                lin.bias.zero_()
            for n, v in blk.state_dict().items():
                sd["encoder.blocks.%d.%s" % (i, n)] = v.clone()
    model.load_state_dict(sd)
    ctc.load_state_dict(full["ctc"])

    # the optimiser: carry each old parameter's moments over by name
    old_names = [n for n, _ in T.optimizer_params(old_model, old_ctc)]
    new_index = {n: i for i, (n, _) in enumerate(T.optimizer_params(model, ctc))}
    osd = old_opt.state_dict()
    nsd = opt.state_dict()
    for i, n in enumerate(old_names):
        if i in osd["state"]:
            nsd["state"][new_index[new_name(n, mapping)]] = osd["state"][i]
    for g_new, g_old in zip(nsd["param_groups"], osd["param_groups"]):
        g_new.update({kk: vv for kk, vv in g_old.items() if kk != "params"})
    opt.load_state_dict(nsd)

    check_identity(old_model, model, dims)
    step = state["step"]
    torch.save({"step": step, "model": model.state_dict(), "ctc": ctc.state_dict(),
                "opt": opt.state_dict()}, os.path.join(a.work, "opt.pt"))
    st = {n: v.half() for n, v in model.state_dict().items() if n != "decoder.mask"}
    ct = {n: v.half() for n, v in ctc.state_dict().items()}
    meta = dict(state, dims=dims.__dict__, args=args,
                grown=state.get("grown", []) + [{"step": step, "encoder_layers": [n_old, k],
                                                 "new_blocks": fresh}])
    for d in (a.ckpt, a.work):
        torch.save({"model": st, "ctc": ct}, os.path.join(d, "model.fp16.pt"))
        with open(os.path.join(d, "state.json"), "w") as f:
            json.dump(meta, f, indent=1)
    snaps = os.path.join(a.work, "snapshots")
    if os.path.isdir(snaps):
        os.replace(snaps, os.path.join(a.work, "snapshots-%d-layers" % n_old))
    print("step %d: encoder %d -> %d layers (new blocks %s); outputs unchanged" % (
        step, n_old, k, fresh))


def check_identity(old_model, model, dims):
    """The grown model computes what the old one did (fp32, a random input)."""
    old_model.eval()
    model.eval()
    g = torch.Generator().manual_seed(0)
    mel = torch.randn(2, dims.n_mels, 2 * dims.n_audio_ctx, generator=g)
    tokens = torch.randint(0, dims.n_vocab, (2, 12), generator=g)
    with torch.no_grad():
        diff = (old_model(mel, tokens) - model(mel, tokens)).abs().max().item()
    assert diff < 1e-4, "grown model differs from the old one by %g" % diff


if __name__ == "__main__":
    main()
