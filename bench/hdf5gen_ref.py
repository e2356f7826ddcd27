"""Run NVIDIA's create_pretraining_data.py (fetched at bench time, never
committed) with its phases timed, compare two HDF5 files of its format, and
print one as text.

    python hdf5gen_ref.py run NV_DIR [--google-wwm GOOGLE_FILE] -- ARGS...
        Imports create_pretraining_data from NV_DIR and runs its main() with
        ARGS (its own command line). Prints on stderr:
            ref: instances S s, write S s, total S s (cpu: instances S s, write S s, total S s)
        (instances = reading, tokenization and create_training_instances;
        write = write_instance_to_example_file, the HDF5 part; wall clock,
        then process CPU time).
        --google-wwm swaps in create_masked_lm_predictions of Google's
        create_pretraining_data.py (google-research/bert, GOOGLE_FILE) with
        do_whole_word_mask=True; tensorflow is replaced by a stub that
        accepts its flag definitions, nothing else of it is used.

    python hdf5gen_ref.py compare [--layout] ORIGINAL.hdf5 OURS.hdf5
        Compares the six datasets of create_pretraining_data.py (input_ids,
        input_mask, segment_ids, masked_lm_positions, masked_lm_ids,
        next_sentence_labels): each present in both files, same dtype, same
        shape, identical values. Prints "identical: N rows", or one line per
        dataset that differs, with its first difference, e.g.
            input_ids: row 12 col 40: original 2054, ours 1996
            masked_lm_ids: dtype int64 vs int32
        and exits with status 1; a dataset that only one file has is a
        difference too. --layout first prints the two files' sizes and, per
        dataset, the chunk shape and the filters (compression, shuffle) of
        both side by side: information only, they need not be equal.

    python hdf5gen_ref.py dump FILE.hdf5
        Prints the rows in the format of tests/unit/inst_dump.c (the
        test driver; tests/cli/inst_dump.sh uses this): per row,
        tab-separated, the unpadded input_ids, the segment_ids as a string of
        0/1 digits, masked_lm_positions, masked_lm_ids, next_sentence_label.
        Padding is checked on the way (zeros after the real tokens and after
        the real positions); a violation goes to stderr and exit status 1.
"""
import importlib.util
import sys
import time
import types


def load_google(path):
    tf = types.ModuleType("tensorflow")

    class Flags:
        pass

    flags = types.SimpleNamespace(FLAGS=Flags())
    for kind in ("string", "bool", "integer", "float"):
        setattr(flags, "DEFINE_" + kind,
                lambda name, default, *a, **k: setattr(flags.FLAGS, name, default))
    tf.flags = flags
    sys.modules["tensorflow"] = tf
    spec = importlib.util.spec_from_file_location("google_cpd", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.FLAGS.do_whole_word_mask = True
    return mod


def run(argv):
    nv_dir = argv[0]
    rest = argv[1:]
    google = None
    if rest and rest[0] == "--google-wwm":
        google, rest = rest[1], rest[2:]
    if rest and rest[0] == "--":
        rest = rest[1:]
    sys.path.insert(0, nv_dir)
    import create_pretraining_data as cpd
    if google:
        cpd.create_masked_lm_predictions = load_google(google).create_masked_lm_predictions
    times = {}

    def timed(name, fn):
        def wrapper(*a, **k):
            t, c = time.perf_counter(), time.process_time()
            try:
                return fn(*a, **k)
            finally:
                times[name] = (time.perf_counter() - t, time.process_time() - c)
        return wrapper

    cpd.create_training_instances = timed("instances", cpd.create_training_instances)
    cpd.write_instance_to_example_file = timed("write", cpd.write_instance_to_example_file)
    sys.argv = ["create_pretraining_data.py"] + rest
    t0, c0 = time.perf_counter(), time.process_time()
    cpd.main()
    total, ctotal = time.perf_counter() - t0, time.process_time() - c0
    ti, tw = times.get("instances", (0, 0)), times.get("write", (0, 0))
    print("ref: instances %.3f s, write %.3f s, total %.3f s (cpu: instances %.3f s, write %.3f s, total %.3f s)"
          % (ti[0], tw[0], total, ti[1], tw[1], ctotal), file=sys.stderr)


def dump(path):
    import h5py
    import numpy as np
    with h5py.File(path, "r") as f:
        ids = np.asarray(f["input_ids"][:])
        mask = np.asarray(f["input_mask"][:])
        seg = np.asarray(f["segment_ids"][:])
        pos = np.asarray(f["masked_lm_positions"][:])
        mid = np.asarray(f["masked_lm_ids"][:])
        nsp = np.asarray(f["next_sentence_labels"][:])
    bad = 0
    out = sys.stdout
    for r in range(ids.shape[0]):
        n = int(mask[r].sum())
        k = int(np.count_nonzero(pos[r]))
        if (mask[r][:n] != 1).any() or mask[r][n:].any() or ids[r][n:].any() or seg[r][n:].any():
            bad += 1
            print("row %d: padding of input_ids/input_mask/segment_ids" % r, file=sys.stderr)
        if pos[r][k:].any() or mid[r][k:].any():
            bad += 1
            print("row %d: padding of masked_lm_positions/ids" % r, file=sys.stderr)
        out.write("%s\t%s\t%s\t%s\t%d\n" % (
            " ".join(map(str, ids[r][:n].tolist())),
            "".join(map(str, seg[r][:n].tolist())),
            " ".join(map(str, pos[r][:k].tolist())),
            " ".join(map(str, mid[r][:k].tolist())),
            int(nsp[r])))
    return 1 if bad else 0


DATASETS = ("input_ids", "input_mask", "segment_ids", "masked_lm_positions",
            "masked_lm_ids", "next_sentence_labels")


def filters(d):
    """The dataset's filters as one short word list: "gzip 4", "shuffle"..."""
    out = []
    if d.shuffle:
        out.append("shuffle")
    if d.compression:
        out.append(d.compression + ("" if d.compression_opts is None else " %s" % (d.compression_opts,)))
    if d.fletcher32:
        out.append("fletcher32")
    if d.scaleoffset is not None:
        out.append("scaleoffset %s" % d.scaleoffset)
    return ", ".join(out) or "none"


def layout(fa, fb, pa, pb):
    import os
    print("layout (information only; need not be equal): original %s, %d bytes; ours %s, %d bytes"
          % (pa, os.path.getsize(pa), pb, os.path.getsize(pb)))
    print("  %-21s %-12s %-16s %-16s %s" % ("dataset", "shape", "original chunks", "ours chunks", "filters: original | ours"))
    for name in sorted(set(fa) | set(fb)):
        da, db = fa.get(name), fb.get(name)
        shape = da.shape if da is not None else db.shape
        print("  %-21s %-12s %-16s %-16s %s | %s" % (
            name, "x".join(map(str, shape)),
            "x".join(map(str, da.chunks)) if da is not None and da.chunks else ("-" if da is None else "contiguous"),
            "x".join(map(str, db.chunks)) if db is not None and db.chunks else ("-" if db is None else "contiguous"),
            filters(da) if da is not None else "-", filters(db) if db is not None else "-"))


def first_difference(a, b):
    """Where two equal-shape arrays first differ: "row R col C: original X, ours Y"."""
    import numpy as np
    idx = tuple(int(i) for i in np.argwhere(a != b)[0])
    where = "row %d" % idx[0] + "".join(" col %d" % i for i in idx[1:])
    return "%s: original %s, ours %s" % (where, a[idx].item(), b[idx].item())


def compare(pa, pb, show_layout):
    import h5py
    import numpy as np
    bad = []
    rows = None
    with h5py.File(pa, "r") as fa, h5py.File(pb, "r") as fb:
        if show_layout:
            layout(fa, fb, pa, pb)
        for name in DATASETS:
            if name not in fa or name not in fb:
                bad.append("%s: missing in %s" % (name, " and ".join(
                    w for w, f in (("original", fa), ("ours", fb)) if name not in f)))
                continue
            da, db = fa[name], fb[name]
            if da.dtype != db.dtype:
                bad.append("%s: dtype %s vs %s" % (name, da.dtype, db.dtype))
                continue
            if da.shape != db.shape:
                bad.append("%s: shape %s vs %s" % (name, da.shape, db.shape))
                continue
            a, b = np.asarray(da[()]), np.asarray(db[()])
            if not np.array_equal(a, b):
                bad.append("%s: %s" % (name, first_difference(a, b)))
            rows = da.shape[0] if da.shape else 0
        for name in sorted(set(fa) | set(fb)):
            if name not in DATASETS:
                bad.append("%s: only in %s" % (name, "original" if name in fa else "ours"))
    for line in bad:
        print(line)
    if not bad:
        print("identical: %d rows" % rows)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "run":
        run(sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "dump":
        sys.exit(dump(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3], False))
    elif len(sys.argv) == 5 and sys.argv[1:3] == ["compare", "--layout"]:
        sys.exit(compare(sys.argv[3], sys.argv[4], True))
    else:
        sys.exit(__doc__)
