"""tests/cli/st_edit.py - rewrite a safetensors file with the standard
library only (no torch, no numpy), to make the checkpoints that
tests/cli/train_hf.sh feeds to --init_checkpoint.

    python3 st_edit.py IN OUT [OP...]

OPs, applied in order:
  bare             drop the "bert." prefix (BertModel's names)
  drop=REGEX       remove the tensors whose names match
  take=FILE:REGEX  the tensors matching REGEX from FILE instead
  dtype=T          store every tensor as T: F16, BF16 (values rounded, BF16
                   by cutting the low 16 bits) or I32 (not a float)
  round=T          keep F32 but round the values as dtype=T would
  rows=NAME:N      keep the first N rows of tensor NAME
"""
import array, json, re, struct, sys


def read(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    h.pop("__metadata__", None)
    d = b[8 + n:]
    return {k: [v["dtype"], v["shape"], d[v["data_offsets"][0]:v["data_offsets"][1]]]
            for k, v in h.items()}


def write(path, ts):
    hdr, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for k, (dt, sh, by) in ts.items():
        hdr[k] = {"dtype": dt, "shape": sh, "data_offsets": [off, off + len(by)]}
        off += len(by)
        blobs.append(by)
    hj = json.dumps(hdr).encode()
    hj += b" " * (-len(hj) % 8)
    open(path, "wb").write(struct.pack("<Q", len(hj)) + hj + b"".join(blobs))


def to16(by, t):
    if t == "BF16":
        return array.array("H", [x >> 16 for x in array.array("I", by)]).tobytes()
    a = array.array("f", by)
    return struct.pack("<%de" % len(a), *a)


def rounded(by, t):
    if t == "BF16":
        return array.array("I", [x & 0xFFFF0000 for x in array.array("I", by)]).tobytes()
    return array.array("f", struct.unpack("<%de" % (len(by) // 4), to16(by, t))).tobytes()


ts = read(sys.argv[1])
for op in sys.argv[3:]:
    name, _, arg = op.partition("=")
    if name == "bare":
        ts = {k[5:] if k.startswith("bert.") else k: v for k, v in ts.items()}
    elif name == "drop":
        ts = {k: v for k, v in ts.items() if not re.search(arg, k)}
    elif name == "take":
        f, _, rx = arg.partition(":")
        other = read(f)
        ts.update({k: v for k, v in other.items() if re.search(rx, k)})
    elif name == "dtype" and arg == "I32":
        ts = {k: ["I32", sh, by] for k, (dt, sh, by) in ts.items()}
    elif name == "dtype":
        ts = {k: [arg, sh, to16(by, arg)] for k, (dt, sh, by) in ts.items()}
    elif name == "round":
        ts = {k: [dt, sh, rounded(by, arg)] for k, (dt, sh, by) in ts.items()}
    elif name == "rows":
        k, _, n = arg.partition(":")
        dt, sh, by = ts[k]
        per = len(by) // sh[0]
        ts[k] = [dt, [int(n)] + sh[1:], by[:int(n) * per]]
    else:
        sys.exit("st_edit.py: unknown op " + op)
write(sys.argv[2], ts)
