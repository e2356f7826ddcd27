/* backend.cu - BERT pretraining on one GPU per process (see gpu.h).
 *
 * Layout as bert.c: row-major, a linear layer is y = x W^T + b with W
 * [out, in]; parameters, gradients and moments are one float32 array each
 * in Hugging Face's state-dict order (so checkpoints are the CPU's), plus a
 * copy of the parameters for the matmuls (bfloat16, or float32 in fp32
 * mode) whose layers hold the query, key and value weights as one [3H, H]
 * matrix. Activations
 * are of type T (float or __nv_bfloat16); every kernel computes in float32.
 * cuBLAS is column-major: a row-major product C = A B is computed as
 * C^T = B^T A^T, which is what the gemm_* helpers below spell out once.
 *
 * Determinism: no atomics. Per-row work is one warp per row (shuffle
 * reductions in a fixed pattern); column sums (bias and LayerNorm
 * gradients) go through per-chunk partial sums added in chunk order; the
 * embedding gradient sums each token id's rows in segments of ESEG rows,
 * then the segments in order (lists built on the host with the batch);
 * norms for the optimizer are per-chunk partial sums reduced in a fixed
 * tree. The tests run the CPU emulation with blocks and threads in reverse
 * order too and require the same bytes.
 *
 * One translation unit, for nvcc and for the tests' emulation (g++ -x c++
 * -DWB_CUDA_EMU): this file's prelude, then the header-only modules in
 * order (as llm.c's llmc/ headers): profiler.cuh (--profile and the launch
 * macros), reduce.cuh (conversions, warp reductions, vectors), forward.cuh
 * and backward.cuh (the kernels of each pass), attention.cuh (the fused
 * attention), optimizer.cuh; then the context (buffers, batch upload,
 * matmul helpers), the forward and backward passes, and the backend's
 * functions for the trainer loop (trainer.h's TrainBackend).
 */
#ifdef WB_CUDA_EMU
#include "train/cuda/emu/cuda_emu.h" /* tests/gpu: the CUDA execution model and cuBLAS's semantics on the CPU */
#define LAUNCH_RAW EMU_LAUNCH
#define LAUNCH_COOP_RAW EMU_LAUNCH_COOP
#else
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>
/* kernel launches; LAUNCH_COOP marks kernels whose threads cooperate (warp
 * shuffles, __syncthreads), which the CPU emulation of the tests runs on
 * concurrent threads. LAUNCH and LAUNCH_COOP (profiler.cuh) add the profiler's mark. */
#define LAUNCH_RAW(k, grid, block, stream, ...) k<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__)
#define LAUNCH_COOP_RAW LAUNCH_RAW
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/cuda/gpu.h"

extern "C" {
#include "common/cli.h"
#include "train/cuda/comm.h"
}
#include "train/dropout.h"

typedef __nv_bfloat16 bf16;

#define CK(x) ck_cuda((x), #x, __FILE__, __LINE__)
#define CKB(x) ck_blas((x), #x, __FILE__, __LINE__)

static void ck_cuda(cudaError_t e, const char *what, const char *file, int line) {
    if (e != cudaSuccess)
        die("CUDA error at %s:%d: %s: %s", file, line, what, cudaGetErrorString(e));
}

static void ck_blas(cublasStatus_t s, const char *what, const char *file, int line) {
    if (s != CUBLAS_STATUS_SUCCESS) die("cuBLAS error %d at %s:%d: %s", (int)s, file, line, what);
}

#include "train/cuda/profiler.cuh"
#include "train/cuda/reduce.cuh"
#include "train/cuda/forward.cuh"
#include "train/cuda/backward.cuh"
#include "train/cuda/attention.cuh"
#include "train/cuda/optimizer.cuh"

/* ---- the context ---- */

enum { QW, QB, KW, KB, VW, VB, AOW, AOB, LN1W, LN1B, IW, IB, OW, OB, LN2W, LN2B, NLT };
/* DECW: the MLM decoder, an untied one's own tensor (tie_word_embeddings
 * false), else the word embeddings' offset */
enum {
    WTE,
    WPE,
    WTT,
    ELNW,
    ELNB,
    POOLW,
    POOLB,
    MLMBIAS,
    TRW,
    TRB,
    TLNW,
    TLNB,
    NSPW,
    NSPB,
    DECW,
    NOUTER
};

typedef struct HostBatch {
    int B, S, nm; /* rows, length, masked tokens */
    int np;       /* the MLM head's rows: nm padded to B x M (0 without masked tokens) */
    int nseg[2],
        nmkey[2]; /* the embedding lists (token ids, token types): segments, keys with slots */
} HostBatch;

/* a key list of the embedding gradients on the device (k_embed_seg) */
typedef struct EmbList {
    int *rows, *sstart, *sdst, *mkey, *mslot;
} EmbList;
#define SEGCAP(N)                                                                                  \
    ((N) + (N) / ESEG + 2) /* segments of N rows: one per key and one per ESEG rows at most */
#define MKCAP(N) ((N) / ESEG + 2)                     /* keys of more than ESEG rows */
#define ELCAP(N) ((N) + 2 * SEGCAP(N) + 2 * MKCAP(N)) /* ints of one list on the host */

typedef struct Gpu {
    Bert *m;
    Optim *opt;
    TrainOpts o;
    Comm *comm;
    int bf16, world, rank;
    char name[512];
    cublasHandle_t blas;
    void *blasws;         /* its workspace */
    int ccmajor;          /* the GPU's compute capability, major */
    cudaStream_t st, cst; /* compute, communication */
    cudaEvent_t ev, comm_done;
    size_t np;
    float *p32, *g32, *m32, *v32; /* m32, v32: elements za..zb only */
    /* the matmul weights: a copy of p32 (bf16, or float32 in fp32 mode)
     * laid out as p32 except that each layer's query, key and value
     * weights are one [3H, H] matrix (their biases follow): Q, K and V
     * are then one matmul. Chunk k's elements start at cpw[k] there. */
    void *pw;
    long long *cpw;
    /* ZeRO stage 1 (world > 1): rank r owns chunks zc[r] .. zc[r + 1) =
     * elements zs[r] .. zs[r] + zn[r]; without it rank 0 owns everything */
    int zero, *zc;
    size_t *zs, *zn, za, zb;
    /* tensor offsets */
    size_t outer[NOUTER], *layer; /* layer: L x NLT */
    /* optimizer tables */
    int nchunks, ntensors;
    long long *cstart;
    int *clen, *ctensor, *tchunk0, *tnchunks;
    float *twd, *ratio;
    double *part, *part2, *norm;
    /* capacity and buffers (T-typed ones as void *) */
    int capB, capS, capM;
    int *ids, *seg, *mrow, *mlabel, *nsp, *clsrow;
    EmbList el[2]; /* token ids, token types */
    float *epart;  /* their partial sums */
    float *maskbias;
    /* fused attention (--attention fused, bf16, D 16/32/64): each layer's
     * Q/K/V matmul output qkvl [L][N][3H], row max and inverse sum
     * [L][B*A*S], Di [B*A*S]; the matmul path's buffers (qkv, qp, kp, vp,
     * P, Pd, dP, ctxp, dqkvp) are then allocated only if a batch needs them */
    int fattn;
    uint8_t
        *dbits; /* [L][B*A*S][S / 8]: the fused attention's dropout bits (with attention dropout) */
    int toff16; /* every tensor's offset in p32 a multiple of 16 bytes (vec_ok) */
    void *qkvl;
    float *rmax, *rinv, *rdi;
    void *e, *x0, *qkv, *qp, *kp, *vp, *P, *Pd, *ctxp, *ctx, *y, *r1, *x1, *hpre, *h, *r2, *x2;
    float *em, *es, *m1, *s1, *m2, *s2, *lnab;
    void *pin, *ppre, *pooled, *nsplog, *tin, *tpre, *tg, *tr, *tln, *logits;
    float *tm, *ts;
    void *dX, *dr, *dy, *dH, *dctx, *dP, *dqkvp, *dqkv, *dt, *dt2, *dpool, *dpin;
    float *colpart, *rowloss, *nsploss;
    int *rowcorrect, *nspcorrect;
    double *stats;
    /* pinned staging of the batch (two slots) */
    int *host[2];
    /* pinned memory for the small copies to and from the host next to
     * collectives (statistics, all-gather, eval): a copy into pageable
     * memory would block the host in cudaMemcpyAsync, outside the
     * watchdog, until the queued collectives are done */
    void *hst;
    size_t hst_cap;
    void *dgather; /* g_allgather's device buffer */
    size_t dgather_cap;
    size_t host_cap;
    cudaEvent_t host_ev[2];
    int slot;
    int micro; /* micro-batches since zero_grad */
    /* zero_grad zeroes the gradients other than the matmul weights' (those
     * the first micro-batch's matmuls overwrite: wbeta 0, then 1): nz
     * ranges zstart[i], zlen[i] (device) */
    float wbeta;
    int nz;
    long long *zstart;
    int *zlen;
    int staged; /* staged_hb is the next micro-batch, uploaded by g_stage */
    HostBatch staged_hb;
    TrainStats last;
} Gpu;

/* host waits on work that may wait for the other ranks' collectives: under
 * comm.c's watchdog (a rank that failed or stopped ends this one with a
 * message, not a hang) */
static void g_sync(Gpu *g, cudaStream_t s) {
    comm_wait_begin(g->comm, "the GPU's work and the collectives queued before it");
    CK(cudaStreamSynchronize(s));
    comm_wait_end(g->comm);
}
static void g_sync_event(Gpu *g, cudaEvent_t e) {
    comm_wait_begin(g->comm, "the GPU's work and the collectives queued before it");
    CK(cudaEventSynchronize(e));
    comm_wait_end(g->comm);
}

/* g->hst with room for bytes (pinned; both streams idle when it grows) */
static void *g_pinned(Gpu *g, size_t bytes) {
    if (bytes > g->hst_cap) {
        g_sync(g, g->st);
        g_sync(g, g->cst);
        if (g->hst) CK(cudaFreeHost(g->hst));
        g->hst_cap = bytes > 4096 ? bytes : 4096;
        CK(cudaMallocHost(&g->hst, g->hst_cap));
    }
    return g->hst;
}

/* the tests' dead rank (cuda_emu.h's WB_EMU_DIE) at the point named where */
#ifdef WB_CUDA_EMU
#define DIE_POINT(g, where) emu_die_point(where, (g)->rank)
#else
#define DIE_POINT(g, where) ((void)0)
#endif

#ifdef WB_CUDA_EMU
/* The tests' wrong gradient, to show that the comparisons with the CPU
 * catch one: with WB_EMU_WRONG_GRAD=NAME:FACTOR, tensor NAME's gradient is
 * multiplied by FACTOR before every optimizer step. */
static void emu_wrong_grad(Gpu *g) {
    const char *v = getenv("WB_EMU_WRONG_GRAD"), *colon = v ? strrchr(v, ':') : NULL;
    if (!colon) return;
    char name[80];
    snprintf(name, sizeof name, "%.*s", (int)(colon - v), v);
    const BertTensor *t = bert_tensor_named(g->m, name);
    if (!t) die("WB_EMU_WRONG_GRAD: no tensor %s", name);
    float f = (float)atof(colon + 1);
    CK(cudaDeviceSynchronize()); /* the emulated device's memory is the host's */
    for (size_t i = 0; i < t->n; i++)
        g->g32[t->off + i] *= f;
}
#define WRONG_GRAD(g) emu_wrong_grad(g)
#else
#define WRONG_GRAD(g) ((void)0)
#endif

#define TH 256
static unsigned nblk(size_t n, int t) { return (unsigned)((n + t - 1) / t); }

/* 16-byte vectors of T serve rows of C elements: C a multiple of their
 * width (activations are rows of C from the start of a cudaMalloc'd
 * buffer) and every parameter tensor 16-byte aligned in p32 */
template <typename T> static bool vec_ok(const Gpu *g, int C) {
    return g->toff16 && C % (16 / sizeof(T)) == 0;
}
/* launch k<VV> (T's 16-byte vectors) where vok, else k<V1> (one element);
 * grid and gridv are the grids of each. Needs the typedefs VV and V1. */
#define VLAUNCH(LN, vok, k, grid, gridv, block, stream, ...)                                       \
    do {                                                                                           \
        if (vok)                                                                                   \
            LN(k<VV>, gridv, block, stream, __VA_ARGS__);                                          \
        else                                                                                       \
            LN(k<V1>, grid, block, stream, __VA_ARGS__);                                           \
    } while (0)
#define VTYPES(T)                                                                                  \
    typedef VT<T, 16 / sizeof(T)> VV;                                                              \
    typedef VT<T, 1> V1

static void *dalloc(size_t bytes) {
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 16);
    if (e != cudaSuccess) {
        size_t fr = 0, tot = 0;
        cudaMemGetInfo(&fr, &tot);
        die("GPU memory: %zu MB more needed, %zu MB free of %zu: use a smaller micro-batch (more "
            "--gradient_accumulation_steps)",
            bytes >> 20, fr >> 20, tot >> 20);
    }
    return p;
}

static void dfree(void *p) {
    if (p) cudaFree(p);
}

static cudaDataType dtype_of(int bf) { return bf ? CUDA_R_16BF : CUDA_R_32F; }

/* C (row-major [rows, O]) = x [rows, K] W^T (W [O, K]); beta 0 or 1 */
static void gemm_xwT(Gpu *g, const void *x, const void *W, void *C, int rows, int K, int O,
                     float beta, cudaDataType tC) {
    float alpha = 1.0f;
    cudaDataType t = dtype_of(g->bf16);
    CKB(cublasGemmEx(g->blas, CUBLAS_OP_T, CUBLAS_OP_N, O, rows, K, &alpha, W, t, K, x, t, K, &beta,
                     C, tC, O, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    prof_gemm(O, rows, K, 1);
}

/* dx [rows, K] = dy [rows, O] W (W [O, K]); beta 0 or 1 */
static void gemm_dyW(Gpu *g, const void *dy, const void *W, void *dx, int rows, int K, int O,
                     float beta) {
    float alpha = 1.0f;
    cudaDataType t = dtype_of(g->bf16);
    CKB(cublasGemmEx(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, K, rows, O, &alpha, W, t, K, dy, t, O,
                     &beta, dx, t, K, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    prof_gemm(K, rows, O, 1);
}

/* dW [O, K] (float32) += dy^T [O, rows] x [rows, K]; = on an optimizer
 * step's first micro-batch (g->wbeta 0: zero_grad left the matmul weights'
 * gradients as they were) */
static void gemm_dW(Gpu *g, const void *dy, const void *x, float *dW, int rows, int K, int O) {
    float alpha = 1.0f, beta = g->wbeta;
    cudaDataType t = dtype_of(g->bf16);
    CKB(cublasGemmEx(g->blas, CUBLAS_OP_N, CUBLAS_OP_T, K, O, rows, &alpha, x, t, K, dy, t, O,
                     &beta, dW, CUDA_R_32F, K, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    prof_gemm(K, O, rows, 1);
}

/* batched over B*A heads, each row-major: C [m, n] = alpha op(X) op(Y) as
 * named; strides in elements */
static void bgemm(Gpu *g, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                  float alpha, const void *A, int lda, long long sa, const void *B, int ldb,
                  long long sb, void *C, int ldc, long long sc, int batch) {
    float beta = 0.0f;
    cudaDataType t = dtype_of(g->bf16);
    CKB(cublasGemmStridedBatchedEx(g->blas, ta, tb, m, n, k, &alpha, A, t, lda, sa, B, t, ldb, sb,
                                   &beta, C, t, ldc, sc, batch, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT));
    prof_gemm(m, n, k, batch);
}

/* grads[v][C] += the partial sums v of a column kernel (colpart, chunks
 * of CROWS rows), v < nv <= 3; one launch */
static void colsum_finish(Gpu *g, int chunks, int C, float *const *grads, int nv) {
    Grads3 gr = {{grads[0], nv > 1 ? grads[1] : NULL, nv > 2 ? grads[2] : NULL}};
    LAUNCH_COOP(k_colsum_finish, dim3(nblk(C, 32), nv), 32 * FGROUPS, g->st, g->colpart,
                (size_t)chunks * C, chunks, C, C, gr);
}

/* threads a block for a row kernel that has n vectors a row: n rounded up
 * to whole warps, 32 to 512 */
static int row_threads(int n) {
    int t = (n + 31) / 32 * 32;
    return t < 32 ? 32 : t > 512 ? 512 : t;
}

/* the matmul attention's softmax (back: its backward) over B*A*S rows of
 * S: the row in registers, 16-byte vectors where S allows */
#define SOFTMAX_M(k, M, G, ...)                                                                    \
    do {                                                                                           \
        auto kv = k<VV, M, G>; /* (a template's arguments in a macro's one) */                     \
        auto k1 = k<V1, M, G>;                                                                     \
        unsigned grid = nblk((size_t)rows, WARPS * (32 / G));                                      \
        if (vok)                                                                                   \
            LAUNCH_COOP_RAW(kv, grid, 32 * WARPS, g->st, __VA_ARGS__);                             \
        else                                                                                       \
            LAUNCH_COOP_RAW(k1, grid, 32 * WARPS, g->st, __VA_ARGS__);                             \
        LAUNCHED(#k, 0);                                                                           \
    } while (0)
/* 8 or 16 lanes a row for short rows (4 or 2 rows a warp), else 32 */
#define SOFTMAX_LAUNCH(k, ...)                                                                     \
    do {                                                                                           \
        int nv = S / (vok ? (int)VV::n : 1);                                                       \
        if (nv <= 8)                                                                               \
            SOFTMAX_M(k, 1, 8, __VA_ARGS__);                                                       \
        else if (nv <= 16)                                                                         \
            SOFTMAX_M(k, 1, 16, __VA_ARGS__);                                                      \
        else if (nv <= 32)                                                                         \
            SOFTMAX_M(k, 1, 32, __VA_ARGS__);                                                      \
        else if (nv <= 64)                                                                         \
            SOFTMAX_M(k, 2, 32, __VA_ARGS__);                                                      \
        else if (nv <= 128)                                                                        \
            SOFTMAX_M(k, 4, 32, __VA_ARGS__);                                                      \
        else if (nv <= 256)                                                                        \
            SOFTMAX_M(k, 8, 32, __VA_ARGS__);                                                      \
        else if (nv <= 512)                                                                        \
            SOFTMAX_M(k, 16, 32, __VA_ARGS__);                                                     \
        else                                                                                       \
            die("sequence length %d: the matmul attention takes at most %d", S,                    \
                512 * (vok ? (int)VV::n : 1));                                                     \
    } while (0)
template <typename T>
static void softmax(Gpu *g, int back, T *P, T *Pd, T *dP, int B, int A, int S, uint64_t key,
                    uint32_t thr, float dscale) {
    VTYPES(T);
    bool vok = S % VV::n == 0;
    int rows = B * A * S;
    if (back)
        SOFTMAX_LAUNCH(k_softmax_bwd, dP, (const T *)P, rows, S, key, thr, dscale);
    else
        SOFTMAX_LAUNCH(k_softmax, P, Pd, g->maskbias, rows, A, S, key, thr, dscale);
}

/* colpart [chunk][C] = column sums of x [N, C] over chunks of CROWS rows
 * (mode 1: LayerNorm weight form); returns the number of chunks */
template <typename T>
static int colsum_part(Gpu *g, const void *x, const void *in, const float *mean, const float *rstd,
                       int N, int C, int mode) {
    int chunks = (N + CROWS - 1) / CROWS;
    VTYPES(T);
    VLAUNCH(LAUNCH, vec_ok<T>(g, C), k_colsum_part, dim3(nblk(C, 128), chunks),
            dim3(nblk(C / VV::n, 128), chunks), 128, g->st, (const T *)x, (const T *)in, mean, rstd,
            N, C, g->colpart, mode);
    return chunks;
}

/* grad[C] += column sums of x [N, C] (mode 1: LayerNorm weight form) */
template <typename T>
static void colsum(Gpu *g, const void *x, const void *in, const float *mean, const float *rstd,
                   int N, int C, float *grad, int mode) {
    int chunks = colsum_part<T>(g, x, in, mean, rstd, N, C, mode);
    colsum_finish(g, chunks, C, &grad, 1);
}

/* the gradient buffers dX and dr trade places (a sum was formed in dr) */
static void swap_dx(Gpu *g) {
    void *t = g->dX;
    g->dX = g->dr, g->dr = t;
}

static size_t tsize(const Gpu *g) { return g->bf16 ? sizeof(bf16) : sizeof(float); }

static void free_acts(Gpu *g) {
    void **f[] = {(void **)&g->ids,
                  (void **)&g->seg,
                  (void **)&g->mrow,
                  (void **)&g->mlabel,
                  (void **)&g->nsp,
                  (void **)&g->clsrow,
                  (void **)&g->el[0].rows,
                  (void **)&g->el[0].sstart,
                  (void **)&g->el[0].sdst,
                  (void **)&g->el[0].mkey,
                  (void **)&g->el[0].mslot,
                  (void **)&g->el[1].rows,
                  (void **)&g->el[1].sstart,
                  (void **)&g->el[1].sdst,
                  (void **)&g->el[1].mkey,
                  (void **)&g->el[1].mslot,
                  (void **)&g->epart,
                  (void **)&g->maskbias,
                  &g->e,
                  &g->x0,
                  &g->qkv,
                  &g->qp,
                  &g->kp,
                  &g->vp,
                  &g->P,
                  &g->Pd,
                  &g->ctxp,
                  &g->ctx,
                  &g->y,
                  &g->r1,
                  &g->x1,
                  &g->hpre,
                  &g->h,
                  &g->r2,
                  &g->x2,
                  (void **)&g->em,
                  (void **)&g->es,
                  (void **)&g->lnab,
                  (void **)&g->m1,
                  (void **)&g->s1,
                  (void **)&g->m2,
                  (void **)&g->s2,
                  &g->pin,
                  &g->ppre,
                  &g->pooled,
                  &g->nsplog,
                  &g->tin,
                  &g->tpre,
                  &g->tg,
                  &g->tr,
                  &g->tln,
                  &g->logits,
                  (void **)&g->tm,
                  (void **)&g->ts,
                  &g->dX,
                  &g->dr,
                  &g->dy,
                  &g->dH,
                  &g->dctx,
                  &g->dP,
                  &g->dqkvp,
                  &g->dqkv,
                  &g->dt,
                  &g->dt2,
                  &g->dpool,
                  &g->dpin,
                  (void **)&g->colpart,
                  (void **)&g->rowloss,
                  (void **)&g->nsploss,
                  (void **)&g->rowcorrect,
                  (void **)&g->nspcorrect,
                  &g->qkvl,
                  (void **)&g->rmax,
                  (void **)&g->rinv,
                  (void **)&g->rdi,
                  (void **)&g->dbits};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        dfree(*f[i]), *f[i] = NULL;
    for (int i = 0; i < 2; i++)
        if (g->host[i]) cudaFreeHost(g->host[i]), g->host[i] = NULL;
    g->capB = g->capS = g->capM = 0;
}

/* the matmul attention's buffers at the capacity */
static void alloc_mattn(Gpu *g) {
    const BertConfig *c = &g->m->c;
    size_t BASS = (size_t)g->capB * c->num_attention_heads * g->capS * g->capS, ts = tsize(g);
    size_t NH = (size_t)g->capB * g->capS * c->hidden_size, L = c->num_hidden_layers;
    g->qkv = dalloc(3 * NH * ts), g->qp = dalloc(L * NH * ts), g->kp = dalloc(L * NH * ts),
    g->vp = dalloc(L * NH * ts);
    g->P = dalloc(L * BASS * ts);
    g->Pd = dalloc((c->attention_probs_dropout_prob > 0 ? L : 1) * BASS * ts);
    g->dP = dalloc(BASS * ts), g->ctxp = dalloc(NH * ts), g->dqkvp = dalloc(3 * NH * ts);
}

/* activations for micro-batches up to B x S with M masked slots per row */
static void reserve(Gpu *g, int B, int S, int M) {
    if (B <= g->capB && S <= g->capS && M <= g->capM) return;
    g_sync(g, g->st);
    B = B > g->capB ? B : g->capB, S = S > g->capS ? S : g->capS, M = M > g->capM ? M : g->capM;
    free_acts(g);
    g->capB = B, g->capS = S, g->capM = M;
    const BertConfig *c = &g->m->c;
    size_t N = (size_t)B * S, H = c->hidden_size, I = c->intermediate_size,
           L = c->num_hidden_layers;
    size_t A = c->num_attention_heads, V = c->vocab_size, NM = (size_t)B * (M ? M : 1),
           ts = tsize(g);
    g->ids = (int *)dalloc(N * 4), g->seg = (int *)dalloc(N * 4), g->mrow = (int *)dalloc(NM * 4);
    g->mlabel = (int *)dalloc(NM * 4), g->nsp = (int *)dalloc(B * 4),
    g->clsrow = (int *)dalloc(B * 4);
    for (int i = 0; i < 2; i++) {
        EmbList *e = &g->el[i];
        e->rows = (int *)dalloc(N * 4), e->sstart = (int *)dalloc(SEGCAP(N) * 4),
        e->sdst = (int *)dalloc(SEGCAP(N) * 4);
        e->mkey = (int *)dalloc(MKCAP(N) * 4), e->mslot = (int *)dalloc(MKCAP(N) * 4);
    }
    g->epart = (float *)dalloc((2 * N / ESEG + 2) * H * 4);
    g->maskbias = (float *)dalloc(N * 4);
    g->e = dalloc(N * H * ts), g->x0 = dalloc(N * H * ts);
    if (!g->fattn) {
        alloc_mattn(g);
    } else {
        g->qkvl = dalloc(L * 3 * N * H * ts);
        g->rmax = (float *)dalloc(L * B * A * S * 4), g->rinv = (float *)dalloc(L * B * A * S * 4);
        g->rdi = (float *)dalloc(B * A * S * 4);
        if (c->attention_probs_dropout_prob > 0)
            g->dbits = (uint8_t *)dalloc(L * B * A * S * S / 8);
    }
    g->ctx = dalloc(L * N * H * ts), g->y = dalloc(N * H * ts), g->r1 = dalloc(L * N * H * ts);
    g->x1 = dalloc(L * N * H * ts), g->hpre = dalloc(L * N * I * ts), g->h = dalloc(L * N * I * ts);
    g->r2 = dalloc(L * N * H * ts), g->x2 = dalloc(L * N * H * ts);
    g->em = (float *)dalloc(N * 4), g->es = (float *)dalloc(N * 4),
    g->lnab = (float *)dalloc(2 * N * 4);
    g->m1 = (float *)dalloc(L * N * 4), g->s1 = (float *)dalloc(L * N * 4);
    g->m2 = (float *)dalloc(L * N * 4), g->s2 = (float *)dalloc(L * N * 4);
    g->pin = dalloc(B * H * ts), g->ppre = dalloc(B * H * ts), g->pooled = dalloc(B * H * ts);
    g->nsplog = dalloc(B * 2 * ts);
    g->tin = dalloc(NM * H * ts), g->tpre = dalloc(NM * H * ts), g->tg = dalloc(NM * H * ts);
    g->tr = dalloc(NM * H * ts), g->tln = dalloc(NM * H * ts), g->logits = dalloc(NM * V * ts);
    g->tm = (float *)dalloc(NM * 4), g->ts = (float *)dalloc(NM * 4);
    g->dX = dalloc(N * H * ts), g->dr = dalloc(N * H * ts), g->dy = dalloc(N * H * ts),
    g->dH = dalloc(N * I * ts);
    g->dctx = dalloc(N * H * ts);
    g->dqkv = dalloc(3 * N * H * ts), g->dt = dalloc(NM * H * ts), g->dt2 = dalloc(NM * H * ts);
    g->dpool = dalloc(B * H * ts), g->dpin = dalloc(B * H * ts);
    /* the column sums' partials: the encoder's (I, or 3H for k_ln_bwd_cols and k_qkv_bwd_cols'
     * three sums) over N rows, the MLM head's (V, H) over NM */
    size_t wide = 3 * H > I ? 3 * H : I, pn = (N / CROWS + 2) * wide,
           pm = (NM / CROWS + 2) * (V > wide ? V : wide);
    g->colpart = (float *)dalloc((pn > pm ? pn : pm) * 4);
    g->rowloss = (float *)dalloc(NM * 4), g->rowcorrect = (int *)dalloc(NM * 4);
    g->nsploss = (float *)dalloc(B * 4), g->nspcorrect = (int *)dalloc(B * 4);
    g->host_cap = 3 * N + 2 * ELCAP(N) + 2 * NM + 2 * B + 8;
    for (int i = 0; i < 2; i++)
        CK(cudaMallocHost((void **)&g->host[i], g->host_cap * 4));
}

#define LO(l, t) (g->layer[(size_t)(l)*NLT + (t)])
#define P32(off) (g->p32 + (off))
#define G32(off) (g->g32 + (off))
#define PW(off) ((const char *)g->pw + (off)*tsize(g))
#define AT(buf, i) ((char *)(buf) + (size_t)(i)*tsize(g)) /* element i of a T array */

static int cmp_pair(const void *a, const void *b) {
    const int *x = (const int *)a, *y = (const int *)b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* the embedding list of v[0..N) for k_embed_seg / k_embed_finish: rows
 * grouped by value in order (rows), segments (sstart, sdst), keys with
 * slots (mkey, mslot); nseg and nmkey are set. pairs: 2N scratch ints */
static void emb_lists(const int32_t *v, int N, int *rows, int *sstart, int *sdst, int *mkey,
                      int *mslot, int *pairs, int *nseg, int *nmkey) {
    for (int n = 0; n < N; n++)
        pairs[2 * n] = v[n], pairs[2 * n + 1] = n;
    qsort(pairs, (size_t)N, 2 * sizeof *pairs, cmp_pair);
    for (int n = 0; n < N; n++)
        rows[n] = pairs[2 * n + 1];
    int ns = 0, nk = 0, slot = 0;
    for (int a = 0, b; a < N; a = b) {
        for (b = a + 1; b < N && pairs[2 * b] == pairs[2 * a];)
            b++;
        int key = pairs[2 * a];
        if (b - a <= ESEG) {
            sstart[ns] = a, sdst[ns++] = key;
            continue;
        }
        mkey[nk] = key, mslot[nk++] = slot;
        for (int x = a; x < b; x += ESEG)
            sstart[ns] = x, sdst[ns++] = -(++slot);
    }
    sstart[ns] = N, mslot[nk] = slot;
    *nseg = ns, *nmkey = nk;
}

/* pack the batch into a pinned slot and queue its upload */
static HostBatch upload(Gpu *g, const BertBatch *b) {
    reserve(g, b->B, b->S, b->M);
    int s = g->slot;
    g->slot ^= 1;
    g_sync_event(g, g->host_ev[s]); /* the slot's previous upload is done */
    int *h = g->host[s], B = b->B, S = b->S, N = B * S, M = b->M;
    HostBatch hb = {B, S, 0, 0, {0, 0}, {0, 0}};
    int *ids = h, *seg = ids + N, *mrow = seg + N, *mlab = mrow + B * (M ? M : 1),
        *nsp = mlab + B * (M ? M : 1);
    int *cls = nsp + B, *el = cls + B;
    float *mb = (float *)(el + 2 * ELCAP(N));
    memcpy(ids, b->input_ids, (size_t)N * 4);
    memcpy(seg, b->segment_ids, (size_t)N * 4);
    for (int n = 0; n < N; n++)
        mb[n] = b->input_mask[n] ? 0.0f : -10000.0f;
    for (int r = 0; r < B; r++) {
        nsp[r] = b->next_sentence_labels[r], cls[r] = r * S;
        for (int k = 0; k < M; k++) {
            int32_t p = b->masked_lm_positions[r * M + k];
            if (p == 0) break;
            mrow[hb.nm] = r * S + p, mlab[hb.nm] = b->masked_lm_ids[r * M + k], hb.nm++;
        }
    }
    /* The head runs on B x M rows whatever the number of masked tokens: the
     * padding rows read row 0, have no label (no loss, a zero gradient) and
     * are not scattered back. One shape a step for its matmuls, instead of a
     * new one almost every step (each new shape costs cuBLAS a kernel choice
     * and, the first time, a module load: milliseconds of an idle GPU). */
    hb.np = hb.nm ? B * M : 0;
    for (int j = hb.nm; j < hb.np; j++)
        mrow[j] = 0, mlab[j] = -1;
    /* one copy per array (their device homes are separate allocations) */
    struct {
        void *dst;
        const void *src;
        size_t n;
    } cp[32] = {{g->ids, ids, (size_t)N},       {g->seg, seg, (size_t)N},
                {g->mrow, mrow, (size_t)hb.np}, {g->mlabel, mlab, (size_t)hb.np},
                {g->nsp, nsp, (size_t)B},       {g->clsrow, cls, (size_t)B},
                {g->maskbias, mb, (size_t)N}};
    size_t ncp = 7;
    int *pairs = (int *)xmalloc((size_t)N * 2 * sizeof *pairs);
    for (int i = 0; i < 2; i++) {
        int *rows = el, *ss = rows + N, *sd = ss + SEGCAP(N), *mk = sd + SEGCAP(N),
            *ms = mk + MKCAP(N);
        el = ms + MKCAP(N);
        emb_lists(i ? b->segment_ids : b->input_ids, N, rows, ss, sd, mk, ms, pairs, &hb.nseg[i],
                  &hb.nmkey[i]);
        const EmbList *e = &g->el[i];
        size_t ns = (size_t)hb.nseg[i], nk = (size_t)hb.nmkey[i];
        cp[ncp++] = {e->rows, rows, (size_t)N}, cp[ncp++] = {e->sstart, ss, ns + 1},
        cp[ncp++] = {e->sdst, sd, ns};
        cp[ncp++] = {e->mkey, mk, nk}, cp[ncp++] = {e->mslot, ms, nk + 1};
    }
    free(pairs);
    for (size_t i = 0; i < ncp; i++)
        if (cp[i].n)
            CK(cudaMemcpyAsync(cp[i].dst, cp[i].src, cp[i].n * 4, cudaMemcpyHostToDevice, g->st));
    CK(cudaEventRecord(g->host_ev[s], g->st));
    return hb;
}

/* ---- forward and backward ---- */

/* the fused attention serves this batch shape (the head size was checked
 * when the backend opened) */
static int use_fattn(const Gpu *g, int B, int S) {
    return g->fattn && S % 16 == 0 && (long long)B * g->m->c.num_attention_heads <= 65535;
}

#define BF(p) ((const bf16 *)(const void *)(p))

/* the fused attention's arguments for layer l (qkv: its Q/K/V output) */
static AttnArgs attn_args(Gpu *g, int l, const void *qkv, int B, int S, uint64_t key, uint32_t thr,
                          float dscale) {
    const BertConfig *c = &g->m->c;
    int A = c->num_attention_heads;
    size_t r = (size_t)l * B * A * S;
    uint8_t *bits = thr ? g->dbits + r * S / 8 : NULL;
    AttnArgs a = {BF(qkv),
                  {P32(LO(l, QB)), P32(LO(l, KB)), P32(LO(l, VB))},
                  g->maskbias,
                  g->rmax + r,
                  g->rinv + r,
                  g->rdi,
                  bits,
                  S,
                  c->hidden_size,
                  A,
                  1.0f / sqrtf((float)(c->hidden_size / A)),
                  key,
                  thr,
                  dscale};
    return a;
}
/* launch fused-attention kernel kern for head size D on B x S, charging
 * flops to the profile */
#define ATTN_LAUNCH(kern, D, flops, B, S, ...)                                                     \
    do {                                                                                           \
        dim3 grid_(nblk((size_t)(S), AROWS), (unsigned)((B)*g->m->c.num_attention_heads));         \
        if ((D) == 16)                                                                             \
            LAUNCH_COOP_RAW(kern<1>, grid_, 32 * AWARPS, g->st, __VA_ARGS__);                      \
        else if ((D) == 32)                                                                        \
            LAUNCH_COOP_RAW(kern<2>, grid_, 32 * AWARPS, g->st, __VA_ARGS__);                      \
        else                                                                                       \
            LAUNCH_COOP_RAW(kern<4>, grid_, 32 * AWARPS, g->st, __VA_ARGS__);                      \
        LAUNCHED(#kern, (flops));                                                                  \
    } while (0)

template <typename T>
static void forward(Gpu *g, const HostBatch *hb, int drop, uint64_t pkey, float scale) {
    const BertConfig *c = &g->m->c;
    int B = hb->B, S = hb->S, N = B * S, H = c->hidden_size, I = c->intermediate_size,
        A = c->num_attention_heads;
    int L = c->num_hidden_layers, V = c->vocab_size, D = H / A, nm = hb->nm, np = hb->np;
    size_t NH = (size_t)N * H, NI = (size_t)N * I, BASS = (size_t)B * A * S * S;
    float eps = c->layer_norm_eps, hp = drop ? c->hidden_dropout_prob : 0,
          ap = drop ? c->attention_probs_dropout_prob : 0;
    uint32_t hthr = dropout_threshold(hp), athr = dropout_threshold(ap);
    float hs = hp > 0 ? 1.0f / (1.0f - hp) : 1.0f, as = ap > 0 ? 1.0f / (1.0f - ap) : 1.0f;
    cudaStream_t st = g->st;
    unsigned rows_blk = nblk(N, WARPS);
    VTYPES(T);
    bool vh = vec_ok<T>(g, H), vi = vec_ok<T>(g, I), vd = vec_ok<T>(g, H / A);
    VLAUNCH(LAUNCH_COOP, vh, k_embed_ln, rows_blk, rows_blk, 32 * WARPS, st, g->ids, g->seg,
            P32(g->outer[WTE]), P32(g->outer[WPE]), P32(g->outer[WTT]), P32(g->outer[ELNW]),
            P32(g->outer[ELNB]), (T *)g->e, (T *)g->x0, g->em, g->es, N, S, H, eps,
            dropout_site_key(pkey, 0), hthr, hs);
    const void *x = g->x0;
    int fused = use_fattn(g, B, S);
    if (!fused && g->fattn && !g->P)
        info(2,
             "sequence length %d (x %d rows) is not served by the fused attention (a multiple of "
             "16, at most "
             "65535 / heads rows): the matmul attention takes such batches",
             S, B);
    if (!fused && !g->P) alloc_mattn(g);
    for (int l = 0; l < L; l++) {
        T *ctx = (T *)AT(g->ctx, l * NH), *r1 = (T *)AT(g->r1, l * NH);
        T *x1 = (T *)AT(g->x1, l * NH), *hpre = (T *)AT(g->hpre, l * NI),
          *h = (T *)AT(g->h, l * NI);
        T *r2 = (T *)AT(g->r2, l * NH), *x2 = (T *)AT(g->x2, l * NH);
        uint64_t akey = dropout_site_key(pkey, 1 + 3 * l);
        if (fused) {
            /* Q, K, V: one matmul with the [3H, H] weights -> qkv [N][3H], kept; the biases are
             * added as read */
            void *qkv = AT(g->qkvl, 3 * l * NH);
            gemm_xwT(g, x, PW(LO(l, QW)), qkv, N, H, 3 * H, 0.0f, dtype_of(g->bf16));
            AttnArgs aa = attn_args(g, l, qkv, B, S, akey, athr, as);
            ATTN_LAUNCH(k_attn_fwd, D, 6.0 * B * A * S * S * D, B, S, aa, (bf16 *)ctx);
        } else {
            T *qp = (T *)AT(g->qp, l * NH), *kp = (T *)AT(g->kp, l * NH),
              *vp = (T *)AT(g->vp, l * NH);
            gemm_xwT(g, x, PW(LO(l, QW)), g->qkv, N, H, 3 * H, 0.0f, dtype_of(g->bf16));
            VLAUNCH(LAUNCH, vd, k_qkv_bias_split, N, N, row_threads(3 * H / (vd ? VV::n : 1)), st,
                    (const T *)g->qkv, P32(LO(l, QB)), P32(LO(l, KB)), P32(LO(l, VB)), qp, kp, vp,
                    N, S, H, A);
            T *P = (T *)AT(g->P, l * BASS),
              *Pd = athr ? (T *)AT(g->Pd, l * BASS) : NULL; /* kept for backward */
            /* scores = q k^T / sqrt(D) per head: row-major [S, S] = Q K^T */
            bgemm(g, CUBLAS_OP_T, CUBLAS_OP_N, S, S, D, 1.0f / sqrtf((float)D), kp, D,
                  (long long)S * D, qp, D, (long long)S * D, P, S, (long long)S * S, B * A);
            softmax<T>(g, 0, P, Pd, NULL, B, A, S, akey, athr, as);
            /* ctx = P' V per head: [S, D] = [S, S] [S, D] */
            bgemm(g, CUBLAS_OP_N, CUBLAS_OP_N, D, S, S, 1.0f, vp, D, (long long)S * D,
                  athr ? (void *)Pd : (void *)P, S, (long long)S * S, g->ctxp, D, (long long)S * D,
                  B * A);
            VLAUNCH(LAUNCH, vd, k_permute, N, N, row_threads(H / (vd ? VV::n : 1)), st,
                    (const T *)g->ctxp, ctx, N, S, H, A, 1);
        }
        gemm_xwT(g, ctx, PW(LO(l, AOW)), g->y, N, H, H, 0.0f, dtype_of(g->bf16));
        VLAUNCH(LAUNCH_COOP, vh, k_bias_drop_res_ln, rows_blk, rows_blk, 32 * WARPS, st,
                (const T *)g->y, P32(LO(l, AOB)), (const T *)x, P32(LO(l, LN1W)), P32(LO(l, LN1B)),
                r1, x1, g->m1 + (size_t)l * N, g->s1 + (size_t)l * N, N, H, eps,
                dropout_site_key(pkey, 2 + 3 * l), hthr, hs);
        gemm_xwT(g, x1, PW(LO(l, IW)), hpre, N, H, I, 0.0f, dtype_of(g->bf16));
        VLAUNCH(LAUNCH, vi, k_bias_gelu, nblk(NI, TH), nblk(NI / VV::n, TH), TH, st,
                (const T *)hpre, h, P32(LO(l, IB)), NI, I);
        gemm_xwT(g, h, PW(LO(l, OW)), g->y, N, I, H, 0.0f, dtype_of(g->bf16));
        VLAUNCH(LAUNCH_COOP, vh, k_bias_drop_res_ln, rows_blk, rows_blk, 32 * WARPS, st,
                (const T *)g->y, P32(LO(l, OB)), x1, P32(LO(l, LN2W)), P32(LO(l, LN2B)), r2, x2,
                g->m2 + (size_t)l * N, g->s2 + (size_t)l * N, N, H, eps,
                dropout_site_key(pkey, 3 + 3 * l), hthr, hs);
        x = x2;
    }
    /* NSP head */
    LAUNCH(k_gather<T>, nblk((size_t)B * H, TH), TH, st, (const T *)x, g->clsrow, B, H,
           (T *)g->pin);
    gemm_xwT(g, g->pin, PW(g->outer[POOLW]), g->ppre, B, H, H, 0.0f, dtype_of(g->bf16));
    LAUNCH(k_bias_act<T>, nblk((size_t)B * H, TH), TH, st, (T *)g->ppre, (T *)g->pooled,
           P32(g->outer[POOLB]), (size_t)B * H, H, 1);
    gemm_xwT(g, g->pooled, PW(g->outer[NSPW]), g->nsplog, B, H, 2, 0.0f, dtype_of(g->bf16));
    LAUNCH(k_bias_act<T>, nblk((size_t)B * 2, TH), TH, st, (T *)g->nsplog, (T *)g->nsplog,
           P32(g->outer[NSPB]), (size_t)B * 2, 2, 2);
    LAUNCH(k_nsp_ce<T>, nblk(B, 128), 128, st, (T *)g->nsplog, g->nsp, B, scale / B, g->nsploss,
           g->nspcorrect);
    /* MLM head at the masked tokens */
    if (nm) {
        LAUNCH(k_gather<T>, nblk((size_t)np * H, TH), TH, st, (const T *)x, g->mrow, np, H,
               (T *)g->tin);
        gemm_xwT(g, g->tin, PW(g->outer[TRW]), g->tpre, np, H, H, 0.0f, dtype_of(g->bf16));
        LAUNCH(k_bias_act<T>, nblk((size_t)np * H, TH), TH, st, (T *)g->tpre, (T *)g->tg,
               P32(g->outer[TRB]), (size_t)np * H, H, 0);
        VLAUNCH(LAUNCH_COOP, vh, k_bias_drop_res_ln, nblk(np, WARPS), nblk(np, WARPS), 32 * WARPS,
                st, (const T *)g->tg, NULL, NULL, P32(g->outer[TLNW]), P32(g->outer[TLNB]),
                (T *)g->tr, (T *)g->tln, g->tm, g->ts, np, H, eps, 0, 0, 1.0f);
        gemm_xwT(g, g->tln, PW(g->outer[DECW]), g->logits, np, H, V, 0.0f, dtype_of(g->bf16));
        LAUNCH(k_bias_act<T>, nblk((size_t)np * V, TH), TH, st, (T *)g->logits, (T *)g->logits,
               P32(g->outer[MLMBIAS]), (size_t)np * V, V, 2);
        LAUNCH_COOP(k_mlm_ce<T>, np, 256, st, (T *)g->logits, g->mlabel, V, scale / nm, g->rowloss,
                    g->rowcorrect);
    }
    LAUNCH(k_stats, 1, 1, st, g->stats, g->rowloss, g->rowcorrect, nm, g->nsploss, g->nspcorrect, B,
           scale);
}

/* queue the sum over ranks of grads [a, b) on the communication stream once
 * the compute stream has produced them */
static void reduce_range(Gpu *g, size_t a, size_t b) {
    CK(cudaEventRecord(g->ev, g->st));
    CK(cudaStreamWaitEvent(g->cst, g->ev, 0));
    if (!g->zero) {
        comm_allreduce_f32(g->comm, g->g32 + a, b - a, g->cst);
        return;
    }
    for (int r = 0; r < g->world; r++) { /* ZeRO: each piece to the rank that updates it */
        size_t lo = a > g->zs[r] ? a : g->zs[r],
               hi = b < g->zs[r] + g->zn[r] ? b : g->zs[r] + g->zn[r];
        if (lo < hi) comm_reduce_f32(g->comm, g->g32 + lo, hi - lo, r, g->cst);
    }
}

/* The backward pass of out = LN(dropout(in W^T + b) + res), one of a
 * layer's two sublayer outputs (LN weight, bias follow tensor lnw; W, b
 * follow tensor w): from d(out) in g->dX, the LayerNorm's and the linear
 * layer's parameter gradients, d(res) = d(r) into g->dr and d(in) [N, K]
 * into din. */
template <typename T>
static void sublayer_bwd(Gpu *g, int l, int lnw, int w, const T *r, const float *mean,
                         const float *rstd, const void *in, int K, uint64_t key, uint32_t thr,
                         float dscale, int N, void *din) {
    int H = g->m->c.hidden_size;
    T *dX = (T *)g->dX, *dr = (T *)g->dr, *dy = thr ? (T *)g->dy : dr;
    int chunks = (N + CROWS - 1) / CROWS;
    VTYPES(T);
    VLAUNCH(LAUNCH_COOP, vec_ok<T>(g, H), k_ln_rowstats, nblk(N, WARPS), nblk(N, WARPS), 32 * WARPS,
            g->st, dX, r, P32(LO(l, lnw)), mean, rstd, g->lnab, N, H);
    VLAUNCH(LAUNCH, vec_ok<T>(g, H), k_ln_bwd_cols, dim3(nblk(H, 128), chunks),
            dim3(nblk(H / VV::n, 128), chunks), 128, g->st, dX, r, P32(LO(l, lnw)), mean, rstd,
            g->lnab, dr, dy, N, H, key, thr, dscale, g->colpart);
    float *grads[3] = {G32(LO(l, lnw)), G32(LO(l, lnw + 1)), G32(LO(l, w + 1))};
    colsum_finish(g, chunks, H, grads, 3);
    gemm_dW(g, dy, in, G32(LO(l, w)), N, K, H);
    gemm_dyW(g, dy, PW(LO(l, w)), din, N, K, H, 0.0f);
}

template <typename T>
static void backward(Gpu *g, const HostBatch *hb, int drop, uint64_t pkey, int first, int last) {
    const BertConfig *c = &g->m->c;
    int B = hb->B, S = hb->S, N = B * S, H = c->hidden_size, I = c->intermediate_size,
        A = c->num_attention_heads;
    int L = c->num_hidden_layers, V = c->vocab_size, D = H / A, nm = hb->nm, np = hb->np;
    size_t NH = (size_t)N * H, NI = (size_t)N * I, BASS = (size_t)B * A * S * S, ts = tsize(g);
    float hp = drop ? c->hidden_dropout_prob : 0, ap = drop ? c->attention_probs_dropout_prob : 0;
    uint32_t hthr = dropout_threshold(hp), athr = dropout_threshold(ap);
    float hs = hp > 0 ? 1.0f / (1.0f - hp) : 1.0f, as = ap > 0 ? 1.0f / (1.0f - ap) : 1.0f;
    float scale = 1.0f / sqrtf((float)D);
    int fused = use_fattn(g, B, S);
    int comm = last && g->world > 1, chunks = (N + CROWS - 1) / CROWS;
    cudaStream_t st = g->st;
    unsigned rows_blk = nblk(N, WARPS);
    VTYPES(T);
    bool vh = vec_ok<T>(g, H), vd = vec_ok<T>(g, D);
    T *dX = (T *)g->dX, *dr = (T *)g->dr;
    CK(cudaMemsetAsync(dX, 0, NH * ts, st));
    g->wbeta = first ? 0.0f : 1.0f;
    if (first &&
        !nm) { /* no masked token: the MLM head's matmuls, which would set these, do not run */
        CK(cudaMemsetAsync(G32(g->outer[DECW]), 0, (size_t)V * H * 4, st));
        CK(cudaMemsetAsync(G32(g->outer[TRW]), 0, (size_t)H * H * 4, st));
    }

    /* MLM head: logits hold d(loss)/d(logits) */
    if (nm) {
        gemm_dyW(g, g->logits, PW(g->outer[DECW]), g->dt, np, H, V, 0.0f);
        gemm_dW(g, g->logits, g->tln, G32(g->outer[DECW]), np, H, V);
        colsum<T>(g, g->logits, NULL, NULL, NULL, np, V, G32(g->outer[MLMBIAS]), 0);
        VLAUNCH(LAUNCH_COOP, vh, k_ln_bwd, nblk(np, WARPS), nblk(np, WARPS), 32 * WARPS, st,
                (const T *)g->dt, (const T *)g->tr, P32(g->outer[TLNW]), g->tm, g->ts, (T *)g->dt2,
                np, H);
        colsum<T>(g, g->dt, g->tr, g->tm, g->ts, np, H, G32(g->outer[TLNW]), 1);
        colsum<T>(g, g->dt, NULL, NULL, NULL, np, H, G32(g->outer[TLNB]), 0);
        LAUNCH(k_act_bwd<T>, nblk((size_t)np * H, TH), TH, st, (T *)g->dt2, (const T *)g->tpre,
               (size_t)np * H, 0);
        gemm_dyW(g, g->dt2, PW(g->outer[TRW]), g->dt, np, H, H, 0.0f);
        gemm_dW(g, g->dt2, g->tin, G32(g->outer[TRW]), np, H, H);
        colsum<T>(g, g->dt2, NULL, NULL, NULL, np, H, G32(g->outer[TRB]), 0);
        LAUNCH(k_scatter_add<T>, nblk((size_t)nm * H, TH), TH, st, dX, g->mrow, (const T *)g->dt,
               nm, H);
    }
    /* NSP head: nsplog holds d(loss)/d(logits) */
    gemm_dyW(g, g->nsplog, PW(g->outer[NSPW]), g->dpool, B, H, 2, 0.0f);
    gemm_dW(g, g->nsplog, g->pooled, G32(g->outer[NSPW]), B, H, 2);
    colsum<T>(g, g->nsplog, NULL, NULL, NULL, B, 2, G32(g->outer[NSPB]), 0);
    LAUNCH(k_act_bwd<T>, nblk((size_t)B * H, TH), TH, st, (T *)g->dpool, (const T *)g->pooled,
           (size_t)B * H, 1);
    gemm_dyW(g, g->dpool, PW(g->outer[POOLW]), g->dpin, B, H, H, 0.0f);
    gemm_dW(g, g->dpool, g->pin, G32(g->outer[POOLW]), B, H, H);
    colsum<T>(g, g->dpool, NULL, NULL, NULL, B, H, G32(g->outer[POOLB]), 0);
    LAUNCH(k_scatter_add<T>, nblk((size_t)B * H, TH), TH, st, dX, g->clsrow, (const T *)g->dpin, B,
           H);
    if (comm) reduce_range(g, g->outer[POOLW], g->np);

    /* encoder, top down; dX is d(layer output) */
    for (int l = L - 1; l >= 0; l--) {
        const void *xin = l ? AT(g->x2, (size_t)(l - 1) * NH) : g->x0;
        T *ctx = (T *)AT(g->ctx, l * NH), *r1 = (T *)AT(g->r1, l * NH);
        T *x1 = (T *)AT(g->x1, l * NH), *hpre = (T *)AT(g->hpre, l * NI),
          *h = (T *)AT(g->h, l * NI);
        T *r2 = (T *)AT(g->r2, l * NH);
        float *m1 = g->m1 + (size_t)l * N, *s1 = g->s1 + (size_t)l * N, *m2 = g->m2 + (size_t)l * N,
              *s2 = g->s2 + (size_t)l * N;
        /* x2 = LN2(r2), r2 = dropout(h Wo^T + bo) + x1 */
        sublayer_bwd<T>(g, l, LN2W, OW, r2, m2, s2, h, I, dropout_site_key(pkey, 3 + 3 * l), hthr,
                        hs, N, g->dH);
        VLAUNCH(LAUNCH, vec_ok<T>(g, I), k_gelu_bwd_cols, dim3(nblk(I, 128), chunks),
                dim3(nblk(I / VV::n, 128), chunks), 128, st, (T *)g->dH, (const T *)hpre,
                P32(LO(l, IB)), N, I, g->colpart);
        float *ib = G32(LO(l, IB)), *qkvb[3] = {G32(LO(l, QB)), G32(LO(l, KB)), G32(LO(l, VB))};
        colsum_finish(g, chunks, I, &ib, 1);
        gemm_dW(g, g->dH, x1, G32(LO(l, IW)), N, H, I);
        /* d(x1) = d(r2) (residual) + dH Wi, added onto dr, which becomes dX */
        gemm_dyW(g, g->dH, PW(LO(l, IW)), dr, N, H, I, 1.0f);
        swap_dx(g), dX = (T *)g->dX, dr = (T *)g->dr;
        /* x1 = LN1(r1), r1 = dropout(ctx Wao^T + bao) + xin */
        sublayer_bwd<T>(g, l, LN1W, AOW, r1, m1, s1, ctx, H, dropout_site_key(pkey, 2 + 3 * l),
                        hthr, hs, N, g->dctx);
        /* attention: d(ctx) -> dqkv [N][3H] (row n: dq, dk, dv) and the biases' gradients */
        uint64_t akey = dropout_site_key(pkey, 1 + 3 * l);
        if (fused) {
            AttnArgs aa = attn_args(g, l, AT(g->qkvl, 3 * l * NH), B, S, akey, athr, as);
            ATTN_LAUNCH(k_attn_bwd_q, D, 6.0 * B * A * S * S * D, B, S, aa, BF(ctx), BF(g->dctx),
                        (bf16 *)g->dqkv);
            ATTN_LAUNCH(k_attn_bwd_kv, D, 8.0 * B * A * S * S * D, B, S, aa, BF(g->dctx),
                        (bf16 *)g->dqkv);
            colsum_part<T>(g, g->dqkv, NULL, NULL, NULL, N, 3 * H, 0);
            { /* the three biases' columns, 3H apart */
                Grads3 gr = {{qkvb[0], qkvb[1], qkvb[2]}};
                LAUNCH_COOP(k_colsum_finish, dim3(nblk(H, 32), 3), 32 * FGROUPS, st, g->colpart,
                            (size_t)H, chunks, H, 3 * H, gr);
            }
        } else {
            T *qp = (T *)AT(g->qp, l * NH), *kp = (T *)AT(g->kp, l * NH),
              *vp = (T *)AT(g->vp, l * NH);
            T *dctxp = (T *)g->ctxp, *dqp = (T *)g->dqkvp, *dkp = (T *)AT(g->dqkvp, NH);
            T *dvp = (T *)AT(g->dqkvp, 2 * NH);
            T *P = (T *)AT(g->P, l * BASS);
            VLAUNCH(LAUNCH, vd, k_permute, N, N, row_threads(H / (vd ? VV::n : 1)), st,
                    (const T *)g->dctx, dctxp, N, S, H, A, 0);
            const void *Pdp = athr ? (const void *)AT(g->Pd, l * BASS)
                                   : (const void *)P; /* the forward's dropout(P) */
            bgemm(g, CUBLAS_OP_T, CUBLAS_OP_N, S, S, D, 1.0f, vp, D, (long long)S * D, dctxp, D,
                  (long long)S * D, g->dP, S, (long long)S * S, B * A);
            bgemm(g, CUBLAS_OP_N, CUBLAS_OP_T, D, S, S, 1.0f, dctxp, D, (long long)S * D, Pdp, S,
                  (long long)S * S, dvp, D, (long long)S * D, B * A);
            softmax<T>(g, 1, P, NULL, (T *)g->dP, B, A, S, akey, athr, as);
            bgemm(g, CUBLAS_OP_N, CUBLAS_OP_N, D, S, S, scale, kp, D, (long long)S * D, g->dP, S,
                  (long long)S * S, dqp, D, (long long)S * D, B * A);
            bgemm(g, CUBLAS_OP_N, CUBLAS_OP_T, D, S, S, scale, qp, D, (long long)S * D, g->dP, S,
                  (long long)S * S, dkp, D, (long long)S * D, B * A);
            VLAUNCH(LAUNCH, vd, k_qkv_bwd_cols, dim3(nblk(H, 128), 3 * chunks),
                    dim3(nblk(H / VV::n, 128), 3 * chunks), 128, st, (const T *)g->dqkvp,
                    (T *)g->dqkv, N, S, H, A, chunks, g->colpart);
            colsum_finish(g, chunks, H, qkvb, 3);
        }
        {
            float alpha = 1.0f, beta = g->wbeta;
            cudaDataType ty = dtype_of(g->bf16);
            CKB(cublasGemmStridedBatchedEx(g->blas, CUBLAS_OP_N, CUBLAS_OP_T, H, H, N, &alpha, xin,
                                           ty, H, 0, g->dqkv, ty, 3 * H, (long long)H, &beta,
                                           G32(LO(l, QW)), CUDA_R_32F, H, (long long)H * H + H, 3,
                                           CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
            prof_gemm(H, H, N, 3);
        }
        /* d(xin) = dr1 (residual) + the three projections' input gradients,
         * added onto dr, which then becomes dX (the buffers swap) */
        gemm_dyW(g, g->dqkv, PW(LO(l, QW)), dr, N, H, 3 * H, 1.0f);
        swap_dx(g), dX = (T *)g->dX, dr = (T *)g->dr;
        if (comm) reduce_range(g, LO(l, QW), LO(l, LN2B) + (size_t)H);
    }

    /* embeddings: x0 = dropout(LN(e)) */
    if (hthr)
        LAUNCH(k_dropout<T>, nblk(NH, TH), TH, st, dX, dX, NH, dropout_site_key(pkey, 0), hthr, hs);
    VLAUNCH(LAUNCH_COOP, vh, k_ln_bwd, rows_blk, rows_blk, 32 * WARPS, st, dX, (const T *)g->e,
            P32(g->outer[ELNW]), g->em, g->es, dr, N, H);
    colsum<T>(g, dX, g->e, g->em, g->es, N, H, G32(g->outer[ELNW]), 1);
    colsum<T>(g, dX, NULL, NULL, NULL, N, H, G32(g->outer[ELNB]), 0);
    for (int i = 0; i < 2; i++) {
        const EmbList *e = &g->el[i];
        float *grad = G32(g->outer[i ? WTT : WTE]);
        LAUNCH(k_embed_seg<T>, hb->nseg[i], 256, st, dr, e->rows, e->sstart, e->sdst, H, grad,
               g->epart);
        if (hb->nmkey[i])
            LAUNCH(k_embed_finish, hb->nmkey[i], 256, st, g->epart, e->mkey, e->mslot, H, grad);
    }
    LAUNCH(k_pos_grad<T>, S, 256, st, dr, B, S, H, G32(g->outer[WPE]));
    if (comm) reduce_range(g, 0, LO(0, QW));
    CK(cudaGetLastError());
}

/* ---- the backend ---- */

static void g_zero_grad(void *p) {
    Gpu *g = (Gpu *)p;
    LAUNCH(k_zero_ranges, g->nz, 256, g->st, g->g32, g->zstart, g->zlen);
    CK(cudaMemsetAsync(g->stats, 0, 8 * sizeof(double), g->st));
    g->micro = 0;
}

static void g_micro_step(void *p, const BertBatch *b, float scale, int dropout, uint64_t key) {
    Gpu *g = (Gpu *)p;
    prof_section("host");
    HostBatch hb = g->staged ? g->staged_hb : upload(g, b);
    g->staged = 0;
    if (g_prof) prof_mark("batch upload and waiting for the host", 0);
    int first = g->micro == 0, last = ++g->micro == g->o.accum;
    if (g->bf16) {
        prof_section("forward");
        forward<bf16>(g, &hb, dropout, key, scale);
        prof_section("backward");
        backward<bf16>(g, &hb, dropout, key, first, last);
    } else {
        prof_section("forward");
        forward<float>(g, &hb, dropout, key, scale);
        prof_section("backward");
        backward<float>(g, &hb, dropout, key, first, last);
    }
}

/* the batch's packing and copy now, for the next g_micro_step */
static void g_stage(void *p, const BertBatch *b) {
    Gpu *g = (Gpu *)p;
    g->staged_hb = upload(g, b);
    g->staged = 1;
}

static void g_opt_step(void *p, float lr) {
    Gpu *g = (Gpu *)p;
    Optim *o = g->opt;
    const OptimConfig *c = &o->c;
    prof_section("optimizer");
    if (g->world > 1) {
        CK(cudaEventRecord(g->comm_done, g->cst));
        CK(cudaStreamWaitEvent(g->st, g->comm_done, 0));
        if (g_prof) prof_mark("waiting for the gradient all-reduce", 0);
    }
    WRONG_GRAD(g);
    o->step++;
    cudaStream_t st = g->st;
    float inv_world = 1.0f / (float)g->world;
    /* this rank's chunks (all of them without ZeRO); with ZeRO the
     * per-chunk norms of the others come by a sum in which each chunk has
     * one non-zero term, so every rank adds the same numbers in order */
    int r = g->zero ? g->rank : 0, c0 = g->zc[r], nc = g->zc[r + 1] - c0;
    if (g->zero) CK(cudaMemsetAsync(g->part, 0, (size_t)g->nchunks * sizeof(double), st));
    if (nc) LAUNCH_COOP(k_sumsq, nc, 256, st, g->g32, g->cstart, g->clen, c0, g->part);
    if (g->zero) comm_allreduce_f64(g->comm, g->part, (size_t)g->nchunks, st);
    LAUNCH_COOP(k_norm, 1, 256, st, g->part, g->nchunks, 1.0 / g->world, g->norm);
    double bc1 = 1.0 - pow(c->beta1, (double)o->step), bc2 = 1.0 - pow(c->beta2, (double)o->step);
    if (c->kind == OPT_LAMB) {
        if (g->zero) CK(cudaMemsetAsync(g->part2, 0, (size_t)g->nchunks * 2 * sizeof(double), st));
        if (nc)
            LAUNCH_COOP(k_lamb1, nc, 256, st, g->p32, g->g32, g->m32, g->v32, g->za, g->cstart,
                        g->clen, c0, g->ctensor, g->twd, g->norm, inv_world, c->max_grad_norm,
                        c->beta1, c->beta2, c->eps, (float)(1.0 / bc1), (float)(1.0 / bc2),
                        g->part2);
        if (g->zero) comm_allreduce_f64(g->comm, g->part2, (size_t)g->nchunks * 2, st);
        LAUNCH_COOP(k_lamb_ratio, nblk(g->ntensors, WARPS), 32 * WARPS, st, g->part2, g->tchunk0,
                    g->tnchunks, g->twd, g->ntensors, lr, g->ratio);
        if (nc)
            LAUNCH(k_lamb3, nc, 256, st, g->p32, g->g32, g->pw, g->bf16, g->cpw, g->cstart, g->clen,
                   c0, g->ctensor, g->ratio);
    } else if (nc) {
        LAUNCH(k_adamw, nc, 256, st, g->p32, g->g32, g->m32, g->v32, g->za, g->pw, g->bf16, g->cpw,
               g->cstart, g->clen, c0, g->ctensor, g->twd, g->norm, inv_world, c->max_grad_norm, lr,
               c->beta1, c->beta2, c->eps, (float)(lr / bc1), (float)sqrt(bc2));
    }
    if (g->zero) { /* every rank's updated weights to all, then the matmul copy */
        comm_broadcast_ranges_f32(g->comm, g->p32, g->zs, g->zn, st);
        LAUNCH(k_to_pw, g->nchunks, 256, st, g->p32, g->pw, g->bf16, g->cpw, g->cstart, g->clen, 0);
    }
    CK(cudaGetLastError());
    if (g_prof) {
        if (!g_prof->keep)
            prof_flush(0), g_prof->keep = 1; /* the first step: warm-up */
        else
            g_prof->steps++;
    }
}

static void g_stats(void *p, TrainStats *s) {
    Gpu *g = (Gpu *)p;
    DIE_POINT(g, "stats");
    comm_allreduce_f64(g->comm, g->stats, 8, g->st);
    double *h = (double *)g_pinned(g, 9 * sizeof(double)), nm;
    CK(cudaMemcpyAsync(h, g->stats, 8 * sizeof *h, cudaMemcpyDeviceToHost, g->st));
    CK(cudaMemcpyAsync(h + 8, g->norm, sizeof *h, cudaMemcpyDeviceToHost, g->st));
    g_sync(g, g->st);
    nm = h[8];
    double w = g->world;
    *s = (TrainStats){h[0] / w,      h[1] / w,      h[2] / w,      (int64_t)h[3],
                      (int64_t)h[4], (int64_t)h[5], (int64_t)h[6], nm};
}

static void g_eval(void *p, const BertBatch *b, BertLoss *l) {
    Gpu *g = (Gpu *)p;
    HostBatch hb = upload(g, b);
    CK(cudaMemsetAsync(g->stats, 0, 8 * sizeof(double), g->st));
    if (g->bf16)
        forward<bf16>(g, &hb, 0, 0, 1.0f);
    else
        forward<float>(g, &hb, 0, 0, 1.0f);
    CK(cudaGetLastError());
    double *h = (double *)g_pinned(g, 8 * sizeof(double));
    CK(cudaMemcpyAsync(h, g->stats, 8 * sizeof *h, cudaMemcpyDeviceToHost, g->st));
    g_sync(g, g->st);
    *l = (BertLoss){(float)h[0], (float)h[1], (float)h[2], (int)h[3], (int)h[4], (int)h[5]};
}

static void g_to_host(void *p) {
    Gpu *g = (Gpu *)p;
    g_sync(g, g->st);
    g_sync(g, g->cst);
    if (g->zero) { /* the moments' shards to every rank through the gradient buffer (dead
                    * after the optimizer step; zero_grad and the next step's first
                    * micro-batch overwrite it) */
        float *full = g->g32;
        float *mine[2] = {g->m32, g->v32}, *host[2] = {g->opt->m, g->opt->v};
        for (int i = 0; i < 2; i++) {
            CK(cudaMemcpyAsync(full + g->za, mine[i], (g->zb - g->za) * 4, cudaMemcpyDeviceToDevice,
                               g->st));
            comm_broadcast_ranges_f32(g->comm, full, g->zs, g->zn, g->st);
            g_sync(g, g->st);
            if (g->rank == 0) CK(cudaMemcpy(host[i], full, g->np * 4, cudaMemcpyDeviceToHost));
        }
    }
    if (g->rank != 0) return; /* only rank 0 writes checkpoints */
    CK(cudaMemcpy(g->m->params, g->p32, g->np * 4, cudaMemcpyDeviceToHost));
    if (g->zero) return;
    CK(cudaMemcpy(g->opt->m, g->m32, g->np * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(g->opt->v, g->v32, g->np * 4, cudaMemcpyDeviceToHost));
}

/* gpu.h's test hook: the device gradients into m->grads, after the queued
 * work of both streams */
void gpu_backend_grads_to_host(void *p) {
    Gpu *g = (Gpu *)p;
    g_sync(g, g->st);
    g_sync(g, g->cst);
    CK(cudaMemcpy(g->m->grads, g->g32, g->np * 4, cudaMemcpyDeviceToHost));
}

static void g_from_host(void *p) {
    Gpu *g = (Gpu *)p;
    g_sync(g, g->st);
    CK(cudaMemcpyAsync(g->p32, g->m->params, g->np * 4, cudaMemcpyHostToDevice, g->st));
    CK(cudaMemcpyAsync(g->m32, g->opt->m + g->za, (g->zb - g->za) * 4, cudaMemcpyHostToDevice,
                       g->st));
    CK(cudaMemcpyAsync(g->v32, g->opt->v + g->za, (g->zb - g->za) * 4, cudaMemcpyHostToDevice,
                       g->st));
    LAUNCH(k_to_pw, g->nchunks, 256, g->st, g->p32, g->pw, g->bf16, g->cpw, g->cstart, g->clen, 0);
    g_sync(g, g->st);
}

static void g_allgather(void *p, const int64_t *mine, int n, int64_t *all) {
    Gpu *g = (Gpu *)p;
    if (g->world == 1) {
        memcpy(all, mine, (size_t)n * sizeof *all);
        return;
    }
    DIE_POINT(g, "allgather");
    size_t bytes = (size_t)n * (g->world + 1) * sizeof(int64_t);
    /* through pinned memory both ways: [0, n) this rank's, then all of them */
    int64_t *h = (int64_t *)g_pinned(g, bytes), *d = (int64_t *)g->dgather;
    if (bytes > g->dgather_cap) {
        g_sync(g, g->st);
        g_sync(g, g->cst);
        dfree(g->dgather);
        d = (int64_t *)(g->dgather = dalloc(bytes)), g->dgather_cap = bytes;
    }
    memcpy(h, mine, (size_t)n * sizeof *h);
    CK(cudaMemcpyAsync(d, h, (size_t)n * sizeof *d, cudaMemcpyHostToDevice, g->st));
    comm_allgather_i64(g->comm, d, d + n, (size_t)n, g->st);
    CK(cudaMemcpyAsync(h + n, d + n, (size_t)n * g->world * sizeof *d, cudaMemcpyDeviceToHost,
                       g->st));
    g_sync(g, g->st);
    memcpy(all, h + n, (size_t)n * g->world * sizeof *all);
}

static void g_close(void *p) {
    Gpu *g = (Gpu *)p;
    cudaStreamSynchronize(g->st);
    if (g_prof) {
        prof_flush(g_prof->keep);
        if (g->rank == 0) prof_report();
        prof_free();
    }
    free_acts(g);
    if (g->hst) cudaFreeHost(g->hst);
    dfree(g->dgather);
    void *f[] = {g->p32,   g->g32,     g->m32,     g->v32,      g->pw,  g->cpw,   g->cstart,
                 g->clen,  g->ctensor, g->tchunk0, g->tnchunks, g->twd, g->ratio, g->part,
                 g->part2, g->norm,    g->stats,   g->zstart,   g->zlen};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        dfree(f[i]);
    cublasDestroy(g->blas);
    dfree(g->blasws);
    cudaEventDestroy(g->ev), cudaEventDestroy(g->comm_done);
    cudaEventDestroy(g->host_ev[0]), cudaEventDestroy(g->host_ev[1]);
    cudaStreamDestroy(g->st), cudaStreamDestroy(g->cst);
    comm_close(g->comm);
    free(g->layer), free(g->zc), free(g->zs), free(g->zn);
    free(g);
}

static void *upload_array(const void *h, size_t bytes) {
    void *d = dalloc(bytes);
    CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    return d;
}

/* tensor t (bert.c's order) is a weight whose gradient a matmul writes
 * whole (gemm_dW); the word embeddings' only when they are the decoder */
static int mm_weight(int t, int L, int untied) {
    if (t < 5) return t == WTE && !untied;
    if (t < 5 + L * NLT) {
        int j = (t - 5) % NLT;
        return j == QW || j == KW || j == VW || j == AOW || j == IW || j == OW;
    }
    int i = POOLW + (t - 5 - L * NLT);
    return i == POOLW || i == TRW || i == NSPW || i == DECW;
}

/* g->zstart, zlen, nz: the other tensors' elements in runs of at most
 * 65536 (a block of k_zero_ranges each) */
static void zero_ranges(Gpu *g) {
    const Bert *m = g->m;
    int L = m->c.num_hidden_layers, cap = 0, n = 0;
    for (int t = 0; t < m->ntensors; t++)
        cap += (int)(bert_tensor(m, t)->n / 65536) + 1;
    long long *zs = (long long *)xmalloc((size_t)cap * sizeof *zs);
    int *zl = (int *)xmalloc((size_t)cap * sizeof *zl);
    for (int t = 0; t < m->ntensors; t++) {
        const BertTensor *bt = bert_tensor(m, t);
        if (mm_weight(t, L, m->c.untied)) continue;
        for (size_t a = 0; a < bt->n; a += 65536, n++)
            zs[n] = (long long)(bt->off + a), zl[n] = (int)(bt->n - a < 65536 ? bt->n - a : 65536);
    }
    g->nz = n;
    g->zstart = (long long *)upload_array(zs, (size_t)n * sizeof *zs);
    g->zlen = (int *)upload_array(zl, (size_t)n * sizeof *zl);
    free(zs), free(zl);
}

/* join the process group and select this process's GPU; -1 with err */
static int open_device(Gpu *g, const TrainOpts *o, Err *err) {
    if (comm_open(&g->comm, o->rank, o->world, o->local_rank, o->id_file, o->comm_timeout, err))
        return -1;
    g->rank = comm_rank(g->comm), g->world = comm_world(g->comm);
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0)
        return err_set(err, "no CUDA device (%s); train_bert_cpu trains on the CPU",
                       e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    int dev = comm_local_rank(g->comm);
    if (dev >= ndev)
        return err_set(err,
                       "local rank %d, but this node has %d GPU%s: start at most %d processes per "
                       "node (or give "
                       "--local_rank)",
                       dev, ndev, ndev == 1 ? "" : "s", ndev);
    CK(cudaSetDevice(dev));
    if (comm_connect(g->comm, err)) return -1;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    g->ccmajor = prop.major;
    if (g->bf16 && prop.major < 8)
        return err_set(err,
                       "%s (compute capability %d.%d) has no bf16 matmuls: use --precision fp32",
                       prop.name, prop.major, prop.minor);
    snprintf(g->name, sizeof g->name, "cuda %s, %s (GPU %d of %d on this node), %s",
             g->bf16 ? (g->fattn ? "bf16, fused attention" : "bf16") : "fp32", prop.name, dev, ndev,
             comm_describe(g->comm));
    return 0;
}

/* gpu.h: the backend on this process's GPU, its TrainBackend in *be; 0, or
 * -1 with err (nothing left open) */
extern "C" int gpu_backend_open(TrainBackend *be, Bert *m, Optim *opt, const TrainOpts *o,
                                Err *err) {
    Gpu *g = (Gpu *)xcalloc(1, sizeof *g);
    g->m = m, g->opt = opt, g->o = *o, g->bf16 = o->bf16, g->np = m->nparams;
    int hd = m->c.hidden_size / m->c.num_attention_heads;
    g->fattn = g->bf16 && !o->attn_matmul && (hd == 16 || hd == 32 || hd == 64);
    g->toff16 = 1;
    for (int t = 0; t < m->ntensors; t++)
        g->toff16 &= bert_tensor(m, t)->off % 4 == 0;
    g->fattn &= g->toff16; /* its 16-byte loads of the biases */
    if (open_device(g, o, err)) {
        comm_close(g->comm);
        free(g);
        return -1;
    }
    CK(cudaStreamCreateWithFlags(&g->st, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&g->cst, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&g->ev, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&g->comm_done, cudaEventDisableTiming));
    for (int i = 0; i < 2; i++)
        CK(cudaEventCreateWithFlags(&g->host_ev[i], cudaEventDisableTiming));
    g_pinned(g, 4096); /* the small copies' staging, before any work is queued */
    g->dgather = dalloc(4096), g->dgather_cap = 4096;
    CKB(cublasCreate(&g->blas));
    CKB(cublasSetStream(g->blas, g->st));
    CKB(cublasSetMathMode(g->blas, g->bf16 ? CUBLAS_DEFAULT_MATH : CUBLAS_PEDANTIC_MATH));
    /* cuBLAS's recommended workspace: 32 MiB on Hopper, 4 MiB before (one
     * stream uses it, so results stay bit-reproducible); after
     * cublasSetStream, which resets the workspace to the default pool */
    size_t wsb = (size_t)(g->ccmajor >= 9 ? 32 : 4) << 20;
    g->blasws = dalloc(wsb);
    CKB(cublasSetWorkspace(g->blas, g->blasws, wsb));
    if (o->profile) {
        g_prof = (Prof *)xcalloc(1, sizeof *g_prof);
        g_prof->st = g->st, g_prof->comm = g->comm, g_prof->section = "setup";
    }
    /* tensor offsets: 5 embedding tensors, 16 per layer, 9 after, then an
     * untied decoder (bert.c's order) */
    int L = m->c.num_hidden_layers;
    g->layer = (size_t *)xmalloc((size_t)L * NLT * sizeof *g->layer);
    for (int i = 0; i < 5; i++)
        g->outer[i] = bert_tensor(m, i)->off;
    for (int l = 0; l < L; l++)
        for (int t = 0; t < NLT; t++)
            LO(l, t) = bert_tensor(m, 5 + l * NLT + t)->off;
    for (int i = POOLW; i < DECW; i++)
        g->outer[i] = bert_tensor(m, 5 + L * NLT + (i - POOLW))->off;
    g->outer[DECW] =
        m->c.untied ? bert_tensor(m, 5 + L * NLT + (DECW - POOLW))->off : g->outer[WTE];
    g->p32 = (float *)dalloc(g->np * 4), g->g32 = (float *)dalloc(g->np * 4);
    g->pw = dalloc(g->np * tsize(g));
    /* optimizer chunks: up to OCHUNK elements, never across tensors */
    g->ntensors = m->ntensors;
    int cap = 0;
    for (int t = 0; t < m->ntensors; t++)
        cap += (int)((bert_tensor(m, t)->n + OCHUNK - 1) / OCHUNK);
    long long *cs = (long long *)xmalloc((size_t)cap * sizeof *cs);
    int *cl = (int *)xmalloc((size_t)cap * sizeof *cl),
        *ct = (int *)xmalloc((size_t)cap * sizeof *ct);
    int *t0 = (int *)xmalloc((size_t)m->ntensors * sizeof *t0),
        *tn = (int *)xmalloc((size_t)m->ntensors * sizeof *tn);
    float *wd = (float *)xmalloc((size_t)m->ntensors * sizeof *wd);
    /* where each tensor starts in the matmul copy: as in p32, but a layer's
     * Wq bq Wk bk Wv bv become Wq Wk Wv bq bk bv */
    long long *tpw = (long long *)xmalloc((size_t)m->ntensors * sizeof *tpw),
              *cw = (long long *)xmalloc((size_t)cap * sizeof *cw);
    for (int t = 0; t < m->ntensors; t++)
        tpw[t] = (long long)bert_tensor(m, t)->off;
    for (int l = 0; l < L; l++) {
        long long base = (long long)LO(l, QW), HH = (long long)m->c.hidden_size * m->c.hidden_size;
        for (int q = 0; q < 3; q++) {
            tpw[5 + l * NLT + QW + 2 * q] = base + q * HH;
            tpw[5 + l * NLT + QB + 2 * q] = base + 3 * HH + q * (long long)m->c.hidden_size;
        }
    }
    int k = 0;
    for (int t = 0; t < m->ntensors; t++) {
        const BertTensor *bt = bert_tensor(m, t);
        t0[t] = k, wd[t] = bt->decay ? opt->c.weight_decay : 0.0f;
        for (size_t a = 0; a < bt->n; a += OCHUNK, k++) {
            cs[k] = (long long)(bt->off + a),
            cl[k] = (int)(bt->n - a < OCHUNK ? bt->n - a : OCHUNK), ct[k] = t;
            cw[k] = tpw[t] + (long long)a;
        }
        tn[t] = k - t0[t];
    }
    g->nchunks = k;
    /* ZeRO stage 1: chunk i to rank floor(start * world / np), so ranks get
     * runs of whole chunks of about np / world elements; else all to rank 0 */
    g->zero = o->zero && g->world > 1;
    int W = g->zero ? g->world : 1;
    g->zc = (int *)xcalloc((size_t)W + 1, sizeof *g->zc);
    g->zs = (size_t *)xcalloc((size_t)W, sizeof *g->zs),
    g->zn = (size_t *)xcalloc((size_t)W, sizeof *g->zn);
    for (int r = 0, i = 0; r < W; r++) {
        g->zc[r] = i;
        while (i < k && (r == W - 1 || (size_t)cs[i] * W / g->np <= (size_t)r))
            i++;
        g->zs[r] = i > g->zc[r] ? (size_t)cs[g->zc[r]] : g->np;
        g->zn[r] = i > g->zc[r] ? (size_t)(cs[i - 1] + cl[i - 1]) - g->zs[r] : 0;
    }
    g->zc[W] = k;
    int me = g->zero ? g->rank : 0;
    g->za = g->zn[me] ? g->zs[me] : 0, g->zb = g->za + g->zn[me];
    g->m32 = (float *)dalloc((g->zb - g->za) * 4), g->v32 = (float *)dalloc((g->zb - g->za) * 4);
    if (g->zero)
        info(3, "ZeRO stage 1: rank %d updates elements %zu..%zu (%.1f %%) and keeps their moments",
             g->rank, g->za, g->zb, 100.0 * (double)(g->zb - g->za) / (double)g->np);
    g->cstart = (long long *)upload_array(cs, (size_t)k * sizeof *cs);
    g->cpw = (long long *)upload_array(cw, (size_t)k * sizeof *cw);
    g->clen = (int *)upload_array(cl, (size_t)k * sizeof *cl),
    g->ctensor = (int *)upload_array(ct, (size_t)k * sizeof *ct);
    g->tchunk0 = (int *)upload_array(t0, (size_t)m->ntensors * sizeof *t0);
    g->tnchunks = (int *)upload_array(tn, (size_t)m->ntensors * sizeof *tn);
    g->twd = (float *)upload_array(wd, (size_t)m->ntensors * sizeof *wd);
    zero_ranges(g);
    free(cs), free(cl), free(ct), free(t0), free(tn), free(wd), free(tpw), free(cw);
    g->ratio = (float *)dalloc((size_t)m->ntensors * 4);
    g->part = (double *)dalloc((size_t)k * 8), g->part2 = (double *)dalloc((size_t)k * 16);
    g->norm = (double *)dalloc(8), g->stats = (double *)dalloc(8 * sizeof(double));
    CK(cudaMemset(g->norm, 0, 8));
    /* the copies and memsets above ran on the default stream, which the
     * non-blocking streams do not wait for */
    CK(cudaDeviceSynchronize());
    *be = (TrainBackend){g->name,      g->rank,     g->world, g,      g_zero_grad,
                         g_micro_step, g_opt_step,  g_stats,  g_eval, g_to_host,
                         g_from_host,  g_allgather, g_close,  g_stage};
    return 0;
}
