"""wptrain_hf.py - Hugging Face tokenizers as the reference for wptrain.

Used by tests/cli/wptrain.sh and bench/wp_train.sh (needs the `tokenizers`
module; nothing here is imported by the C code).

  train INPUT OUT VOCAB_SIZE CASED LIMIT [UNUSED]
      BertWordPieceTokenizer(lowercase = CASED == "uncased").train() with
      min_frequency 2, limit_alphabet LIMIT and our special tokens; writes
      OUT (vocab.txt, id order) and OUT.json (Tokenizer.save).
  compare OURS_MERGES HF_VOCAB COUNTS LIMIT
      OURS_MERGES: "token<TAB>count" in id order (test_wptrain merges);
      HF_VOCAB: vocab.txt from `train`; COUNTS: "word<TAB>count" (test_wptrain
      counts). Prints one "name value" line per measure (see below).
  roundtrip JSON
      prints "roundtrip 1" if Tokenizer.from_file(JSON).to_str(pretty=True)
      gives the file's bytes back.
  encode JSON INPUT
      tokens of each line (no [CLS]/[SEP]) separated by spaces, one line per
      input line, as wp_tokenize writes them.
  tiny DRIVER SEED N DIR
      N random small word lists (letters a-d, words of 2-8 letters, counts
      1-9, seeded): train each with `DRIVER train` and with HF, retrying HF
      (up to 12 times) until it happens to number the "##c" tokens in code
      point order as we do; then the two vocab.txt files must be identical.
      Prints "tiny_compared K" and "tiny_identical K" (and the first
      difference).

compare's measures:
  specials        1 if the special tokens come first in both files, in the same order
  alphabet        1 if the single-character tokens are the same lines in
                  the same order; with LIMIT cutting the alphabet, 1 if they
                  differ only in characters whose count ties at the cut
                  (HF breaks those ties at random)
  cont_set        1 if the "##c" tokens are the same set (HF numbers them in
                  a random order)
  common          percent of our tokens that HF's vocabulary has too
  order           percent of merged tokens m (by merge number) where HF's
                  m-th merged token was made by us at the same pair count
                  as our m-th: the order agrees up to ties
"""
import collections
import sys


def specials(unused):
    return ["[PAD]"] + ["[unused%d]" % i for i in range(unused)] + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def train(inp, out, vocab_size, cased, limit, unused=100):
    from tokenizers import BertWordPieceTokenizer

    t = BertWordPieceTokenizer(clean_text=True, handle_chinese_chars=True, strip_accents=None,
                               lowercase=(cased == "uncased"))
    t.train([inp], vocab_size=vocab_size, min_frequency=2, limit_alphabet=limit,
            special_tokens=specials(unused), show_progress=False)
    vocab = t.get_vocab()
    with open(out, "w", encoding="utf-8") as f:
        for w, _ in sorted(vocab.items(), key=lambda x: x[1]):
            f.write(w + "\n")
    t.save(out + ".json")


def is_initial(tok):
    return len(tok) == 1 or (len(tok) == 3 and tok.startswith("##"))


def compare(ours_merges, hf_vocab, counts, limit):
    ours, count = [], {}
    with open(ours_merges, encoding="utf-8") as f:
        for line in f:
            tok, c = line.rstrip("\n").split("\t")
            ours.append(tok)
            count[tok] = int(c)
    with open(hf_vocab, encoding="utf-8") as f:
        hf = [line.rstrip("\n") for line in f]
    nsp = next(i for i, t in enumerate(ours) if not t.startswith("[") or len(t) == 1)
    print("specials", int(ours[:nsp] == hf[:nsp]))

    def parts(v):
        k = nsp
        while k < len(v) and is_initial(v[k]):
            k += 1
        init = v[nsp:k]
        return [t for t in init if len(t) == 1], [t for t in init if len(t) == 3], v[k:]

    oa, oc, om = parts(ours)
    ha, hc, hm = parts(hf)
    same = oa == ha
    if not same and limit:
        chars = collections.Counter()
        with open(counts, encoding="utf-8") as f:
            for line in f:
                w, c = line.rstrip("\n").split("\t")
                for ch in w:
                    chars[ch] += int(c)
        if len(chars) > limit:
            cut = sorted(chars.values())[len(chars) - limit]
            diff = set(oa) ^ set(ha)
            same = len(oa) == len(ha) and all(chars[ch] == cut for ch in diff)
            print("alphabet_ties_at_cut", len(diff) // 2)
    print("alphabet", int(same))
    print("cont_set", int(sorted(oc) == sorted(hc)))
    print("common %.3f" % (100.0 * len(set(ours) & set(hf)) / len(ours)))
    n = min(len(om), len(hm))
    agree = sum(1 for m in range(n) if count.get(hm[m]) == count[om[m]])
    print("order %.3f" % (100.0 * agree / max(1, len(om))))
    print("merged %d %d" % (len(om), len(hm)))


def roundtrip(path):
    from tokenizers import Tokenizer

    with open(path, encoding="utf-8") as f:
        text = f.read()
    print("roundtrip", int(Tokenizer.from_file(path).to_str(pretty=True) == text))


def encode(path, inp):
    from tokenizers import Tokenizer

    t = Tokenizer.from_file(path)
    with open(inp, encoding="utf-8", newline="\n") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out = sys.stdout
    for enc in t.encode_batch(lines, add_special_tokens=False):
        out.write(" ".join(enc.tokens) + "\n")


def tiny(driver, seed, n, tmp):
    import os
    import random
    import subprocess

    from tokenizers import BertWordPieceTokenizer

    sp = specials(0)
    rnd = random.Random(seed)
    compared = identical = 0
    for case in range(n):
        words = {}
        for _ in range(rnd.randint(3, 12)):
            words["".join(rnd.choice("abcd") for _ in range(rnd.randint(2, 8)))] = rnd.randint(1, 9)
        size = rnd.randint(20, 60)
        path = os.path.join(tmp, "corpus.txt")
        with open(path, "w") as f:
            for w, c in words.items():
                f.write((w + "\n") * c)
        subprocess.run([driver, "train", "-q", "-f", "--unused", "0", "--min-frequency", "1",
                        "--vocab-size", str(size), "-o", os.path.join(tmp, "tiny"), path], check=True)
        with open(os.path.join(tmp, "tiny.txt"), encoding="utf-8") as f:
            ours = [line.rstrip("\n") for line in f]
        for _ in range(12):
            t = BertWordPieceTokenizer(lowercase=True)
            t.train([path], vocab_size=size, min_frequency=1, limit_alphabet=1000, special_tokens=sp,
                    show_progress=False)
            hf = [w for w, _ in sorted(t.get_vocab().items(), key=lambda x: x[1])]
            cont = [w for w in hf if len(w) == 3 and w.startswith("##")]
            if cont == sorted(cont):
                break
        else:
            continue
        compared += 1
        if ours == hf:
            identical += 1
        elif compared - identical == 1:
            print("first difference: case %d %r size %d\n  ours %s\n  hf   %s" % (case, words, size, ours, hf))
    print("tiny_compared", compared)
    print("tiny_identical", identical)


def main(argv):
    cmd = argv[1]
    if cmd == "train":
        train(argv[2], argv[3], int(argv[4]), argv[5], int(argv[6]), int(argv[7]) if len(argv) > 7 else 100)
    elif cmd == "compare":
        compare(argv[2], argv[3], argv[4], int(argv[5]))
    elif cmd == "roundtrip":
        roundtrip(argv[2])
    elif cmd == "encode":
        encode(argv[2], argv[3])
    elif cmd == "tiny":
        tiny(argv[2], int(argv[3]), int(argv[4]), argv[5])
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
