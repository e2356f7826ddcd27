"""Run NVIDIA's create_pretraining_data.py (fetched at bench time, never
committed) with its phases timed, and print its HDF5 output as text.

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

    python hdf5gen_ref.py compare REF.hdf5 OURS.hdf5
        Compares the six datasets (dtype, shape, values) of the original's
        file and hdf5gen's; prints "identical" or the first difference and
        exits 1 on a difference.

    python hdf5gen_ref.py dump FILE.hdf5
        Prints the rows in the format of tests/unit/inst_dump.c: per row,
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


def compare(ref_path, our_path):
    """Print "identical" when the six datasets of both files have the same
    dtype, shape and values, else the first difference; exit status 1 then."""
    import h5py
    import numpy as np
    keys = ["input_ids", "input_mask", "segment_ids", "masked_lm_positions", "masked_lm_ids", "next_sentence_labels"]
    a, b = h5py.File(ref_path, "r"), h5py.File(our_path, "r")
    for k in keys:
        if k not in a or k not in b:
            print("%s: missing in %s" % (k, "the original" if k not in a else "ours"))
            return 1
        x, y = a[k][:], b[k][:]
        if x.dtype != y.dtype:
            print("%s: dtype %s vs %s" % (k, x.dtype, y.dtype))
            return 1
        if x.shape != y.shape:
            print("%s: shape %s vs %s" % (k, x.shape, y.shape))
            return 1
        if not np.array_equal(x, y):
            idx = tuple(int(i) for i in np.argwhere(x != y)[0])
            print("%s: at %s: original %d, ours %d" % (k, idx, x[idx], y[idx]))
            return 1
    print("identical")
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "run":
        run(sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    elif len(sys.argv) == 3 and sys.argv[1] == "dump":
        sys.exit(dump(sys.argv[2]))
    else:
        sys.exit(__doc__)
