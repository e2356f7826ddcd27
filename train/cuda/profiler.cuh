/* profiler.cuh - the profiler (--profile) and the kernel launch macros of
 * train_bert's CUDA backend: one header-only module of backend.cu's single
 * translation unit (as llm.c's llmc/ headers), included first.
 *
 * A CUDA event after every kernel and matmul on the compute stream; each
 * gap between two events is charged to the second one's name (section +
 * kernel, or section + matmul shape). Events are read when the buffer is
 * full and at the end (the first step, with cuBLAS's warm-up, is read and
 * dropped at its end); the table is printed when the backend closes. Off:
 * one branch per launch.
 *
 * Needs from what came before (backend.cu's prelude): the CUDA runtime (or
 * train/cuda/emu/cuda_emu.h), LAUNCH_RAW and LAUNCH_COOP_RAW, CK,
 * common/cli.h (die, xstrdup, progname) and train/cuda/comm.h (the
 * watchdog's comm_wait_begin and comm_wait_end).
 * Gives g_prof (NULL: profiling off), prof_section, prof_mark, prof_gemm,
 * prof_flush, prof_report, prof_free, and LAUNCH, LAUNCH_COOP and LAUNCHED,
 * which every launch goes through.
 */
#ifndef WB_PROFILER_CUH
#define WB_PROFILER_CUH

#define PROF_NAMES 256
#define PROF_MARKS 16384
typedef struct Prof {
    cudaStream_t st;
    Comm *comm; /* its waits are under the watchdog */
    const char *section;
    int steps, nnames, nmarks;
    int keep; /* 0 until the first optimizer step's marks are dropped */
    char *name[PROF_NAMES];
    double ms[PROF_NAMES], flops[PROF_NAMES];
    long long calls[PROF_NAMES];
    cudaEvent_t ev[PROF_MARKS];
    int seg[PROF_MARKS];
    double segflops[PROF_MARKS];
} Prof;
static Prof *g_prof; /* one backend per process */

/* charge the GPU time since the previous mark to what/flops; names are
 * "section what", with a kernel's template argument dropped */
static void prof_mark(const char *what, double flops);

/* read the marks so far (waiting for the last); keep 0 drops their times */
static void prof_flush(int keep) {
    Prof *p = g_prof;
    if (p->nmarks < 2) return;
    comm_wait_begin(p->comm, "the GPU's work and the collectives queued before it");
    CK(cudaEventSynchronize(p->ev[p->nmarks - 1]));
    comm_wait_end(p->comm);
    for (int i = 1; i < p->nmarks; i++) {
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, p->ev[i - 1], p->ev[i]));
        if (!keep) continue;
        p->ms[p->seg[i]] += ms, p->calls[p->seg[i]]++, p->flops[p->seg[i]] += p->segflops[i];
    }
    cudaEvent_t last = p->ev[p->nmarks - 1];
    p->ev[p->nmarks - 1] = p->ev[0], p->ev[0] = last;
    p->nmarks = 1;
}

static void prof_mark(const char *what, double flops) {
    Prof *p = g_prof;
    if (!p) return;
    char nm[160];
    const char *lt = strchr(what, '<');
    snprintf(nm, sizeof nm, "%s %.*s", p->section, lt ? (int)(lt - what) : (int)strlen(what), what);
    int k = 0;
    while (k < p->nnames && strcmp(p->name[k], nm))
        k++;
    if (k == p->nnames) {
        if (k == PROF_NAMES)
            k = PROF_NAMES - 1; /* "other" */
        else
            p->name[p->nnames++] = xstrdup(nm);
    }
    if (p->nmarks == PROF_MARKS) prof_flush(p->keep);
    if (!p->ev[p->nmarks]) CK(cudaEventCreate(&p->ev[p->nmarks]));
    CK(cudaEventRecord(p->ev[p->nmarks], p->st));
    p->seg[p->nmarks] = k, p->segflops[p->nmarks] = flops;
    p->nmarks++;
}

/* a mark for a matmul of cuBLAS's (column-major) m x n x k, batch of them:
 * named by its shape, 2 m n k batch flops */
static void prof_gemm(int m, int n, int k, int batch) {
    if (!g_prof) return;
    char nm[96];
    if (batch > 1)
        snprintf(nm, sizeof nm, "gemm %d x %d x %d, batch %d", m, n, k, batch);
    else
        snprintf(nm, sizeof nm, "gemm %d x %d x %d", m, n, k);
    prof_mark(nm, 2.0 * m * n * k * batch);
}

/* qsort order of name indices: most time first, then by index */
static int prof_cmp(const void *a, const void *b) {
    double x = g_prof->ms[*(const int *)a], y = g_prof->ms[*(const int *)b];
    return x < y ? 1 : x > y ? -1 : *(const int *)a - *(const int *)b;
}

/* the table on stderr: per optimizer step, parts by time */
static void prof_report(void) {
    Prof *p = g_prof;
    if (p->steps < 1) {
        fprintf(stderr, "%s: profile: no step after the first to report\n", progname);
        return;
    }
    double tot = 0, mm = 0;
    int idx[PROF_NAMES];
    for (int i = 0; i < p->nnames; i++) {
        idx[i] = i, tot += p->ms[i];
        if (strstr(p->name[i], " gemm ")) mm += p->ms[i];
    }
    qsort(idx, (size_t)p->nnames, sizeof *idx, prof_cmp);
    double per = 1.0 / p->steps;
    fprintf(stderr,
            "%s: profile of %d optimizer steps after the first: %.3f ms of GPU time per step, "
            "matmuls %.1f %%\n",
            progname, p->steps, tot * per, tot > 0 ? 100 * mm / tot : 0.0);
    static const char *const sections[] = {"host", "forward", "backward", "optimizer"};
    fprintf(stderr, "%s: by section:", progname);
    for (int k = 0; k < 4; k++) {
        double t = 0;
        size_t n = strlen(sections[k]);
        for (int i = 0; i < p->nnames; i++)
            if (!strncmp(p->name[i], sections[k], n) && p->name[i][n] == ' ') t += p->ms[i];
        fprintf(stderr, "%s %s %.3f ms (%.1f %%)", k ? "," : "", sections[k], t * per,
                tot > 0 ? 100 * t / tot : 0.0);
    }
    fprintf(stderr, "\n%12s %7s %8s %8s  %s (gemm M x N x K: cuBLAS's column-major m, n, k)\n",
            "ms/step", "%", "calls", "TFLOP/s", "part");
    for (int j = 0; j < p->nnames; j++) {
        int i = idx[j];
        if (!p->calls[i]) continue;
        char tf[32] = "";
        if (p->flops[i] > 0 && p->ms[i] > 0)
            snprintf(tf, sizeof tf, "%.1f", p->flops[i] / (p->ms[i] * 1e-3) / 1e12);
        fprintf(stderr, "%12.4f %7.2f %8.1f %8s  %s\n", p->ms[i] * per,
                tot > 0 ? 100 * p->ms[i] / tot : 0.0, p->calls[i] * per, tf, p->name[i]);
    }
}

/* the events and names; g_prof NULL (profiling off) after */
static void prof_free(void) {
    Prof *p = g_prof;
    if (!p) return;
    for (int i = 0; i < PROF_MARKS; i++)
        if (p->ev[i]) cudaEventDestroy(p->ev[i]);
    for (int i = 0; i < p->nnames; i++)
        free(p->name[i]);
    free(p);
    g_prof = NULL;
}

/* the section ("host", "forward", "backward", "optimizer") that the
 * following marks are charged to */
static void prof_section(const char *s) {
    if (g_prof) g_prof->section = s;
}

/* ---- launches ---- */

/* after every launch: a launch the GPU refuses (its configuration, or a
 * fault of a kernel before it) stops here, naming the kernel (a host-side
 * query, no wait); then the profiler's mark */
static void launched(const char *k) {
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        die("CUDA error at the launch of %s: %s (a fault may come from a kernel before it: "
            "CUDA_LAUNCH_BLOCKING=1 "
            "names the kernel)",
            k, cudaGetErrorString(e));
}
#define LAUNCHED(k, flops)                                                                         \
    do {                                                                                           \
        launched(k);                                                                               \
        if (g_prof) prof_mark((k), (flops));                                                       \
    } while (0)
#define LAUNCH(k, grid, block, stream, ...)                                                        \
    do {                                                                                           \
        LAUNCH_RAW(k, grid, block, stream, __VA_ARGS__);                                           \
        LAUNCHED(#k, 0);                                                                           \
    } while (0)
#define LAUNCH_COOP(k, grid, block, stream, ...)                                                   \
    do {                                                                                           \
        LAUNCH_COOP_RAW(k, grid, block, stream, __VA_ARGS__);                                      \
        LAUNCHED(#k, 0);                                                                           \
    } while (0)

#endif
