// A synthetic profile run of any size (layers × targets), for the Layers page's tests: big enough to
// time sorting and filtering, with fused kernels, drift, energy and a fallback like a real run.
#pragma once

#include <memory>
#include <string>

#include "profilers/run_result.h"

namespace chipfit::testing {

// `layers` ONNX nodes (Conv, Relu, Add … in turn) on `targets` targets: cpu:fp32, cpu:bf16, cpu:int8,
// opencl:0:fp32, then cpu:fp16 …. On every target but the first, each Conv is fused with the Relu after
// it; int8 drifts (SQNR falling with depth), the OpenCL target's Resize nodes fall back to the CPU.
inline std::shared_ptr<RunResult> SyntheticRun(int layers, int targets) {
  static const char* kOps[] = {"Conv", "Relu", "Add", "Conv", "Relu", "Resize", "MatMul", "Softmax"};
  static const Target kTargets[] = {{DeviceKind::kCpu, 0, Precision::kFp32},
                                    {DeviceKind::kCpu, 0, Precision::kBf16},
                                    {DeviceKind::kCpu, 0, Precision::kInt8},
                                    {DeviceKind::kOpenCL, 0, Precision::kFp32},
                                    {DeviceKind::kCpu, 0, Precision::kFp16}};
  auto run = std::make_shared<RunResult>();
  run->run_id = 7;
  run->status = "ok";
  run->model.path = "synthetic.onnx";
  for (int i = 0; i < layers; ++i) run->node_ops["n" + std::to_string(i)] = kOps[i % 8];
  for (int t = 0; t < targets; ++t) {
    auto target = std::make_shared<TargetResult>();
    target->target = kTargets[t % 5];
    target->device_name = "synthetic";
    const std::string device = target->target.DeviceId();
    for (int i = 0; i < layers; ++i) {
      const std::string op = kOps[i % 8];
      LayerResult l;
      l.name = "n" + std::to_string(i);
      l.op = op;
      l.onnx_nodes = {l.name};
      // Fused Conv+Relu on every target but the first.
      if (t > 0 && op == "Conv" && i + 1 < layers) {
        l.op = "FusedConv";
        l.onnx_nodes.push_back("n" + std::to_string(i + 1));
      }
      l.device = device;
      l.precision = std::string(PrecisionName(target->target.precision));
      l.implementation = "synthetic";
      l.time_p50_ms = 0.01 + 0.001 * ((i * 7919 + t * 104729) % 997) * (1.0 + 0.3 * t);
      l.time_p90_ms = l.time_p50_ms * 1.1;
      l.flops = op == "Conv" || op == "MatMul" ? 1000000 + 1000 * i : 0;
      l.bytes_read = 4096 + i;
      l.bytes_written = 4096;
      l.arithmetic_intensity = static_cast<double>(l.flops) / static_cast<double>(l.bytes_read + l.bytes_written);
      l.gflops_per_s = static_cast<double>(l.flops) / (l.time_p50_ms * 1e6);
      l.gb_per_s = static_cast<double>(l.bytes_read + l.bytes_written) / (l.time_p50_ms * 1e6);
      l.bound = l.arithmetic_intensity > 10 ? "compute" : "memory";
      l.drift = DriftStats{0.999, 1e-4, t == 2 ? 50.0 - 40.0 * i / std::max(layers, 1) : 90.0, 0.01};
      l.energy = EnergyValue{l.time_p50_ms * 1e-3 * 20, "estimated"};
      if (t == 3 && op == "Resize") {
        l.device = "cpu";
        target->fallbacks.push_back({l.name, op, "Resize mode cubic is not supported on OpenCL"});
      }
      target->layers.push_back(std::move(l));
      if (t > 0 && op == "Conv" && i + 1 < layers) ++i;  // the Relu went into the fused kernel
    }
    double total = 0;
    for (const LayerResult& l : target->layers) total += l.time_p50_ms;
    target->latency.p50 = total * 0.95;  // end to end runs without the per-layer timers
    target->latency.p90 = total;
    target->latency.iterations = 50;
    run->targets.push_back(std::move(target));
  }
  return run;
}

}  // namespace chipfit::testing
