#!/usr/bin/python3
"""Build hark's English sentence corpus from Debian-packaged text.

Sources (Debian packages; install with
  apt-get install fortunes fortunes-min wamerican):
  - /usr/share/games/fortunes/*  (fortune cookies, quotations)
  - short package descriptions from `apt-cache dumpavail` (optional, --descriptions)
  - with --wordnet: the example sentences of WordNet (apt-get install wordnet-base),
    written to corpus/train-wordnet.txt only, for training: deduplicated against the
    committed train/valid/test files, and those whose hash falls in validation or
    test dropped, so that the committed validation and test sets stay as they are
  - with --glosses: WordNet's definitions ("a general concept formed by extracting
    common features from specific examples"), written the same way to
    corpus/train-glosses.txt, also deduplicated against the two files above and below:
    new text again (the old-shape model's validation WER fell from 15-16 to 13.6 % within
    250 steps of meeting the long descriptions, session 21)
  - with --long-descriptions: the long package descriptions of apt's English
    translation files (apt-get update -o Acquire::Languages=en fetches them), written
    the same way to corpus/train-descriptions.txt, also deduplicated against
    train-wordnet.txt: new text, because the model decodes sentences it was trained
    on far better than new ones (6.6 against 16 % WER, same voices, at 0340d3b)
Every word must be in /usr/share/dict/american-english (wamerican), so the
synthesizers can say it and the text has no codes, numbers or URLs.

Normalisation: ASCII only; quotes, brackets, dashes and "; :" turned into
plain text or commas; whitespace collapsed; first letter capitalised;
punctuation kept to . , ? ! and the apostrophe; 3..20 words; deduplicated on
the lower-cased word sequence.  The split is by a salted hash of that key, so
it is fixed (no RNG state) and stable when sources grow:
  ~2 % validation, ~2 % test, the rest train.

Usage: scripts/corpus.py [--out corpus] [--descriptions]
       scripts/corpus.py --wordnet [--out corpus]
       scripts/corpus.py --long-descriptions [--out corpus]
       scripts/corpus.py --glosses [--out corpus]
Writes corpus/train.txt, corpus/valid.txt, corpus/test.txt (one sentence a line), or
with --wordnet corpus/train-wordnet.txt (synthesize it with
scripts/synth.py build --split train-wordnet ...), or with --long-descriptions
corpus/train-descriptions.txt (--split train-descriptions), or with --glosses
corpus/train-glosses.txt (--split train-glosses).
"""
import argparse
import glob
import hashlib
import os
import re
import subprocess
import unicodedata

FORTUNE_DIR = "/usr/share/games/fortunes"
APT_LISTS = "/var/lib/apt/lists"
WORDNET_DIR = "/usr/share/wordnet"
DICT = "/usr/share/dict/american-english"
SALT = b"hark-corpus-v1"

TRANS = {
    "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "`": "'",
    "\u2013": " - ", "\u2014": " - ", "\u2026": "...", "\u00a0": " ",
}


def load_dict():
    words = set()
    with open(DICT, encoding="utf-8", errors="ignore") as f:
        for w in f:
            w = w.strip()
            if w.isascii():
                words.add(w.lower())
    return words


def fortune_texts():
    for path in sorted(glob.glob(os.path.join(FORTUNE_DIR, "*"))):
        if "." in os.path.basename(path) or os.path.isdir(path) or os.path.islink(path):
            continue
        with open(path, encoding="utf-8", errors="ignore") as f:
            data = f.read()
        for chunk in re.split(r"\n%\n", data):
            lines = []
            for line in chunk.split("\n"):
                # attributions, headers, and indented verse/code
                if re.match(r"^\s*(--|-- |\u2014)", line) or line.startswith("\t\t"):
                    break
                lines.append(line.strip())
            yield " ".join(lines)


def description_texts():
    try:
        out = subprocess.run(["apt-cache", "dumpavail"], capture_output=True, text=True,
                             errors="ignore").stdout
    except OSError:
        return
    for line in out.split("\n"):
        if line.startswith("Description: "):
            yield line[len("Description: "):]


def wordnet_glosses():
    """The gloss (after ' | ') of every synset line of WordNet's data files, whose
    licence header lines start with two spaces."""
    for path in sorted(glob.glob(os.path.join(WORDNET_DIR, "data.*"))):
        with open(path, encoding="utf-8", errors="ignore") as f:
            for line in f:
                if not line.startswith("  ") and " | " in line:
                    yield line.split(" | ", 1)[1]


def wordnet_texts():
    """The quoted usage examples of WordNet's synsets ("he ran to the store")."""
    for gloss in wordnet_glosses():
        yield from re.findall(r'"([^"]+)"', gloss)


def wordnet_gloss_texts():
    """The definitions of WordNet's synsets ("facing or on the side toward the apex"):
    the gloss's ';'-separated parts that are not quoted examples, asides in brackets
    dropped (they are labels: "(botany)", "(usually followed by `to')")."""
    for gloss in wordnet_glosses():
        gloss = re.sub(r"\([^()]*\)", "", gloss)
        yield from (part for part in gloss.split(";") if '"' not in part)


def long_description_texts():
    """Paragraphs of the long descriptions in apt's Translation-en files; a list item
    (a line starting with * - + or o) is a paragraph of its own."""
    for path in sorted(glob.glob(os.path.join(APT_LISTS, "*_i18n_Translation-en*"))):
        out = subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", path],
                             capture_output=True, text=True, errors="ignore").stdout
        para = []
        for line in out.split("\n") + [""]:
            item = re.match(r"^ \s*[-*+o] (.*)", line)
            if not line.startswith(" ") or line.strip() == "." or item:
                if para:
                    yield " ".join(para)
                para = [item.group(1)] if item else []
            elif not line.startswith("Description-en: "):
                para.append(line.strip())


def split_sentences(text):
    text = unicodedata.normalize("NFKC", text)
    for a, b in TRANS.items():
        text = text.replace(a, b)
    text = re.sub(r"\s+", " ", text)
    # sentence ends: . ! ? followed by space + capital/quote
    parts = re.split(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z])", text)
    return parts


def normalise(s, words):
    s = s.strip()
    s = re.sub(r"[\"()\[\]{}*_]", "", s)
    s = re.sub(r"\s+-+\s+|--+", ", ", s)
    s = re.sub(r"[;:]", ",", s)
    s = re.sub(r"(?<=\w)-(?=\w)", " ", s)   # hyphenated words: spoken as two
    s = re.sub(r"\.\.\.+", ",", s)
    s = re.sub(r"([!?.])[!?.]+", r"\1", s)
    s = re.sub(r"\s+([,.!?])", r"\1", s)
    s = re.sub(r",+", ",", s)
    s = re.sub(r"\s+", " ", s).strip(" ,'")
    if not s or not s.isascii():
        return None
    if not re.fullmatch(r"[A-Za-z][A-Za-z ,.!?']*", s):
        return None
    if s[-1] not in ".!?":
        s += "."
    toks = re.findall(r"[A-Za-z']+", s)
    if not 3 <= len(toks) <= 20:
        return None
    for t in toks:
        t0 = t.strip("'").lower()
        if not t0 or (t0 not in words and not (t0.endswith("'s") and t0[:-2] in words)):
            return None
        if t.isupper() and len(t) > 1 and t0 not in ("i", "a", "ok"):
            return None   # SHOUTED words, acronyms
    if re.search(r"[.!?].", s):       # still more than one sentence
        return None
    s = s[0].upper() + s[1:]
    return s


def key(s):
    return " ".join(re.findall(r"[a-z']+", s.lower()))


def split_of(k):
    h = int.from_bytes(hashlib.sha256(SALT + k.encode()).digest()[:4], "little") % 1000
    return "valid" if h < 20 else "test" if h < 40 else "train"


def committed_keys(out_dir):
    keys = set()
    for name in ("train", "valid", "test"):
        with open(os.path.join(out_dir, name + ".txt")) as f:
            keys.update(key(l.strip()) for l in f if l.strip())
    return keys


def write_lines(path, lines):
    lines.sort(key=lambda s: hashlib.sha256(SALT + s.encode()).hexdigest())
    with open(path, "w") as f:
        f.write("".join(l + "\n" for l in lines))


def build_train_only(out_dir, name, sentences, words, also_against=()):
    """corpus/NAME.txt: the sentences whose hash says train, new against the committed
    train/valid/test files and the files also_against."""
    seen, lines = committed_keys(out_dir), []
    for other in also_against:
        with open(os.path.join(out_dir, other)) as f:
            seen.update(key(l.strip()) for l in f if l.strip())
    for text in sentences:
        s = normalise(text, words)
        if s is None or key(s) in seen:
            continue
        seen.add(key(s))
        if split_of(key(s)) == "train":
            lines.append(s)
    write_lines(os.path.join(out_dir, name + ".txt"), lines)
    print(name, len(lines))


def description_sentences():
    """Sentences of the long descriptions, less those ending in ':' (they introduce a
    list, and alone they stop mid-phrase: "This module is only useful for")."""
    for text in long_description_texts():
        for s in split_sentences(text):
            if not s.rstrip().endswith(":"):
                yield s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "corpus"))
    ap.add_argument("--descriptions", action="store_true",
                    help="also use short package descriptions (apt-cache dumpavail)")
    ap.add_argument("--wordnet", action="store_true",
                    help="write train-wordnet.txt from WordNet's examples (see above)")
    ap.add_argument("--glosses", action="store_true",
                    help="write train-glosses.txt from WordNet's definitions (see above)")
    ap.add_argument("--long-descriptions", action="store_true",
                    help="write train-descriptions.txt from apt's long descriptions (see above)")
    args = ap.parse_args()
    words = load_dict()
    # the training-only files: option, file name, sentences, files also deduplicated against
    for wanted, name, texts, against in (
            (args.wordnet, "train-wordnet", wordnet_texts, []),
            (args.glosses, "train-glosses", wordnet_gloss_texts,
             ["train-wordnet.txt", "train-descriptions.txt"]),
            (args.long_descriptions, "train-descriptions", description_sentences,
             ["train-wordnet.txt"])):
        if wanted:
            build_train_only(args.out, name, texts(), words, against)
            return
    seen, out = set(), {"train": [], "valid": [], "test": []}
    sources = [fortune_texts()] + ([description_texts()] if args.descriptions else [])
    for src in sources:
        for text in src:
            for s in split_sentences(text):
                s = normalise(s, words)
                if s is None:
                    continue
                k = key(s)
                if k in seen:
                    continue
                seen.add(k)
                out[split_of(k)].append(s)
    os.makedirs(args.out, exist_ok=True)
    for name, lines in out.items():
        write_lines(os.path.join(args.out, name + ".txt"), lines)
        print(name, len(lines))


if __name__ == "__main__":
    main()
