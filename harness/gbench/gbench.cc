// hsdr-gbench: Google Benchmark microbenchmarks over the same registry and the same timing setup as `hsdr run`.
// Every benchmarkable variant available here is registered for every GEMV shape of the model tables (shapes.h; the
// output heads are left out by default), hot, one thread; a variant that fails validation on a shape is reported with
// SkipWithError and never timed. Counters: weight bytes per second, weights per second.
//   hsdr-gbench [--model bonsai2-27b] [--tensors ffn_gate,ffn_down] [google benchmark flags, e.g.
//   --benchmark_format=json --benchmark_filter=ref.direct]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "case.h"
#include "inputs.h"
#include "kernel.h"
#include "ptq1_0.h"
#include "shapes.h"
#include "timing.h"
#include "validate.h"
}

namespace {

struct Shape {
    std::string name;
    int K, N;
};

void run_variant(benchmark::State &state, const hsdr_variant *v, Shape shape)
{
    hsdr_case c{};
    c.variant = v;
    c.K = shape.K;
    c.N = shape.N;
    c.R = 1;
    c.threads = 1;
    c.dist = HSDR_DIST_GAUSSIAN;
    c.mode = HSDR_MODE_HOT;
    c.flns_F = 8;
    c.flns_b = 12;
    std::snprintf(c.shape, sizeof c.shape, "%s", shape.name.c_str());
    c.seed = hsdr_case_seed(&c, 1);
    char err[512];
    hsdr_inputs in;
    if (hsdr_inputs_build(&in, c.K, c.N, c.dist, c.seed, err, sizeof err) != 0) {
        state.SkipWithError(err);
        return;
    }
    hsdr_validation val;
    hsdr_validate(&c, &in, &val);
    if (!val.passed) {
        hsdr_inputs_free(&in);
        state.SkipWithError(("validation failed: " + std::string(val.detail)).c_str());
        return;
    }
    hsdr_timing_setup ts;
    if (hsdr_timing_setup_create(&ts, &c, &in, 1, HSDR_MODE_HOT, NULL, NULL, err, sizeof err) != 0) {
        hsdr_inputs_free(&in);
        state.SkipWithError(err);
        return;
    }
    for (auto _ : state) {
        hsdr_timing_run_serial(&ts);
        benchmark::DoNotOptimize(ts.exec.y[0]);
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(in.weight_bytes));
    state.counters["weights_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()) * c.K * c.N,
                                                         benchmark::Counter::kIsRate);
    state.SetLabel(std::string(v->family) + " " + std::to_string(c.K) + "x" + std::to_string(c.N));
    hsdr_timing_setup_free(&ts);
    hsdr_inputs_free(&in);
}

}  // namespace

int main(int argc, char **argv)
{
    const char *model_name = "bonsai2-27b";
    std::string tensors;
    std::vector<char *> rest;
    rest.push_back(argv[0]);
    for (int i = 1; i < argc; i++) {
        if (std::strcmp(argv[i], "--model") == 0 && i + 1 < argc)
            model_name = argv[++i];
        else if (std::strcmp(argv[i], "--tensors") == 0 && i + 1 < argc)
            tensors = std::string(",") + argv[++i] + ",";
        else
            rest.push_back(argv[i]);
    }
    const hsdr_model *m = hsdr_model_find(model_name);
    if (!m) {
        std::fprintf(stderr, "hsdr-gbench: unknown model '%s'\n", model_name);
        return 2;
    }
    std::vector<Shape> shapes;
    auto add = [&](const hsdr_gemv_shape *list, int n) {
        for (int i = 0; i < n; i++) {
            std::string name = std::string(m->name) + "/" + list[i].tensor;
            bool dup = false;
            for (const Shape &s : shapes)
                dup |= s.name == name;
            if (dup || (!tensors.empty() && tensors.find("," + std::string(list[i].tensor) + ",") == std::string::npos))
                continue;
            shapes.push_back({name, list[i].K, list[i].N});
        }
    };
    add(m->attn, m->n_attn);
    add(m->other, m->n_other);
    for (size_t i = 0; i < hsdr_registry_count; i++) {
        const hsdr_variant *v = &hsdr_registry[i];
        if (!v->rows || hsdr_variant_unavailable(v)) /* host variants: device ones time themselves (hsdr run) */
            continue;
        for (const Shape &s : shapes)
            benchmark::RegisterBenchmark((std::string(v->name) + "/" + s.name).c_str(), run_variant, v, s)
                ->Unit(benchmark::kMicrosecond);
    }
    int rargc = static_cast<int>(rest.size());
    benchmark::Initialize(&rargc, rest.data());
    if (benchmark::ReportUnrecognizedArguments(rargc, rest.data()))
        return 2;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
