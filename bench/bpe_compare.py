"""bench/bpe_compare.py - helpers for bench/vocab_train.sh (peers at bench time).

  bpe_compare.py spm ARGS...            train with sentencepiece's Python API
                                        (ARGS are spm_train flags)
  bpe_compare.py hf CORPUS PREFIX N     train Hugging Face tokenizers'
                                        SentencePieceBPETokenizer (N pieces);
                                        writes PREFIX.json and PREFIX.vocab
                                        (one piece per line)
  bpe_compare.py tpw HELD MODEL...      tokens per whitespace word on HELD
                                        for each .model (SentencePiece) or
                                        .json (tokenizers)
  bpe_compare.py same A.vocab B.vocab   pieces of A also in B, of A's total
"""
import sys


def pieces(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t")[0] for line in f]


def main():
    cmd = sys.argv[1]
    if cmd == "spm":
        import sentencepiece as spm
        spm.SentencePieceTrainer.Train(" ".join(sys.argv[2:]))
    elif cmd == "hf":
        from tokenizers import SentencePieceBPETokenizer
        corpus, prefix, n = sys.argv[2], sys.argv[3], int(sys.argv[4])
        tok = SentencePieceBPETokenizer()
        tok.train([corpus], vocab_size=n, min_frequency=1, special_tokens=["<unk>", "<s>", "</s>"],
                  show_progress=False)
        tok.save(prefix + ".json")
        vocab = sorted(tok.get_vocab().items(), key=lambda kv: kv[1])
        with open(prefix + ".vocab", "w", encoding="utf-8") as f:
            for p, _ in vocab:
                f.write(p + "\n")
    elif cmd == "tpw":
        held = [l.rstrip("\n") for l in open(sys.argv[2], encoding="utf-8")]
        words = sum(len(l.split()) for l in held)
        for m in sys.argv[3:]:
            if m.endswith(".json"):
                from tokenizers import Tokenizer
                t = Tokenizer.from_file(m)
                n = sum(len(e.tokens) for e in t.encode_batch(held))
            else:
                import sentencepiece as spm
                sp = spm.SentencePieceProcessor(model_file=m)
                n = sum(len(x) for x in sp.encode(held))
            print("%s %d %d %.5f" % (m, n, words, n / words))
    elif cmd == "same":
        a, b = pieces(sys.argv[2]), set(pieces(sys.argv[3]))
        print("%d %d" % (sum(p in b for p in a), len(a)))
    else:
        sys.exit("bpe_compare.py: unknown command " + cmd)


if __name__ == "__main__":
    main()
