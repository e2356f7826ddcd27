/* fuzz_mlmcheck.c - fuzz target of the HDF5 checker (hdf5gen/mlmcheck.h).
 *
 * The input is the bytes of an HDF5 file. HDF5 opens files by name, so the
 * bytes go to a scratch file first; mlmcheck_file then checks it with
 * bert-base-uncased's token ids, its rows dumped to /dev/null (the
 * --dump path), once lenient and once strict. Any result is fine (0, -1 a
 * violation, -2 not readable); the message must be a terminated string.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "hdf5gen/mlmcheck.h"

/* One input: data as an HDF5 file, checked as hdf5_check does. Returns 0;
 * a broken promise aborts (fuzz_fail). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static FuzzTmp tmp;
    static FILE *devnull;
    if (!devnull) {
        fuzz_quiet("fuzz_mlmcheck");
        if (!(devnull = fopen("/dev/null", "w"))) {
            perror("/dev/null");
            exit(3);
        }
    }
    fuzz_tmp_write(&tmp, ".hdf5", data, size);
    for (int strict = 0; strict < 2; strict++) {
        MlmCheckOpts o = {.vocab_size = 30522,
                          .cls = 101,
                          .sep = 102,
                          .mask = 103,
                          .strict = strict,
                          .dump = strict ? NULL : devnull};
        MlmCheckStats st = {0};
        Err err;
        int rc = mlmcheck_file(tmp.path, &o, &st, &err);
        if (rc != 0 && rc != -1 && rc != -2) fuzz_fail("mlmcheck_file returned %d", rc);
        if (rc) (void)strlen(err.msg);
        if (rc == -2) break; /* not readable as HDF5: strict reads no further */
    }
    return 0;
}
