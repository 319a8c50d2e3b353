#!/usr/bin/python3
"""hark's byte-level BPE: trained on training/corpus/train.txt, GPT-2 conventions.

Token ids: 0..255 are the single bytes (id = byte value); id 256 + i is merge i
(the concatenation of its two parts).  Pre-tokenisation is GPT-2's regex
(ASCII form: the corpus is ASCII), so a word carries its leading space and an
encoded sentence is " " + text, as in Whisper.

Saved as training/tokenizer/merges.txt (GPT-2 "#version" format, bytes written through
the byte->unicode map, one merge a line, in rank order).  load() returns
(text_tokens: list of bytes, merges: list of (bytes, bytes)) for export_hf.

Usage: scripts/train/bpe.py train [--merges 1000] [--out training/tokenizer/merges.txt]
       scripts/train/bpe.py encode "Some text."
"""
import argparse
import collections
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
ROOT = os.path.dirname(SCRIPTS)
sys.path[:0] = [HERE, SCRIPTS]  # scripts/train/ and scripts/ (hark_model)
DEFAULT_NAME = "training/tokenizer/merges.txt"  # a checkpoint without a "tokenizer" argument
DEFAULT = os.path.join(ROOT, DEFAULT_NAME)


def checkpoint_merges(state_args):
    """The path of the merges a training checkpoint's arguments name (train.py --tokenizer)."""
    name = state_args.get("tokenizer", DEFAULT_NAME)
    if name.startswith("tokenizer/"):  # checkpoints made before the move into training/
        name = "training/" + name
    return os.path.join(ROOT, name)

PAT = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")


def b2u():
    from hark_model import bytes_to_unicode
    return bytes_to_unicode()


def pretokens(text):
    return [m.encode("utf-8") for m in PAT.findall(text)]


def train(lines, n_merges):
    counts = collections.Counter()
    for l in lines:
        counts.update(pretokens(" " + l.strip()))
    words = [[bytes([c]) for c in w] for w in counts]
    freqs = [counts[w] for w in counts]
    pairs = collections.Counter()
    where = collections.defaultdict(set)
    for i, w in enumerate(words):
        for a, b in zip(w, w[1:]):
            pairs[a, b] += freqs[i]
            where[a, b].add(i)
    merges = []
    for _ in range(n_merges):
        if not pairs:
            break
        best = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))[0]
        if pairs[best] < 2:
            break
        merges.append(best)
        a, b = best
        ab = a + b
        for i in list(where[best]):
            w = words[i]
            f = freqs[i]
            for x, y in zip(w, w[1:]):
                pairs[x, y] -= f
                if pairs[x, y] <= 0:
                    del pairs[x, y]
            nw, j = [], 0
            while j < len(w):
                if j + 1 < len(w) and w[j] == a and w[j + 1] == b:
                    nw.append(ab)
                    j += 2
                else:
                    nw.append(w[j])
                    j += 1
            words[i] = nw
            for x, y in zip(nw, nw[1:]):
                pairs[x, y] += f
                where[x, y].add(i)
        del where[best]
    return merges


def save(merges, path=DEFAULT):
    m = b2u()
    enc = lambda bs: "".join(m[x] for x in bs)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write(enc(a) + " " + enc(b) + "\n")


def load(path=DEFAULT):
    u2b = {v: k for k, v in b2u().items()}
    dec = lambda s: bytes(u2b[c] for c in s)
    merges = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#version") or not line.strip():
                continue
            a, b = line.rstrip("\n").split(" ")
            merges.append((dec(a), dec(b)))
    tokens = [bytes([i]) for i in range(256)] + [a + b for a, b in merges]
    return tokens, merges


class Tokenizer:
    def __init__(self, path=DEFAULT):
        self.tokens, self.merges = load(path)
        self.rank = {m: i for i, m in enumerate(self.merges)}
        self.ids = {t: i for i, t in enumerate(self.tokens)}
        self.cache = {}

    def _bpe(self, w):
        if w in self.cache:
            return self.cache[w]
        parts = [bytes([c]) for c in w]
        while len(parts) > 1:
            best, bi = None, -1
            for i in range(len(parts) - 1):
                r = self.rank.get((parts[i], parts[i + 1]))
                if r is not None and (best is None or r < best):
                    best, bi = r, i
            if best is None:
                break
            parts[bi:bi + 2] = [parts[bi] + parts[bi + 1]]
        ids = [self.ids[p] for p in parts]
        self.cache[w] = ids
        return ids

    def encode(self, text):
        out = []
        for w in pretokens(text):
            out += self._bpe(w)
        return out

    def decode(self, ids):
        return b"".join(self.tokens[i] for i in ids if i < len(self.tokens)).decode(
            "utf-8", errors="replace")

    def __len__(self):
        return len(self.tokens)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("--merges", type=int, default=1000)
    t.add_argument("--out", default=DEFAULT)
    t.add_argument("--corpus", default=os.path.join(ROOT, "training", "corpus", "train.txt"))
    e = sub.add_parser("encode")
    e.add_argument("text")
    args = ap.parse_args()
    if args.cmd == "train":
        lines = open(args.corpus).read().split("\n")
        merges = train([l for l in lines if l.strip()], args.merges)
        save(merges, args.out)
        tok = Tokenizer(args.out)
        n = sum(len(tok.encode(" " + l)) for l in lines if l.strip())
        w = sum(len(l.split()) for l in lines)
        print("%d merges, vocab %d text tokens, %.2f tokens/word" % (len(merges), len(tok), n / w))
    else:
        tok = Tokenizer()
        ids = tok.encode(args.text)
        print(ids, [tok.tokens[i] for i in ids], repr(tok.decode(ids)))


if __name__ == "__main__":
    main()
