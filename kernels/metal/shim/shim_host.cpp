// The Metal entry points (metal.h) on a machine without Apple's Metal: the .metal kernels compiled as C++ against
// metal_shim.h and run on the CPU, one OS thread per Metal thread, threadgroups one after another. This is the
// checking interface only: the variants register no device ops here, so nothing from the shim is ever timed.
#include <vector> // before the shim: its macros (thread, device, ...) are Metal's keywords, not C++'s

extern "C" {
#include "../../host_encode.h"
#include "../metal.h"
}

#define HSDR_METAL_SHIM 1
#include "metal_shim.h"

#include "../hsdr_metal_common.h"
// the kernels, exactly as the Metal compiler sees them on Apple
#include "../direct.metal"
#include "../production.metal"
#include "../q1516.metal"
#include "../stateset.metal"
typedef decltype(&hsdr_direct) metal_kernel; // the one kernel signature
// Metal's address-space keywords end here
#undef kernel
#undef device
#undef constant
#undef thread
#undef threadgroup


namespace {

struct buffers {
    const uint *W;
    const uchar *ACT;
    const float *SCALE;
    float *Y;
    int *AOUT;
    long *QG, *QR;
};

struct lane_job {
    metal_kernel k;
    const buffers *b;
    hsdr_params *p;
    hsdr_shim::simdgroup *simd;
    hsdr_shim::barrier *group_bar;
    unsigned tg, lid;
};

void *run_lane(void *arg)
{
    const lane_job &j = *static_cast<const lane_job *>(arg);
    hsdr_shim::context &c = hsdr_shim::self();
    c.simd = j.simd;
    c.group_bar = j.group_bar;
    c.lane = j.lid % hsdr_shim::SIMD;
    j.k(j.b->W, j.b->ACT, j.b->SCALE, j.b->Y, j.b->AOUT, j.b->QG, j.b->QR, *j.p, j.tg, j.lid, j.lid % hsdr_shim::SIMD,
        j.lid / hsdr_shim::SIMD);
    return nullptr;
}

// Run `groups` threadgroups of `threads` threads (a multiple of 32) of kernel k, one threadgroup at a time.
int dispatch(metal_kernel k, const buffers &b, hsdr_params &p, unsigned groups, unsigned threads, char *err,
             size_t errlen)
{
    if (threads == 0 || threads % hsdr_shim::SIMD) {
        snprintf(err, errlen, "metal shim: %u threads per threadgroup is not a multiple of 32", threads);
        return -1;
    }
    std::vector<hsdr_shim::simdgroup> simds(threads / hsdr_shim::SIMD);
    std::vector<lane_job> jobs(threads);
    std::vector<pthread_t> ids(threads);
    hsdr_shim::barrier group_bar;
    group_bar.init(threads);
    for (auto &s : simds)
        s.bar.init(hsdr_shim::SIMD);
    int rc = 0;
    for (unsigned tg = 0; tg < groups && rc == 0; tg++) {
        unsigned started = 0;
        for (; started < threads; started++) {
            jobs[started] = {k, &b, &p, &simds[started / hsdr_shim::SIMD], &group_bar, tg, started};
            if (pthread_create(&ids[started], nullptr, run_lane, &jobs[started]) != 0)
                break;
        }
        if (started < threads) {
            /* the lanes already started wait at a barrier that can never fill: nothing to do but stop */
            std::fprintf(stderr, "metal shim: cannot start thread %u of a threadgroup of %u\n", started, threads);
            std::abort();
        }
        for (unsigned i = 0; i < threads; i++)
            pthread_join(ids[i], nullptr);
    }
    return rc;
}

metal_kernel kernel_of(const hsdr_metal_kernel *k)
{
    return k == &hsdr_metal_production ? hsdr_production
           : k == &hsdr_metal_direct   ? hsdr_direct
           : k == &hsdr_metal_q1516    ? hsdr_q1516
                                       : hsdr_stateset;
}

} // namespace

extern "C" const char *hsdr_metal_unavailable(void)
{
    return nullptr; // the shim runs anywhere
}

extern "C" int hsdr_metal_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    const hsdr_metal_kernel *k = hsdr_metal_kernel_for(v);
    if (!k) {
        snprintf(err, errlen, "%s is not a Metal variant", v->name);
        return -1;
    }
    if (hsdr_device_io_check(io, k->lns8, err, errlen) != 0)
        return -1;
    const size_t K = (size_t)io->K, N = (size_t)io->N, G = K / 128;
    std::vector<uchar> act(K);
    std::vector<float> scale(K / 32), y(N);
    const bool want_a = (k->outs & HSDR_METAL_FLAG_A) && io->A, want_q = (k->outs & HSDR_METAL_FLAG_Q) && io->q_group &&
                                                                         io->q_row;
    std::vector<int> A(want_a ? N * G * 8 : 1);
    std::vector<long> qg(want_q ? N * G : 1), qr(want_q ? N : 1);
    /* the state-set kernel takes tiles of 4 rows here, so multi-row cases also check a state set shared by rows */
    const unsigned R = k == &hsdr_metal_stateset ? 4u : 1u;
    hsdr_params p = {(uint)K, (uint)N, (uint)G, 0, 0u, R, 0u};
    if (hsdr_device_activations(io->x, io->codes, io->prescale_e, K, k->lns8, act.data(), scale.data(), &p.e, err,
                                errlen) != 0)
        return -1;
    p.flags = (want_a ? HSDR_METAL_FLAG_A : 0u) | (want_q ? HSDR_METAL_FLAG_Q : 0u);
    // poison: all-ones bits (NaN floats, -1 integers), so nothing unwritten can pass
    std::memset(y.data(), 0xff, y.size() * sizeof y[0]);
    std::memset(A.data(), 0xff, A.size() * sizeof A[0]);
    std::memset(qg.data(), 0xff, qg.size() * sizeof qg[0]);
    std::memset(qr.data(), 0xff, qr.size() * sizeof qr[0]);
    const buffers b = {(const uint *)io->weights, act.data(), scale.data(), y.data(), A.data(), qg.data(), qr.data()};
    const unsigned rows = hsdr_metal_rows(k, (int)R), groups = (unsigned)((N + rows - 1) / rows);
    if (dispatch(kernel_of(k), b, p, groups, hsdr_metal_threads(k), err, errlen) != 0)
        return -1;
    std::memcpy(io->y_f32, y.data(), N * sizeof(float));
    if (p.flags & HSDR_METAL_FLAG_A)
        std::memcpy(io->A, A.data(), A.size() * sizeof(int));
    if (p.flags & HSDR_METAL_FLAG_Q) {
        std::memcpy(io->q_group, qg.data(), qg.size() * sizeof(long));
        std::memcpy(io->q_row, qr.data(), qr.size() * sizeof(long));
    }
    return 0;
}
