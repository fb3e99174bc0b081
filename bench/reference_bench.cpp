// Latency of the reference path on the sample and real models (Google Benchmark). The reference
// kernels are the oracle, not the fast path: these numbers are the baseline the devices must beat.
// Usage: build/dev/bench/reference_bench [--benchmark_min_time=2]   (real models: scripts/fetch-models.sh)
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "core/graph/onnx_import.h"
#include "core/runtime/compiled_model.h"

namespace chipfit {
namespace {

namespace fs = std::filesystem;

void RunModel(benchmark::State& state, const fs::path& path, const std::string& input, const Shape& shape) {
  OnnxLoadOptions options;
  options.input_shapes[input] = shape;
  auto loaded = LoadOnnxModel(path, options);
  if (!loaded.ok()) {
    state.SkipWithError(loaded.status().message().c_str());
    return;
  }
  auto graph = ImportModel(*loaded);
  auto model = graph.ok() ? Compile(*graph, Target{}) : Result<std::unique_ptr<CompiledModel>>(graph.status());
  if (!model.ok()) {
    state.SkipWithError(model.status().message().c_str());
    return;
  }
  Tensor x(DType::kF32, shape);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>((i * 37 % 101) / 50.0 - 1.0);
  const std::map<std::string, Tensor> inputs = {{input, x}};
  for (auto _ : state) {
    auto out = (*model)->Run(inputs);
    benchmark::DoNotOptimize(out);
  }
  state.counters["GFLOP/s"] = benchmark::Counter(static_cast<double>((*model)->stats().flops) / 1e9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

const fs::path kRoot = CHIPFIT_SOURCE_DIR;

BENCHMARK_CAPTURE(RunModel, sample_cnn, kRoot / "resources/models/cnn.onnx", "input", Shape{1, 3, 32, 32})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RunModel, ppocr_cls, kRoot / ".cache/models/ppocr_mobile_v2_cls.onnx", "x", Shape{1, 3, 48, 192})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RunModel, openwakeword_embedding, kRoot / ".cache/models/openwakeword_embedding.onnx", "input_1",
                  Shape{1, 76, 32, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace chipfit

BENCHMARK_MAIN();
