/* The Apple Metal host (kernels/metal/metal.h, HSDR_METAL_HOST): one device context (the default GPU, a command queue,
 * the kernel library compiled at run time from the .metal sources in kernels/metal, one compute pipeline per kernel),
 * shared-storage buffers, the device ops of kernel.h (a sample is one command buffer from mark(0) to mark(1); the
 * harness owns every repetition), the checking interface through those same ops, the streaming-read run and a
 * whole-token run. The structure follows kernels/vulkan/vk.c; every Metal call is checked and a failure names it.
 *
 * NOT YET BUILT OR RUN: this file has not been compiled or run on Apple hardware in this repository's sessions (they
 * had no Mac and no Apple SDK); it was written against the Metal and Foundation headers of macOS 13+ and reviewed by
 * hand. On a Mac (Xcode command-line tools, macOS 13 or later):
 *     cmake -S . -B build -DHSDR_METAL=ON && cmake --build build && ./build/hsdr check --backend metal vectors/
 *
 * Objective-C with ARC (-fobjc-arc, set by kernels/metal/host/metal.cmake). Timing: the command buffer's
 * GPUEndTime - GPUStartTime (host seconds), so encoding and submission stay out of kernel times. Activations are
 * encoded on the host (hsdr_encode_activations) and written into the buffers untimed, as in the Vulkan host. Buffers
 * are MTLResourceStorageModeShared: on Apple silicon that is the GPU's own (unified) memory and the host reads and
 * writes it in place; on a Mac with a discrete GPU it is host memory, and describe() says so. */
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metal/metal.h"

#include "host_encode.h"
#include "hsdr_metal_source.h" /* hsdr_metal_source: hsdr_metal_common.h + kernels/metal/<name>.metal, generated */
#include "metal/hsdr_metal_common.h"

#if !__has_feature(objc_arc)
#error "metal_host.m needs ARC (-fobjc-arc)"
#endif
#if !__has_feature(objc_arc_fields)
#error "metal_host.m keeps Metal objects in a C struct under ARC (clang of Xcode 10 or later)"
#endif

#define BLOCK_BYTES 28 /* PTQ1_0 bytes per 128 weights */
enum { B_W = 0, B_ACT = 1, B_SCALE = 2, B_Y = 3, B_A = 4, B_QG = 5, B_QR = 6, B_PARAMS = 7 };
enum { N_KERNELS = 4 };

/* The plain streaming read that is every Metal row's ceiling (kernels/vulkan/read.comp in MSL): 16-byte loads,
 * grid-stride; the XOR of everything read is stored only when it equals a value it cannot have in practice, so the
 * loads cannot be dropped. n < 2^31, so i + stride cannot wrap. */
static const char read_source[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void hsdr_read(device const uint4 *src [[buffer(0)]], device uint *sink [[buffer(3)]],\n"
    "                      constant uint &n [[buffer(7)]], uint i0 [[thread_position_in_grid]],\n"
    "                      uint stride [[threads_per_grid]])\n"
    "{\n"
    "    uint4 acc = uint4(0u);\n"
    "    for (uint i = i0; i < n; i += stride)\n"
    "        acc ^= src[i];\n"
    "    const uint v = acc.x ^ acc.y ^ acc.z ^ acc.w;\n"
    "    if (v == 0x9e3779b9u)\n"
    "        sink[0] = v;\n"
    "}\n";

/* ---- the device context (created once) ---- */

static id<MTLDevice> g_dev;
static id<MTLCommandQueue> g_queue;
static id<MTLComputePipelineState> g_pipes[N_KERNELS]; /* in the order of g_kernels */
static id<MTLComputePipelineState> g_read;
static id<MTLBuffer> g_dummy; /* bound where an optional output is not allocated (its flag is off: never written) */
static const hsdr_metal_kernel *const g_kernels[N_KERNELS] = {&hsdr_metal_production, &hsdr_metal_direct,
                                                              &hsdr_metal_stateset, &hsdr_metal_q1516};
static const char *g_msl = "?"; /* the Metal Shading Language version the library was compiled for */
static char g_why[4096];        /* empty when usable; room for a compiler log's first lines */
static char g_describe[512];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* one submission at a time, as in the Vulkan host */

static const char *cstr(NSString *s)
{
    const char *c = s ? [s UTF8String] : NULL;
    return c ? c : "";
}

/* "call: description (domain code)" of an NSError (nil: the call gave no error object). */
static void ns_fail(char *err, size_t errlen, const char *call, NSError *e)
{
    if (e)
        snprintf(err, errlen, "%s: %s (%s %ld)", call, cstr([e localizedDescription]), cstr([e domain]),
                 (long)[e code]);
    else
        snprintf(err, errlen, "%s failed (no NSError)", call);
}

/* IEEE-safe compilation (the production kernel is checked bit for bit): no fast-math reassociation, finite-math
 * assumptions or approximate functions. MTLCompileOptions has no FP-contraction switch; the kernels keep every rounding
 * that matters in explicit fma() calls and integer-exact float arithmetic. MSL 3.0 where available, else 2.4
 * (simd_ballot, simd_sum on integers, 64-bit integers). */
static MTLCompileOptions *compile_options(char *err, size_t errlen)
{
    MTLCompileOptions *o = [[MTLCompileOptions alloc] init];
    if (!o) {
        snprintf(err, errlen, "[[MTLCompileOptions alloc] init] returned nil");
        return nil;
    }
#if defined(__MAC_15_0) && __MAC_OS_X_VERSION_MAX_ALLOWED >= __MAC_15_0
    if (@available(macOS 15.0, *)) { /* mathMode replaces fastMathEnabled (deprecated in macOS 15) */
        o.mathMode = MTLMathModeSafe;
        o.mathFloatingPointFunctions = MTLMathFloatingPointFunctionsPrecise;
    } else
#endif
    {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
        o.fastMathEnabled = NO; /* = mathMode safe + precise functions */
#pragma clang diagnostic pop
    }
#if defined(__MAC_13_0) && __MAC_OS_X_VERSION_MAX_ALLOWED >= __MAC_13_0
    if (@available(macOS 13.0, *)) {
        o.languageVersion = MTLLanguageVersion3_0;
        g_msl = "3.0";
        return o;
    }
#endif
    if (@available(macOS 12.0, *)) {
        o.languageVersion = MTLLanguageVersion2_4;
        g_msl = "2.4";
        return o;
    }
    snprintf(err, errlen, "the Metal kernels need Metal Shading Language 2.4 (macOS 12 or later)");
    return nil;
}

/* A compute pipeline of function `name` in lib; what: for messages. */
static id<MTLComputePipelineState> pipeline_new(id<MTLLibrary> lib, const char *name, const char *what, char *err,
                                                size_t errlen)
{
    id<MTLFunction> fn = [lib newFunctionWithName:@(name)];
    if (!fn) {
        snprintf(err, errlen, "[MTLLibrary newFunctionWithName:@\"%s\"] returned nil: %s has no kernel %s", name, what,
                 name);
        return nil;
    }
    NSError *e = nil;
    id<MTLComputePipelineState> p = [g_dev newComputePipelineStateWithFunction:fn error:&e];
    if (!p) {
        char call[160];
        snprintf(call, sizeof call, "newComputePipelineStateWithFunction:error: (%s)", name);
        ns_fail(err, errlen, call, e);
    }
    return p;
}

static id<MTLLibrary> library_new(const char *source, MTLCompileOptions *opts, const char *what, char *err,
                                  size_t errlen)
{
    NSString *src = [NSString stringWithUTF8String:source];
    if (!src) {
        snprintf(err, errlen, "%s: the source is not valid UTF-8", what);
        return nil;
    }
    NSError *e = nil;
    id<MTLLibrary> lib = [g_dev newLibraryWithSource:src options:opts error:&e]; /* e may hold warnings on success */
    if (!lib) {
        char call[160];
        snprintf(call, sizeof call, "newLibraryWithSource:options:error: (%s)", what);
        ns_fail(err, errlen, call, e);
    }
    return lib;
}

static void ctx_init(void)
{
    char *err = g_why;
    const size_t errlen = sizeof g_why;
    g_dev = MTLCreateSystemDefaultDevice();
    if (!g_dev) { /* nil in some processes without a window-server connection: take the first device there is */
        NSArray<id<MTLDevice>> *all = MTLCopyAllDevices();
        if (all && [all count] > 0)
            g_dev = [all objectAtIndex:0];
    }
    if (!g_dev) {
        snprintf(err, errlen, "no Metal device (MTLCreateSystemDefaultDevice and MTLCopyAllDevices found none)");
        return;
    }
    if (!(g_queue = [g_dev newCommandQueue])) {
        snprintf(err, errlen, "[MTLDevice newCommandQueue] returned nil on %s", cstr([g_dev name]));
        return;
    }
    MTLCompileOptions *opts = compile_options(err, errlen);
    if (!opts)
        return;
    id<MTLLibrary> lib = library_new(hsdr_metal_source, opts, "the kernels of kernels/metal/*.metal", err, errlen);
    if (!lib)
        return;
    for (int i = 0; i < N_KERNELS; i++) {
        const hsdr_metal_kernel *k = g_kernels[i];
        if (!(g_pipes[i] = pipeline_new(lib, k->function, "the kernel library", err, errlen)))
            return;
        /* the kernels own lanes of a group by thread_index_in_simdgroup and reduce with simd_sum / simd_ballot over
         * 32 lanes: any other SIMD width computes wrong sums, not just slower ones */
        const NSUInteger width = [g_pipes[i] threadExecutionWidth], most = [g_pipes[i] maxTotalThreadsPerThreadgroup];
        if (width != HSDR_METAL_SIMD) {
            snprintf(err, errlen, "%s: %s runs %lu-lane SIMD groups; the kernels need %u", cstr([g_dev name]),
                     k->function, (unsigned long)width, HSDR_METAL_SIMD);
            return;
        }
        if (most < hsdr_metal_threads(k)) {
            snprintf(err, errlen, "%s: %s allows %lu threads per threadgroup; it is launched with %u",
                     cstr([g_dev name]), k->function, (unsigned long)most, hsdr_metal_threads(k));
            return;
        }
    }
    id<MTLLibrary> rlib = library_new(read_source, opts, "the streaming-read kernel", err, errlen);
    if (!rlib || !(g_read = pipeline_new(rlib, "hsdr_read", "the streaming-read library", err, errlen)))
        return;
    if (!(g_dummy = [g_dev newBufferWithLength:256 options:MTLResourceStorageModeShared])) {
        snprintf(err, errlen, "[MTLDevice newBufferWithLength:256 options:MTLResourceStorageModeShared] returned nil");
        return;
    }
    const int unified = [g_dev hasUnifiedMemory] ? 1 : 0;
    snprintf(g_describe, sizeof g_describe, "%s (Metal, %s), MSL %s, SIMD width %u, working set %.1f GiB",
             cstr([g_dev name]),
             unified ? "unified memory"
                     : "discrete GPU: the buffers are shared host memory, times are not device-memory numbers",
             g_msl, HSDR_METAL_SIMD, (double)[g_dev recommendedMaxWorkingSetSize] / 1073741824.0);
}

const char *hsdr_metal_unavailable(void)
{
    static dispatch_once_t once;
    dispatch_once(&once, ^{
      @autoreleasepool {
          ctx_init();
      }
    });
    return g_why[0] ? g_why : NULL;
}

/* ---- buffers ---- */

/* A shared buffer of `bytes` bytes (at least 16: Metal has no empty buffers), zero-filled. */
static id<MTLBuffer> buffer_new(size_t bytes, const char *what, char *err, size_t errlen)
{
    const size_t len = bytes < 16 ? 16 : bytes;
    const NSUInteger most = [g_dev maxBufferLength];
    if (len > most) {
        snprintf(err, errlen, "%s: %zu bytes exceed the device's maxBufferLength %lu", what, len, (unsigned long)most);
        return nil;
    }
    id<MTLBuffer> b = [g_dev newBufferWithLength:(NSUInteger)len options:MTLResourceStorageModeShared];
    if (!b) {
        snprintf(err, errlen, "newBufferWithLength:%zu options:MTLResourceStorageModeShared (%s) returned nil", len,
                 what);
        return nil;
    }
    if (![b contents]) { /* shared storage always has a CPU address; guard anyway before every memcpy */
        snprintf(err, errlen, "%s: [MTLBuffer contents] is NULL for a shared buffer", what);
        return nil;
    }
    memset([b contents], 0, len);
    return b;
}

/* ---- the device ops ---- */

typedef enum { RUN_MATVEC, RUN_READ, RUN_TOKEN } run_kind;
typedef enum { CLOCK_IDLE, CLOCK_OPEN, CLOCK_PENDING } clock_state;

/* A sample is one command buffer with one compute encoder: mark(0) makes them, enqueue encodes dispatches into the
 * encoder, mark(1) ends the encoding and commits, elapsed() waits and reads the GPU start and end times. */
struct hsdr_device_run {
    run_kind kind;
    const hsdr_metal_kernel *k;                 /* RUN_MATVEC */
    __strong id<MTLComputePipelineState> pipe;  /* RUN_READ: g_read */
    __strong NSArray<id<MTLBuffer>> *w;         /* ncopies weight copies (RUN_READ: the buffers it reads) */
    __strong id<MTLBuffer> act, scale, y;       /* RUN_READ: y is the sink */
    __strong id<MTLBuffer> A, qg, qr;           /* nil unless flags asks for them */
    __strong id<MTLCommandBuffer> cb;           /* the sample's, from mark(0) to elapsed() */
    __strong id<MTLComputeCommandEncoder> enc;  /* from mark(0) to mark(1) */
    clock_state state;                          /* OPEN: between the marks; PENDING: committed, not yet waited for */
    int launches;                               /* encoded since mark(0): each after the first waits for the last */
    int K, N, R, G, e;
    int ncopies;                                /* RUN_TOKEN: 1 */
    unsigned flags;                             /* outputs written (HSDR_METAL_FLAG_A, HSDR_METAL_FLAG_Q) */
    uint32_t n16;                               /* RUN_READ: 16-byte words in a copy */
    NSUInteger read_threads, read_groups;       /* RUN_READ: its launch shape */
    hsdr_device_run **runs;                     /* RUN_TOKEN: the runs it launches (not owned: they outlive it) */
    int nruns;
};

static const char *run_name(const hsdr_device_run *r)
{
    return r->kind == RUN_READ ? "hsdr_read" : r->kind == RUN_TOKEN ? "token" : r->k->function;
}

/* The run lives in calloc'd memory: ARC releases its objects only when the fields are cleared. */
static void run_destroy(hsdr_device_run *r)
{
    if (!r)
        return;
    if (r->enc)
        [r->enc endEncoding]; /* destroyed between the marks: an encoder must end before it is released */
    if (r->cb && r->state == CLOCK_PENDING)
        [r->cb waitUntilCompleted]; /* not freed under a sample in flight */
    r->enc = nil;
    r->cb = nil;
    r->pipe = nil;
    r->w = nil;
    r->act = nil;
    r->scale = nil;
    r->y = nil;
    r->A = nil;
    r->qg = nil;
    r->qr = nil;
    free(r->runs);
    free(r);
}

static id<MTLComputePipelineState> pipeline_for(const hsdr_metal_kernel *k)
{
    for (int i = 0; i < N_KERNELS; i++)
        if (g_kernels[i] == k)
            return g_pipes[i];
    return nil;
}

/* The run's buffers and pipeline; outs: the optional outputs to allocate. */
static int run_fill(hsdr_device_run *r, const hsdr_metal_kernel *k, int K, int N, int R, const uint8_t *W,
                    int ncopies, unsigned outs, char *err, size_t errlen)
{
    if (K <= 0 || K % 128 != 0 || N <= 0 || ncopies <= 0 || !W) {
        snprintf(err, errlen,
                 "K = %d, N = %d, %d weight copies%s: K must be a positive multiple of 128, N and the copies positive",
                 K, N, ncopies, W ? "" : ", no weights");
        return -1;
    }
    if (k == &hsdr_metal_stateset && R > (int)HSDR_METAL_MAX_R) { /* its tile's row sums are threadgroup arrays */
        snprintf(err, errlen, "R = %d: the Metal state-set kernel takes tiles of at most %u rows", R, HSDR_METAL_MAX_R);
        return -1;
    }
    r->kind = RUN_MATVEC, r->k = k, r->K = K, r->N = N, r->R = R > 0 ? R : 1, r->G = K / 128, r->ncopies = ncopies;
    r->flags = outs & k->outs;
    if (!(r->pipe = pipeline_for(k))) {
        snprintf(err, errlen, "no Metal pipeline for kernel %s", k->function);
        return -1;
    }
    const size_t n = (size_t)N, G = (size_t)r->G, wbytes = n * G * BLOCK_BYTES;
    NSMutableArray<id<MTLBuffer>> *w = [NSMutableArray arrayWithCapacity:(NSUInteger)ncopies];
    if (!w) {
        snprintf(err, errlen, "[NSMutableArray arrayWithCapacity:%d] returned nil", ncopies);
        return -1;
    }
    for (int c = 0; c < ncopies; c++) {
        id<MTLBuffer> b = buffer_new(wbytes, "weights", err, errlen);
        if (!b)
            return -1;
        memcpy([b contents], W, wbytes);
        [w addObject:b];
    }
    r->w = w;
    if (!(r->act = buffer_new((size_t)K, "activations", err, errlen)) ||
        !(r->scale = buffer_new(sizeof(float) * (size_t)(K / 32), "activation scales", err, errlen)) ||
        !(r->y = buffer_new(sizeof(float) * n, "y", err, errlen)))
        return -1;
    if ((r->flags & HSDR_METAL_FLAG_A) && !(r->A = buffer_new(sizeof(int32_t) * 8 * n * G, "A", err, errlen)))
        return -1;
    if ((r->flags & HSDR_METAL_FLAG_Q) && (!(r->qg = buffer_new(sizeof(int64_t) * n * G, "Q15.16 per group", err,
                                                                 errlen)) ||
                                           !(r->qr = buffer_new(sizeof(int64_t) * n, "Q15.16 per row", err, errlen))))
        return -1;
    return 0;
}

static int run_create(const hsdr_metal_kernel *k, int K, int N, int R, const uint8_t *W, int ncopies, unsigned outs,
                      hsdr_device_run **out, char *err, size_t errlen)
{
    hsdr_device_run *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    if (run_fill(r, k, K, N, R, W, ncopies, outs, err, errlen) != 0) {
        run_destroy(r);
        return -1;
    }
    *out = r;
    return 0;
}

/* Encode x on the host as the kernel reads it (or, without x, take the LNS8 codes with pre-scale prescale_e),
 * straight into the shared buffers (not timed). */
static int upload_act(hsdr_device_run *r, const float *x, const uint8_t *codes, int prescale_e, char *err,
                      size_t errlen)
{
    int e = r->e;
    if (hsdr_device_activations(x, codes, prescale_e, (size_t)r->K, r->k->lns8 != 0, (uint8_t *)[r->act contents],
                                (float *)[r->scale contents], &e, err, errlen) != 0)
        return -1;
    r->e = e;
    return 0;
}

/* The dispatch of one full matvec of run r on weight copy `copy`. */
static void encode_run(id<MTLComputeCommandEncoder> enc, const hsdr_device_run *r, int copy)
{
    struct hsdr_params p;
    memset(&p, 0, sizeof p);
    p.K = (uint32_t)r->K;
    p.N = (uint32_t)r->N;
    p.G = (uint32_t)r->G;
    p.e = (int32_t)r->e;
    p.flags = r->flags;
    p.R = (uint32_t)r->R;
    p.row0 = 0; /* one dispatch covers every row */
    const NSUInteger threads = hsdr_metal_threads(r->k), rows = hsdr_metal_rows(r->k, r->R);
    [enc setComputePipelineState:r->pipe];
    [enc setBuffer:[r->w objectAtIndex:(NSUInteger)copy] offset:0 atIndex:B_W];
    [enc setBuffer:r->act offset:0 atIndex:B_ACT];
    [enc setBuffer:r->scale offset:0 atIndex:B_SCALE];
    [enc setBuffer:r->y offset:0 atIndex:B_Y];
    [enc setBuffer:(r->A ? r->A : g_dummy) offset:0 atIndex:B_A];
    [enc setBuffer:(r->qg ? r->qg : g_dummy) offset:0 atIndex:B_QG];
    [enc setBuffer:(r->qr ? r->qr : g_dummy) offset:0 atIndex:B_QR];
    [enc setBytes:&p length:sizeof p atIndex:B_PARAMS];
    [enc dispatchThreadgroups:MTLSizeMake(((NSUInteger)r->N + rows - 1) / rows, 1, 1)
        threadsPerThreadgroup:MTLSizeMake(threads, 1, 1)];
}

/* The read run's one dispatch over copy `copy`. */
static void encode_read(id<MTLComputeCommandEncoder> enc, const hsdr_device_run *r, int copy)
{
    const uint32_t n = r->n16;
    [enc setComputePipelineState:r->pipe];
    [enc setBuffer:[r->w objectAtIndex:(NSUInteger)copy] offset:0 atIndex:0];
    [enc setBuffer:r->y offset:0 atIndex:3];
    [enc setBytes:&n length:sizeof n atIndex:7];
    [enc dispatchThreadgroups:MTLSizeMake(r->read_groups, 1, 1)
        threadsPerThreadgroup:MTLSizeMake(r->read_threads, 1, 1)];
}

static const char *status_name(MTLCommandBufferStatus st)
{
    switch (st) {
    case MTLCommandBufferStatusNotEnqueued: return "NotEnqueued";
    case MTLCommandBufferStatusEnqueued: return "Enqueued";
    case MTLCommandBufferStatusCommitted: return "Committed";
    case MTLCommandBufferStatusScheduled: return "Scheduled";
    case MTLCommandBufferStatusCompleted: return "Completed";
    case MTLCommandBufferStatusError: return "Error";
    default: return "unknown";
    }
}

/* After waitUntilCompleted: the command buffer's status, and its GPU time in ns. */
static int finish(id<MTLCommandBuffer> cb, const char *what, double *ns, char *err, size_t errlen)
{
    const MTLCommandBufferStatus st = [cb status];
    if (st != MTLCommandBufferStatusCompleted) {
        char call[160];
        snprintf(call, sizeof call, "command buffer (%s) ended with status %s (%lu), not Completed", what,
                 status_name(st), (unsigned long)st);
        ns_fail(err, errlen, call, [cb error]);
        return -1;
    }
    const CFTimeInterval t0 = [cb GPUStartTime], t1 = [cb GPUEndTime];
    if (!(t0 > 0.0) || t1 < t0) {
        snprintf(err, errlen, "command buffer (%s): GPUStartTime %.9f / GPUEndTime %.9f are not a time span", what, t0,
                 t1);
        return -1;
    }
    *ns = (t1 - t0) * 1e9;
    return 0;
}

/* mark 0: a new command buffer and its compute encoder; mark 1: end the encoding, commit (elapsed() waits). */
static int mark_locked(hsdr_device_run *r, int end, char *err, size_t errlen)
{
    if (!end) {
        if (r->state != CLOCK_IDLE) {
            snprintf(err, errlen, "mark(run, 0) on the Metal %s run: %s", run_name(r),
                     r->state == CLOCK_OPEN ? "its sample is already open (mark(run, 1) missing)"
                                            : "its last sample is in flight (elapsed() missing)");
            return -1;
        }
        id<MTLCommandBuffer> cb = [g_queue commandBuffer];
        if (!cb) {
            snprintf(err, errlen, "[MTLCommandQueue commandBuffer] returned nil (Metal %s run)", run_name(r));
            return -1;
        }
        cb.label = @"hsdr sample";
        id<MTLComputeCommandEncoder> enc = [cb computeCommandEncoder];
        if (!enc) {
            snprintf(err, errlen, "[MTLCommandBuffer computeCommandEncoder] returned nil (Metal %s run)", run_name(r));
            return -1;
        }
        r->cb = cb;
        r->enc = enc;
        r->state = CLOCK_OPEN;
        r->launches = 0;
        return 0;
    }
    if (r->state != CLOCK_OPEN) {
        snprintf(err, errlen, "mark(run, 1) on the Metal %s run without mark(run, 0)", run_name(r));
        return -1;
    }
    [r->enc endEncoding];
    r->enc = nil;
    [r->cb commit];
    r->state = CLOCK_PENDING;
    return 0;
}

static int enqueue_locked(hsdr_device_run *r, int copy, int stage, char *err, size_t errlen)
{
    if (r->state != CLOCK_OPEN) {
        snprintf(err, errlen, "enqueue on the Metal %s run outside a sample: mark(run, 0) first", run_name(r));
        return -1;
    }
    if (copy < 0 || copy >= r->ncopies) {
        snprintf(err, errlen, "enqueue on the Metal %s run: weight copy %d of %d", run_name(r), copy, r->ncopies);
        return -1;
    }
    if (stage >= 0 && r->kind != RUN_MATVEC) {
        snprintf(err, errlen, "enqueue on the Metal %s run: stage %s; it has only its full launch (stage -1)",
                 run_name(r), hsdr_stage_name((hsdr_stage)stage));
        return -1;
    }
    if (stage >= 0 && stage != HSDR_STAGE_REDUCE) { /* the encode runs on the host; the dispatch is one stage */
        snprintf(err, errlen, "stage %s has no separate Metal dispatch", hsdr_stage_name((hsdr_stage)stage));
        return -1;
    }
    if (r->launches++ > 0)
        [r->enc memoryBarrierWithScope:MTLBarrierScopeBuffers]; /* consecutive launches may be dependent */
    switch (r->kind) {
    case RUN_MATVEC: encode_run(r->enc, r, copy); break;
    case RUN_READ: encode_read(r->enc, r, copy); break;
    case RUN_TOKEN:
        for (int i = 0; i < r->nruns; i++) {
            if (i)
                [r->enc memoryBarrierWithScope:MTLBarrierScopeBuffers]; /* a token's GEMVs are dependent */
            encode_run(r->enc, r->runs[i], 0);
        }
        break;
    }
    return 0;
}

/* Wait for the committed sample; *ns: its GPU time. */
static int elapsed_locked(hsdr_device_run *r, double *ns, char *err, size_t errlen)
{
    if (r->state != CLOCK_PENDING) {
        snprintf(err, errlen, "elapsed() on the Metal %s run without a committed sample (mark(run, 1) first)",
                 run_name(r));
        return -1;
    }
    id<MTLCommandBuffer> cb = r->cb;
    r->cb = nil;
    r->state = CLOCK_IDLE;
    [cb waitUntilCompleted];
    return finish(cb, run_name(r), ns, err, errlen); /* a fault in the launches surfaces as its status */
}

/* A mat-vec run whose clock is idle: set_input and output must not touch shared buffers a sample in flight uses. */
static int idle_matvec(const hsdr_device_run *r, const char *op, char *err, size_t errlen)
{
    if (r->kind != RUN_MATVEC) {
        snprintf(err, errlen, "%s on the Metal %s run: only a mat-vec run has activations and outputs", op,
                 run_name(r));
        return -1;
    }
    if (r->state != CLOCK_IDLE) {
        snprintf(err, errlen, "%s on the Metal %s run inside a sample (%s): call it before mark(run, 0) or after "
                 "elapsed()", op, run_name(r), r->state == CLOCK_OPEN ? "between the marks" : "in flight");
        return -1;
    }
    return 0;
}

static int input_locked(hsdr_device_run *r, const float *x, const uint8_t *codes, int prescale_e, char *err,
                        size_t errlen)
{
    if (idle_matvec(r, "set_input", err, errlen) != 0)
        return -1;
    return upload_act(r, x, codes, prescale_e, err, errlen);
}

static int create_locked(const hsdr_metal_kernel *k, const hsdr_exec *e, const uint8_t *ptq1_0, int ncopies,
                         hsdr_device_run **run, char *err, size_t errlen)
{
    return run_create(k, e->K, e->N, e->R, ptq1_0, ncopies, 0, run, err, errlen);
}

static int mt_create(const hsdr_variant *v, const hsdr_exec *e, const uint8_t *ptq1_0, int ncopies,
                     hsdr_device_run **run, double *convert_ns, size_t *footprint, char *err, size_t errlen)
{
    const char *why = hsdr_metal_unavailable();
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    const hsdr_metal_kernel *k = v->device && v->device->impl ? (const hsdr_metal_kernel *)v->device->impl
                                                               : hsdr_metal_kernel_for(v);
    if (!k) {
        snprintf(err, errlen, "%s is not a Metal variant", v->name);
        return -1;
    }
    if (e->cols != 1) {
        snprintf(err, errlen, "%s: %d activation columns asked for; the Metal kernels take exactly one", v->name,
                 e->cols);
        return -1;
    }
    int rc;
    pthread_mutex_lock(&g_lock);
    @autoreleasepool {
        rc = create_locked(k, e, ptq1_0, ncopies, run, err, errlen);
    }
    pthread_mutex_unlock(&g_lock);
    *convert_ns = 0.0; /* the kernels read PTQ1_0 as stored */
    *footprint = (size_t)e->N * (size_t)(e->K / 128) * BLOCK_BYTES;
    return rc;
}

static int mt_set_input(hsdr_device_run *r, const float *x, char *err, size_t errlen)
{
    int rc;
    pthread_mutex_lock(&g_lock);
    @autoreleasepool {
        rc = input_locked(r, x, NULL, 0, err, errlen);
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

static int mt_enqueue(hsdr_device_run *r, int copy, int stage, unsigned skip, unsigned twice, char *err,
                      size_t errlen)
{
    (void)skip, (void)twice; /* nothing is ablatable: the encode runs on the host; the dispatch is one stage */
    int rc;
    pthread_mutex_lock(&g_lock);
    @autoreleasepool {
        rc = enqueue_locked(r, copy, stage, err, errlen);
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

static int mt_mark(hsdr_device_run *r, int end, char *err, size_t errlen)
{
    int rc;
    pthread_mutex_lock(&g_lock);
    @autoreleasepool {
        rc = mark_locked(r, end, err, errlen);
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

static int mt_elapsed(hsdr_device_run *r, double *ns, char *err, size_t errlen)
{
    int rc;
    pthread_mutex_lock(&g_lock);
    @autoreleasepool {
        rc = elapsed_locked(r, ns, err, errlen);
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

static int mt_output(hsdr_device_run *r, float *y, char *err, size_t errlen)
{
    pthread_mutex_lock(&g_lock);
    const int rc = idle_matvec(r, "output", err, errlen);
    if (rc == 0) /* shared storage: a copy out of memory the GPU finished with */
        memcpy(y, [r->y contents], sizeof(float) * (size_t)r->N);
    pthread_mutex_unlock(&g_lock);
    return rc;
}

static void mt_destroy(hsdr_device_run *r)
{
    pthread_mutex_lock(&g_lock);
    @autoreleasepool {
        run_destroy(r);
    }
    pthread_mutex_unlock(&g_lock);
}

static size_t mt_l2_bytes(void)
{
    /* Metal does not report the last-level (system-level) cache: HSDR_METAL_L2_BYTES, else 64 MiB (above a Max chip's
     * 48 MB; an Ultra's is twice that: set the variable there) */
    const char *s = getenv("HSDR_METAL_L2_BYTES");
    const long long v = s ? atoll(s) : 0;
    return v > 0 ? (size_t)v : (size_t)64 << 20;
}

static const char *mt_describe(void)
{
    return hsdr_metal_unavailable() ? "Metal (unavailable)" : g_describe;
}

/* The read run: ncopies shared buffers of bytes/16 16-byte words, a 16-byte sink, g_read and its launch shape. */
static int read_fill(hsdr_device_run *r, size_t bytes, int ncopies, char *err, size_t errlen)
{
    enum { THREADS = 256, MAX_GROUPS = 1024 }; /* 256 Ki threads: several per lane of the largest Apple GPU */
    r->kind = RUN_READ, r->ncopies = ncopies, r->n16 = (uint32_t)(bytes / 16), r->pipe = g_read;
    const size_t len = (size_t)r->n16 * 16;
    NSMutableArray<id<MTLBuffer>> *src = [NSMutableArray arrayWithCapacity:(NSUInteger)ncopies];
    if (!src) {
        snprintf(err, errlen, "[NSMutableArray arrayWithCapacity:%d] returned nil", ncopies);
        return -1;
    }
    for (int c = 0; c < ncopies; c++) {
        id<MTLBuffer> b = buffer_new(len, "read source", err, errlen);
        if (!b)
            return -1;
        memset([b contents], 1, len); /* touched, so every page is backed before the first timed read */
        [src addObject:b];
    }
    r->w = src;
    if (!(r->y = buffer_new(16, "read sink", err, errlen)))
        return -1;
    NSUInteger threads = THREADS;
    if ([g_read maxTotalThreadsPerThreadgroup] < threads)
        threads = [g_read maxTotalThreadsPerThreadgroup];
    NSUInteger groups = ((NSUInteger)r->n16 + threads - 1) / threads;
    if (groups > MAX_GROUPS)
        groups = MAX_GROUPS;
    r->read_threads = threads, r->read_groups = groups;
    return 0;
}

static int read_create_locked(size_t bytes, int ncopies, hsdr_device_run **run, char *err, size_t errlen)
{
    hsdr_device_run *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    if (read_fill(r, bytes, ncopies, err, errlen) != 0) {
        run_destroy(r);
        return -1;
    }
    *run = r;
    return 0;
}

static int mt_read_create(size_t bytes, int ncopies, hsdr_device_run **run, char *err, size_t errlen)
{
    const char *why = hsdr_metal_unavailable();
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    if (bytes < 16 || bytes / 16 >= ((size_t)1 << 31) || ncopies < 1) { /* n < 2^31: i + stride cannot wrap */
        snprintf(err, errlen, "Metal read run over %d copies of %zu bytes: the read kernel takes 16 bytes to 32 GiB a "
                 "copy, and at least one copy", ncopies, bytes);
        return -1;
    }
    int rc;
    pthread_mutex_lock(&g_lock);
    @autoreleasepool {
        rc = read_create_locked(bytes, ncopies, run, err, errlen);
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

static int mt_token_create(hsdr_device_run *const *runs, int n, hsdr_device_run **token, char *err, size_t errlen)
{
    const char *why = hsdr_metal_unavailable();
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    if (!runs || n <= 0) {
        snprintf(err, errlen, "Metal token of %d runs: it needs at least one", n);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (!runs[i] || runs[i]->kind != RUN_MATVEC) {
            snprintf(err, errlen, "Metal token: run %d is %s", i, runs[i] ? "not a mat-vec run" : "NULL");
            return -1;
        }
    hsdr_device_run *r = calloc(1, sizeof *r); /* no Metal object in it, and no shared state: no lock */
    if (r && !(r->runs = malloc(sizeof *r->runs * (size_t)n))) {
        free(r);
        r = NULL;
    }
    if (!r) {
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    memcpy(r->runs, runs, sizeof *r->runs * (size_t)n);
    r->kind = RUN_TOKEN, r->nruns = n, r->ncopies = 1;
    *token = r;
    return 0;
}

#define MT_OPS(kernel)                                                                                               \
    {.create = mt_create, .set_input = mt_set_input, .enqueue = mt_enqueue, .mark = mt_mark, .elapsed = mt_elapsed,   \
     .output = mt_output, .destroy = mt_destroy, .l2_bytes = mt_l2_bytes, .describe = mt_describe,                    \
     .read_create = mt_read_create, .token_create = mt_token_create, .impl = &(kernel)}
const hsdr_device_ops hsdr_metal_production_ops = MT_OPS(hsdr_metal_production);
const hsdr_device_ops hsdr_metal_direct_ops = MT_OPS(hsdr_metal_direct);
const hsdr_device_ops hsdr_metal_stateset_ops = MT_OPS(hsdr_metal_stateset);
const hsdr_device_ops hsdr_metal_q1516_ops = MT_OPS(hsdr_metal_q1516);

/* ---- the checking interface ---- */

/* The timed path: the activations (x, or the codes of group vectors), all-ones bits in every output (NaN floats, -1
 * integers, so that nothing unwritten can pass), one sample of one launch, and every declared output back. */
static int matvec_run(hsdr_device_run *r, hsdr_matvec_io *io, char *err, size_t errlen)
{
    if (input_locked(r, io->x, io->codes, io->prescale_e, err, errlen) != 0)
        return -1;
    const size_t N = (size_t)r->N, G = (size_t)r->G;
    memset([r->y contents], 0xff, [r->y length]);
    if (r->A)
        memset([r->A contents], 0xff, [r->A length]);
    if (r->qg)
        memset([r->qg contents], 0xff, [r->qg length]);
    if (r->qr)
        memset([r->qr contents], 0xff, [r->qr length]);
    double ns;
    if (mark_locked(r, 0, err, errlen) != 0 || enqueue_locked(r, 0, -1, err, errlen) != 0 ||
        mark_locked(r, 1, err, errlen) != 0 || elapsed_locked(r, &ns, err, errlen) != 0)
        return -1;
    memcpy(io->y_f32, [r->y contents], sizeof(float) * N);
    if (r->flags & HSDR_METAL_FLAG_A)
        memcpy(io->A, [r->A contents], sizeof(int32_t) * 8 * N * G);
    if (r->flags & HSDR_METAL_FLAG_Q) {
        memcpy(io->q_group, [r->qg contents], sizeof(int64_t) * N * G);
        memcpy(io->q_row, [r->qr contents], sizeof(int64_t) * N);
    }
    return 0;
}

static int matvec_locked(const hsdr_metal_kernel *k, hsdr_matvec_io *io, unsigned outs, char *err, size_t errlen)
{
    hsdr_device_run *r = NULL;
    /* the state-set kernel checks tiles of 4 rows, as under the shim, so multi-row cases also check a shared state set */
    if (run_create(k, io->K, io->N, k == &hsdr_metal_stateset ? 4 : 1, io->weights, 1, outs, &r, err, errlen) != 0)
        return -1;
    const int rc = matvec_run(r, io, err, errlen);
    run_destroy(r);
    return rc;
}

int hsdr_metal_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    const char *why = hsdr_metal_unavailable();
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    const hsdr_metal_kernel *k = hsdr_metal_kernel_for(v);
    if (!k) {
        snprintf(err, errlen, "%s is not a Metal variant", v->name);
        return -1;
    }
    if (hsdr_device_io_check(io, k->lns8 != 0, err, errlen) != 0)
        return -1;
    const unsigned outs = (io->A ? HSDR_METAL_FLAG_A : 0u) | (io->q_group && io->q_row ? HSDR_METAL_FLAG_Q : 0u);
    int rc;
    pthread_mutex_lock(&g_lock);
    @autoreleasepool {
        rc = matvec_locked(k, io, outs, err, errlen);
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
