"""wp_compare.py - wp_tokenize's output against Hugging Face's BERT tokenizers.

  python wp_compare.py compare VOCAB TEXT OURS [--fast]
      Tokenizes every line of TEXT with transformers' pure-Python BERT
      tokenizer (BertTokenizerLegacy in transformers 5, BertTokenizer
      before): its BasicTokenizer with never_split = [UNK] [SEP] [PAD] [CLS]
      [MASK] and do_lower_case=True, then its WordpieceTokenizer on every
      basic token - the steps of tokenization.py's FullTokenizer - and
      compares token for token with OURS (wp_tokenize's output for TEXT, one
      line per line). With --fast the reference is BertTokenizerFast
      (tokenizers, Rust) instead, without special tokens. Prints
      "lines N agree N (P%) tokens N" and up to 10 differing lines.
  python wp_compare.py speed VOCAB TEXT
      Tokens per second of BertTokenizerFast (encode_batch, one thread,
      RAYON_NUM_THREADS=1) over TEXT: prints "tokens N seconds S".
"""
import os
import sys
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

NEVER_SPLIT = ["[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"]


def read_lines(path):
    # '\n' only, as wp_tokenize's reader: a lone '\r' is text (and cleaned
    # to a space by the BasicTokenizer in both).
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [l.decode("utf-8", "replace") for l in lines]


def slow_tokenizer(vocab):
    import transformers
    cls = getattr(transformers, "BertTokenizerLegacy", None) or transformers.BertTokenizer
    tok = cls(vocab, do_lower_case=True)
    bt, wp = tok.basic_tokenizer, tok.wordpiece_tokenizer
    assert wp.max_input_chars_per_word == 100

    def run(line):
        out = []
        for t in bt.tokenize(line, never_split=NEVER_SPLIT):
            out.extend(wp.tokenize(t))
        return out
    return run, cls.__name__


def fast_tokenizer(vocab):
    from transformers import BertTokenizerFast
    tok = BertTokenizerFast(vocab, do_lower_case=True)
    return tok.backend_tokenizer


def compare(vocab, text, ours, fast):
    lines = read_lines(text)
    with open(ours, encoding="utf-8") as f:
        got = f.read().split("\n")
    if got and got[-1] == "":
        got.pop()
    if len(got) != len(lines):
        print(f"line count differs: ours {len(got)}, input {len(lines)}")
        return 1
    if fast:
        bt = fast_tokenizer(vocab)
        encs = bt.encode_batch(lines, add_special_tokens=False)
        ref = [e.tokens for e in encs]
        name = "BertTokenizerFast"
    else:
        run, name = slow_tokenizer(vocab)
        ref = [run(l) for l in lines]
    agree = ntok = 0
    diffs = []
    for i, (l, r, g) in enumerate(zip(lines, ref, got)):
        g = g.split(" ") if g else []
        ntok += len(r)
        if r == g:
            agree += 1
        else:
            diffs.append((i + 1, l, r, g))
    print(f"{name}: lines {len(lines)} agree {agree} ({100.0 * agree / max(1, len(lines)):.3f}%) tokens {ntok}")
    for n, l, r, g in diffs[:10]:
        k = next((j for j in range(min(len(r), len(g))) if r[j] != g[j]), min(len(r), len(g)))
        print(f"  line {n}: {l[:120]!r}")
        print(f"    ref  ...{r[max(0, k - 3):k + 4]}")
        print(f"    ours ...{g[max(0, k - 3):k + 4]}")
    return 0


def speed(vocab, text):
    lines = read_lines(text)
    bt = fast_tokenizer(vocab)
    best = None
    for _ in range(2):
        t0 = time.perf_counter()
        encs = bt.encode_batch(lines, add_special_tokens=False)
        dt = time.perf_counter() - t0
        best = dt if best is None or dt < best else best
    n = sum(len(e.ids) for e in encs)
    print(f"tokens {n} seconds {best:.3f}")


if __name__ == "__main__":
    a = sys.argv[1:]
    if a and a[0] == "compare" and len(a) in (4, 5):
        sys.exit(compare(a[1], a[2], a[3], len(a) == 5 and a[4] == "--fast"))
    if a and a[0] == "speed" and len(a) == 3:
        sys.exit(speed(a[1], a[2]))
    sys.exit(__doc__)
