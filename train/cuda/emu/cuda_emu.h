/* cuda_emu.h - the part of CUDA and cuBLAS that train/cuda/backend.cu (and
 * the .cuh modules it includes) uses, on the CPU, so that its kernels and
 * matmul calls are tested where there is no GPU (`make test` builds
 * backend.cu a second time with g++ and -DWB_CUDA_EMU; the real build
 * never includes this file).
 *
 * Execution model: a launch runs its blocks one after another (in reverse
 * order, and threads too, when WB_EMU_REVERSE is set: a kernel whose
 * result depends on the order of its blocks or threads then gives other
 * bytes, which the tests compare). EMU_LAUNCH
 * runs a block's threads one after another (kernels whose threads do not
 * talk to each other); EMU_LAUNCH_COOP runs them as coroutines that take turns,
 * with __syncthreads a barrier of the block and the warp shuffles a barrier
 * and an exchange among the 32 threads of a warp.
 * __shared__ arrays are function statics: one block at a time uses them.
 * Memory is host memory, every byte of a new allocation 0xff (a read of
 * memory never written gives NaN or -1 and shows in the results, where a
 * GPU would give whatever was there); streams and events are ordered because every call
 * completes before it returns (an event's time is the host clock when it
 * is recorded). bfloat16 converts with round-to-nearest-even
 * as the GPU does. cublasGemmEx / cublasGemmStridedBatchedEx compute what
 * cuBLAS's documentation defines (column-major, op(A) op(B), leading
 * dimensions, strides, alpha and beta; float32 or bfloat16 operands,
 * float32 accumulation), in the plainest loop. Built with
 * WB_EMU_ALT_ORDER (and -ffp-contract=fast), the matmuls and warp matrix
 * products add in another order, for the tests that show the comparisons
 * with the CPU allow what a GPU's own order and FMAs change.
 */
#ifndef WB_CUDA_EMU_H
#define WB_CUDA_EMU_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <functional>
#include <memory>
#include <setjmp.h>
#include <tuple>
#include <type_traits>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

/* ---- language ---- */
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
static thread_local dim3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;

/* A cooperative block: its threads are coroutines (ucontext) on the
 * calling thread, run in turn until each waits at a barrier or ends; a
 * barrier opens when every thread of its warp (shuffles) or block
 * (__syncthreads) that has not ended is waiting at it. */
struct EmuLane {
    ucontext_t ctx; /* for the first entry only */
    jmp_buf jb;     /* then switches are _setjmp/_longjmp (no signal-mask system calls) */
    int state;      /* 0 runnable, 1 waiting, 2 ended */
    int kind;       /* waiting at: 1 its warp's barrier, 2 the block's */
    int started;
};
struct EmuBlock {
    jmp_buf sched;
    EmuLane lane[1024];
    unsigned n, cur;
    dim3 idx;
    double xchg[32][32];
    const std::function<void()> *body;
};
static EmuBlock *emu_blk;

/* blocks, threads and coroutine turns in reverse order (WB_EMU_REVERSE) */
static int emu_reverse(void) {
    static int r = -1;
    if (r < 0) r = getenv("WB_EMU_REVERSE") && *getenv("WB_EMU_REVERSE");
    return r;
}

static inline void emu_wait(int kind) {
    EmuBlock *b = emu_blk;
    unsigned t = threadIdx.x;
    b->lane[t].state = 1, b->lane[t].kind = kind;
    if (!_setjmp(b->lane[t].jb)) _longjmp(b->sched, 1);
}

static void emu_lane_main(void) {
    EmuBlock *b = emu_blk;
    (*b->body)();
    b->lane[b->cur].state = 2;
    _longjmp(b->sched, 1);
}

static inline void __syncthreads(void) { emu_wait(2); }
static inline void __syncwarp(unsigned mask = 0xffffffffu) { (void)mask, emu_wait(1); }

/* float or double (through double, exactly) */
template <typename V> static inline V __shfl_xor_sync(unsigned mask, V v, int o) {
    (void)mask;
    unsigned w = threadIdx.x / 32, lane = threadIdx.x % 32;
    emu_blk->xchg[w][lane] = v;
    emu_wait(1);
    V r = (V)emu_blk->xchg[w][lane ^ (unsigned)o];
    emu_wait(1);
    return r;
}

static void emu_run_block(EmuBlock *b) {
    static std::vector<char *> stacks;
    const size_t STACK = 256 * 1024;
    while (stacks.size() < b->n)
        stacks.push_back((char *)malloc(STACK));
    for (unsigned t = 0; t < b->n; t++) {
        getcontext(&b->lane[t].ctx);
        b->lane[t].ctx.uc_stack.ss_sp = stacks[t];
        b->lane[t].ctx.uc_stack.ss_size = STACK;
        b->lane[t].ctx.uc_link = nullptr;
        makecontext(&b->lane[t].ctx, emu_lane_main, 0);
        b->lane[t].state = 0, b->lane[t].started = 0;
    }
    for (;;) {
        int ran = 0;
        for (unsigned i = 0; i < b->n; i++) {
            unsigned t = emu_reverse() ? b->n - 1 - i : i;
            if (b->lane[t].state == 0) {
                b->cur = t, threadIdx = dim3(t), blockIdx = b->idx;
                if (!_setjmp(b->sched)) {
                    if (b->lane[t].started) _longjmp(b->lane[t].jb, 1);
                    ucontext_t from;
                    b->lane[t].started = 1;
                    swapcontext(&from, &b->lane[t].ctx);
                }
                ran = 1;
            }
        }
        /* open the barriers whose live threads all wait */
        int live = 0, opened = 0;
        unsigned blockwait = 0, blocklive = 0;
        for (unsigned t = 0; t < b->n; t++)
            if (b->lane[t].state != 2)
                blocklive++, blockwait += b->lane[t].state == 1 && b->lane[t].kind == 2;
        if (blocklive && blockwait == blocklive)
            for (unsigned t = 0; t < b->n; t++)
                b->lane[t].state = 0, opened = 1;
        for (unsigned w = 0; w * 32 < b->n; w++) {
            unsigned wl = 0, ww = 0;
            for (unsigned t = w * 32; t < w * 32 + 32 && t < b->n; t++)
                if (b->lane[t].state != 2)
                    wl++, ww += b->lane[t].state == 1 && b->lane[t].kind == 1;
            if (wl && ww == wl)
                for (unsigned t = w * 32; t < w * 32 + 32 && t < b->n; t++)
                    if (b->lane[t].state == 1) b->lane[t].state = 0, opened = 1;
        }
        for (unsigned t = 0; t < b->n; t++)
            live += b->lane[t].state != 2;
        if (!live) return;
        if (!ran && !opened) {
            fprintf(stderr, "cuda_emu: block (%u, %u): threads wait at barriers that cannot open\n",
                    b->idx.x, b->idx.y);
            abort();
        }
    }
}

static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
/* the fast intrinsics, exact here (the GPU's are within a few ulp) */
static inline float __fdividef(float a, float b) { return a / b; }
#define __expf(x) expf(x)
template <typename A, typename B> static inline A min(A a, B b) { return a < (A)b ? a : (A)b; }

/* ---- the device's queue ----
 * Work queued on a stream (kernels, asynchronous copies and sets, event
 * records, matmuls, collectives) runs at once while nothing is waiting
 * ahead of it, which is always so in a single process. A collective
 * (train/cuda/comm.c through emu_device_queue) is only queued, as NCCL
 * queues it on the GPU and returns, and so is every later piece of work
 * (in issue order, one queue for all streams: a stricter order than the
 * streams', so each piece finds its inputs); the queue runs, and a
 * collective waits for the other ranks, when the host waits on the device:
 * stream, event and device synchronisation, cudaMemcpy, cudaMemset,
 * cudaFree and cudaFreeHost (which synchronise the device), and a
 * cudaMemcpyAsync into pageable host memory, which does not return before
 * the copy is done (memory from cudaMallocHost is pinned; other host memory
 * is pageable). So the host blocks where it would block on a GPU, and a
 * rank that died shows as a hang exactly there; comm.c's watchdog sees it
 * only where the backend waits between comm_wait_begin and comm_wait_end. */
struct EmuStream {
    uint64_t last; /* the sequence number of its last queued work */
};
struct EmuWork {
    uint64_t seq;
    std::function<void()> run;
};
static std::deque<EmuWork> emu_queue;
static uint64_t emu_issued; /* sequence numbers given */

/* queue f on stream s (NULL: the default stream); run now when nothing
 * waits and f is not a collective. Returns f's sequence number. */
static uint64_t emu_submit(EmuStream *s, std::function<void()> f, int collective = 0) {
    uint64_t seq = ++emu_issued;
    if (s) s->last = seq;
    if (emu_queue.empty() && !collective)
        f();
    else
        emu_queue.push_back({seq, std::move(f)});
    return seq;
}

/* the host waits until the work up to sequence number upto has run */
static void emu_drain(uint64_t upto) {
    while (!emu_queue.empty() && emu_queue.front().seq <= upto) {
        std::function<void()> f = std::move(emu_queue.front().run);
        emu_queue.pop_front();
        f();
    }
}
static void emu_drain_all(void) { emu_drain(UINT64_MAX); }

/* host memory from cudaMallocHost (pinned): [start, end) ranges */
static std::vector<std::pair<const char *, const char *>> emu_pinned;
static bool emu_is_pinned(const void *p, size_t n) {
    for (auto &r : emu_pinned)
        if ((const char *)p >= r.first && (const char *)p + n <= r.second) return true;
    return false;
}

/* a kernel's arguments converted to its parameters' types when it is
 * launched, as CUDA does (the work may run later) */
template <typename T> struct emu_same { typedef T type; };
template <typename... P>
static std::function<void()> emu_bind(void (*k)(P...), typename emu_same<P>::type... a) {
    std::tuple<typename std::decay<P>::type...> args(a...);
    return [k, args] { std::apply(k, args); };
}

/* a launch a GPU refuses (an empty grid or block, gridDim.y or .z over
 * 65535, more than 1024 threads): not run, cudaGetLastError says so */
static int emu_last_error;
static inline void emu_launch(dim3 grid, dim3 block, int coop, EmuStream *stream,
                              std::function<void()> body) {
    unsigned nthreads = block.x * block.y * block.z;
    if (!grid.x || !grid.y || !grid.z || grid.y > 65535 || grid.z > 65535 || !nthreads ||
        nthreads > 1024 || block.z > 64) {
        emu_last_error = 9; /* cudaErrorInvalidConfiguration */
        return;
    }
    emu_submit(stream, [grid, block, coop, nthreads, body] {
        gridDim = grid, blockDim = block;
        static EmuBlock eb;
        int rev = emu_reverse();
        for (unsigned yi = 0; yi < grid.y; yi++)
            for (unsigned xi = 0; xi < grid.x; xi++) {
                unsigned by = rev ? grid.y - 1 - yi : yi, bx = rev ? grid.x - 1 - xi : xi;
                if (!coop) {
                    blockIdx = dim3(bx, by);
                    for (unsigned i = 0; i < nthreads; i++) {
                        threadIdx = dim3(rev ? nthreads - 1 - i : i);
                        body();
                    }
                    continue;
                }
                eb.n = nthreads, eb.idx = dim3(bx, by), eb.body = &body;
                emu_blk = &eb;
                emu_run_block(&eb);
                emu_blk = nullptr;
            }
    });
}

#define EMU_LAUNCH(k, grid, block, stream, ...)                                                    \
    emu_launch(dim3(grid), dim3(block), 0, (stream), emu_bind(k, __VA_ARGS__))
#define EMU_LAUNCH_COOP(k, grid, block, stream, ...)                                               \
    emu_launch(dim3(grid), dim3(block), 1, (stream), emu_bind(k, __VA_ARGS__))

/* The tests' dead rank: with WB_EMU_DIE=WHERE:RANK:N in the environment,
 * rank RANK ends at once (_exit(3): no message, nothing flushed, as a
 * process that crashes or is killed) the Nth time it reaches the point
 * the backend names WHERE. */
static inline void emu_die_point(const char *where, int rank) {
    static int count;
    const char *v = getenv("WB_EMU_DIE");
    char w[64];
    int r = -1, n = -1;
    if (!v || sscanf(v, "%63[^:]:%d:%d", w, &r, &n) != 3 || strcmp(w, where) || r != rank) return;
    if (++count == n) _exit(3);
}

/* ---- bfloat16 ---- */
struct __nv_bfloat16 {
    uint16_t bits;
};
static inline __nv_bfloat16 __float2bfloat16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    __nv_bfloat16 b;
    if ((u & 0x7fffffffu) > 0x7f800000u)
        b.bits = (uint16_t)((u >> 16) | 0x40); /* NaN stays NaN */
    else
        b.bits = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
    return b;
}
static inline float __bfloat162float(__nv_bfloat16 b) {
    uint32_t u = (uint32_t)b.bits << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* A GPU faults on an access to memory not aligned to its size (16-byte
 * vectors) and warp matrix loads and stores need 32-byte aligned
 * pointers and leading dimensions of whole 16-byte units; here such an
 * access ends the program with what and where. */
static inline void emu_check_align(const void *p, size_t align, size_t ld_bytes, const char *what) {
    if ((uintptr_t)p % align == 0 && ld_bytes % 16 == 0) return;
    fprintf(stderr,
            "cuda_emu: %s at %p: not %zu-byte aligned, or a leading dimension of %zu bytes\n", what,
            p, align, ld_bytes);
    abort();
}

/* ---- warp matrix operations (mma.h's nvcuda::wmma, 16 x 16 x 16) ----
 * A fragment holds its whole tile in every thread. Loads fill it whole;
 * mma_sync computes, and store_matrix_sync writes, only the thread's share
 * of the result (elements e with e % 32 == lane): a result read by other
 * threads before a __syncwarp is then stale, as on a GPU where each thread
 * holds a part of the tile, and the kernel must be run by EMU_LAUNCH_COOP.
 * The products are float32 sums in k order (from the last k with
 * WB_EMU_ALT_ORDER). */
namespace nvcuda {
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };
template <typename Use, int M, int N, int K, typename T, typename Layout = void> struct fragment {
    float x[256]; /* [row][col] of the tile */
};
template <typename F> static inline void fill_fragment(F &f, float v) {
    for (int e = 0; e < 256; e++)
        f.x[e] = v;
}
/* matrix_a (M x K) or matrix_b (K x N) of bfloat16: element (i, j) of the tile */
template <typename Use, typename L>
static inline void load_matrix_sync(fragment<Use, 16, 16, 16, __nv_bfloat16, L> &f,
                                    const __nv_bfloat16 *p, unsigned ld) {
    emu_check_align(p, 32, ld * sizeof *p, "load_matrix_sync");
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++)
            f.x[i * 16 + j] = __bfloat162float(
                p[std::is_same<L, row_major>::value ? (size_t)i * ld + j : (size_t)j * ld + i]);
}
template <typename T, typename LA, typename LB>
static inline void mma_sync(fragment<accumulator, 16, 16, 16, float> &d,
                            const fragment<matrix_a, 16, 16, 16, T, LA> &a,
                            const fragment<matrix_b, 16, 16, 16, T, LB> &b,
                            const fragment<accumulator, 16, 16, 16, float> &c) {
    for (unsigned e = threadIdx.x % 32; e < 256; e += 32) {
        int i = (int)e / 16, j = (int)e % 16;
        float s = 0;
        for (int kk = 0; kk < 16; kk++) {
#ifdef WB_EMU_ALT_ORDER
            int k = 15 - kk; /* the tests' second build: k from the last */
#else
            int k = kk;
#endif
            s += a.x[i * 16 + k] * b.x[k * 16 + j];
        }
        d.x[e] = c.x[e] + s;
    }
}
static inline void store_matrix_sync(float *p, const fragment<accumulator, 16, 16, 16, float> &f,
                                     unsigned ld, layout_t l) {
    emu_check_align(p, 32, ld * sizeof(float), "store_matrix_sync");
    for (unsigned e = threadIdx.x % 32; e < 256; e += 32) {
        unsigned i = e / 16, j = e % 16;
        p[l == mem_row_major ? (size_t)i * ld + j : (size_t)j * ld + i] = f.x[e];
    }
}
} // namespace wmma
} // namespace nvcuda

/* ---- runtime ---- */
typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorMemoryAllocation = 2 };
typedef enum {
    cudaMemcpyHostToDevice,
    cudaMemcpyDeviceToHost,
    cudaMemcpyDeviceToDevice
} cudaMemcpyKind;
typedef struct EmuStream *cudaStream_t;
struct EmuEvent {
    double t;     /* when the stream reached it */
    uint64_t seq; /* its record's sequence number */
};
typedef EmuEvent *cudaEvent_t;
#define cudaStreamNonBlocking 1
#define cudaEventDisableTiming 2
struct cudaDeviceProp {
    char name[256];
    int major, minor;
};
static inline const char *cudaGetErrorString(cudaError_t e) {
    return e == 9 ? "invalid configuration argument" : e ? "emulated error" : "no error";
}
static inline cudaError_t cudaGetLastError(void) {
    cudaError_t e = emu_last_error;
    emu_last_error = 0;
    return e;
}
static inline cudaError_t cudaGetDeviceCount(int *n) {
    return *n = 8, cudaSuccess;
} /* a node of 8 */
static inline cudaError_t cudaSetDevice(int d) { return (void)d, cudaSuccess; }
static inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d) {
    (void)d;
#if defined(WB_EMU_ALT_ORDER) && defined(__FMA__)
    snprintf(p->name, sizeof p->name, "CPU emulation of CUDA (FMA contraction, other sum orders)");
#elif defined(WB_EMU_ALT_ORDER)
    snprintf(p->name, sizeof p->name, "CPU emulation of CUDA (other sum orders; no FMA here)");
#else
    snprintf(p->name, sizeof p->name, "CPU emulation of CUDA");
#endif
    p->major = 9, p->minor = 0;
    return cudaSuccess;
}
static inline cudaError_t cudaMemGetInfo(size_t *fr, size_t *tot) {
    return *fr = *tot = 0, cudaSuccess;
}
static inline cudaError_t cudaMalloc(void **p, size_t n) {
    /* every byte 0xff, as a GPU's memory is not zeroed: a float or bf16 read
     * before it is written is NaN and an int -1, which the results show
     * (and the same in every run) */
    *p = aligned_alloc(256, (n + 255) / 256 * 256 + 256 * !n); /* cudaMalloc's alignment */
    if (*p) memset(*p, 0xff, n ? n : 1);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
static inline cudaError_t cudaFree(void *p) { /* synchronises the device */
    emu_drain_all();
    return free(p), cudaSuccess;
}
static inline cudaError_t cudaMallocHost(void **p, size_t n) {
    cudaError_t e = cudaMalloc(p, n);
    if (e == cudaSuccess) emu_pinned.push_back({(const char *)*p, (const char *)*p + n});
    return e;
}
static inline cudaError_t cudaFreeHost(void *p) {
    for (size_t i = 0; i < emu_pinned.size(); i++)
        if (emu_pinned[i].first == p) emu_pinned.erase(emu_pinned.begin() + (long)i--);
    return cudaFree(p);
}
static inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind k) {
    (void)k;
    emu_drain_all();
    memmove(d, s, n);
    return cudaSuccess;
}
/* into pinned memory, or from any: queued; into pageable memory: the host
 * waits for the stream, then copies (from pageable memory the bytes are
 * taken at the call, as CUDA stages them) */
static inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k,
                                          cudaStream_t st) {
    if (k == cudaMemcpyDeviceToHost && !emu_is_pinned(d, n)) {
        emu_drain(st ? st->last : UINT64_MAX);
        memmove(d, s, n);
        return cudaSuccess;
    }
    if (k == cudaMemcpyHostToDevice && !emu_is_pinned(s, n) && !emu_queue.empty()) {
        std::shared_ptr<std::vector<char>> copy(
            new std::vector<char>((const char *)s, (const char *)s + n));
        emu_submit(st, [d, copy, n] { memmove(d, copy->data(), n); });
        return cudaSuccess;
    }
    emu_submit(st, [d, s, n] { memmove(d, s, n); });
    return cudaSuccess;
}
static inline cudaError_t cudaMemset(void *p, int v, size_t n) {
    emu_drain_all();
    return memset(p, v, n), cudaSuccess;
}
static inline cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t st) {
    emu_submit(st, [p, v, n] { memset(p, v, n); });
    return cudaSuccess;
}
static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned f) {
    (void)f;
    *s = (cudaStream_t)calloc(1, sizeof **s);
    return cudaSuccess;
}
static inline cudaError_t cudaStreamDestroy(cudaStream_t s) { return free(s), cudaSuccess; }
static inline cudaError_t cudaStreamSynchronize(cudaStream_t s) {
    emu_drain(s ? s->last : UINT64_MAX);
    return cudaSuccess;
}
static inline cudaError_t cudaDeviceSynchronize(void) { return emu_drain_all(), cudaSuccess; }
static inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned f) {
    (void)f;
    *e = (cudaEvent_t)calloc(1, sizeof **e);
    return cudaSuccess;
}
static inline cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, 0); }
static inline cudaError_t cudaEventDestroy(cudaEvent_t e) { return free(e), cudaSuccess; }
/* the event's time is the host clock when the stream reaches it */
static inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
    e->seq = emu_submit(s, [e] {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        e->t = (double)t.tv_sec + t.tv_nsec * 1e-9;
    });
    return cudaSuccess;
}
static inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
    *ms = (float)((b->t - a->t) * 1e3);
    return cudaSuccess;
}
static inline cudaError_t cudaEventSynchronize(cudaEvent_t e) {
    emu_drain(e->seq);
    return cudaSuccess;
}
/* one queue for all streams already orders s after e */
static inline cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned f) {
    return (void)s, (void)e, (void)f, cudaSuccess;
}

/* train/cuda/comm.c's emulated collectives (comm_emu.h): fn(arg) queued on
 * stream, run when the host waits on the device */
extern "C" void emu_device_queue(void *stream, void (*fn)(void *), void *arg) {
    emu_submit((cudaStream_t)stream, [fn, arg] { fn(arg); }, 1);
}

/* ---- cuBLAS ---- */
typedef int cublasStatus_t;
#define CUBLAS_STATUS_SUCCESS 0
struct EmuBlas {
    EmuStream *st; /* cublasSetStream's */
};
typedef EmuBlas *cublasHandle_t;
typedef enum { CUBLAS_OP_N, CUBLAS_OP_T } cublasOperation_t;
typedef enum { CUDA_R_32F, CUDA_R_16BF } cudaDataType;
typedef enum { CUBLAS_COMPUTE_32F } cublasComputeType_t;
typedef enum { CUBLAS_GEMM_DEFAULT } cublasGemmAlgo_t;
typedef enum { CUBLAS_DEFAULT_MATH, CUBLAS_PEDANTIC_MATH } cublasMath_t;
static inline cublasStatus_t cublasCreate(cublasHandle_t *h) {
    return *h = (cublasHandle_t)calloc(1, sizeof **h), 0;
}
static inline cublasStatus_t cublasDestroy(cublasHandle_t h) { return free(h), 0; }
static inline cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s) {
    return h->st = s, 0;
}
static inline cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t m) {
    return (void)h, (void)m, 0;
}
static inline cublasStatus_t cublasSetWorkspace(cublasHandle_t h, void *w, size_t n) {
    return (void)h, (void)w, (void)n, 0;
}

static inline float emu_ld(const void *p, cudaDataType t, long long i) {
    return t == CUDA_R_32F ? ((const float *)p)[i]
                           : __bfloat162float(((const __nv_bfloat16 *)p)[i]);
}

/* The sums over k: in order (k = 0, 1, ...), or with WB_EMU_ALT_ORDER
 * (the tests' second build) from the last k down into 4 partial sums taken
 * in turn and added pairwise at the end, as a tiled matmul may add. */
#ifdef WB_EMU_ALT_ORDER
#define EMU_GEMM_LANES 4
#else
#define EMU_GEMM_LANES 1
#endif
/* alpha and beta are read at the call (host pointers), the product is
 * queued on the handle's stream */
static inline cublasStatus_t
cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                           int n, int k, const void *alpha, const void *A, cudaDataType at, int lda,
                           long long sa, const void *B, cudaDataType bt, int ldb, long long sb,
                           const void *beta, void *C, cudaDataType ct, int ldc, long long sc,
                           int batch, cublasComputeType_t comp, cublasGemmAlgo_t algo) {
    (void)comp, (void)algo;
    float al = *(const float *)alpha, be = *(const float *)beta;
    if (lda < (ta == CUBLAS_OP_N ? m : k) || ldb < (tb == CUBLAS_OP_N ? k : n) || ldc < m)
        return 7; /* INVALID_VALUE */
    emu_submit(h->st, [=] {
        for (int q = 0; q < batch; q++)
            for (int j = 0; j < n; j++)
                for (int i = 0; i < m; i++) {
                    float acc[EMU_GEMM_LANES] = {0};
                    for (int p = 0; p < k; p++) {
                        int pk = EMU_GEMM_LANES > 1 ? k - 1 - p : p;
                        float a = emu_ld(A, at,
                                         q * sa + (ta == CUBLAS_OP_N ? i + (long long)pk * lda
                                                                     : pk + (long long)i * lda));
                        float b = emu_ld(B, bt,
                                         q * sb + (tb == CUBLAS_OP_N ? pk + (long long)j * ldb
                                                                     : j + (long long)pk * ldb));
                        acc[p % EMU_GEMM_LANES] += a * b;
                    }
                    for (int w = EMU_GEMM_LANES / 2; w > 0; w /= 2)
                        for (int l = 0; l < w; l++)
                            acc[l] += acc[l + w];
                    long long ci = q * sc + i + (long long)j * ldc;
                    float v = al * acc[0] + (be != 0 ? be * emu_ld(C, ct, ci) : 0.0f);
                    if (ct == CUDA_R_32F)
                        ((float *)C)[ci] = v;
                    else
                        ((__nv_bfloat16 *)C)[ci] = __float2bfloat16(v);
                }
    });
    return 0;
}

static inline cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta,
                                          cublasOperation_t tb, int m, int n, int k,
                                          const void *alpha, const void *A, cudaDataType at,
                                          int lda, const void *B, cudaDataType bt, int ldb,
                                          const void *beta, void *C, cudaDataType ct, int ldc,
                                          cublasComputeType_t comp, cublasGemmAlgo_t algo) {
    return cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, alpha, A, at, lda, 0, B, bt, ldb, 0, beta,
                                      C, ct, ldc, 0, 1, comp, algo);
}

#endif
