// The memory profiler (docs/measurement.md): each layer's FLOPs and bytes from the op formulas of
// core/runtime/cost.h, arithmetic intensity, achieved GFLOP/s and GB/s at the latency profiler's p50,
// its place on the roofline of the device it ran on (memory- or compute-bound against the measured
// ridge point), the planned peak memory and the measured heap high-water mark.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "devices/device.h"
#include "profilers/profiler.h"

namespace chipfit {

// Bytes the C heap holds now (glibc mallinfo2: in-use chunks + mmapped blocks); nullopt where the
// allocator does not report it (sanitizer runtimes, other libcs).
std::optional<int64_t> HeapInUseBytes();

// Where a layer sits on a roofline: "memory" when its arithmetic intensity is below the ridge point
// (peak / bandwidth), "compute" otherwise; data movement (no FLOPs) is memory-bound; "" without
// ceilings for its precision. `attainable` gets min(peak, intensity × bandwidth) in GFLOP/s.
std::string RooflineBound(double flops, double bytes, double peak_gflops, double bandwidth_gbps,
                          double* attainable_gflops);

class MemoryProfiler final : public Profiler {
 public:
  // `ceilings` by device id ("cpu", "opencl:0"); layers on "ref" use the CPU's. `heap_baseline`:
  // HeapInUseBytes() before the model was compiled, for the high-water mark.
  MemoryProfiler(std::map<std::string, DeviceCeilings> ceilings, std::optional<int64_t> heap_baseline)
      : ceilings_(std::move(ceilings)), heap_baseline_(heap_baseline) {}

  void Begin(const CompiledModel& model) override;
  void KernelBegin(size_t index, const KernelInfo& kernel) override;
  void KernelEnd(size_t index, const KernelInfo& kernel, double elapsed_ms) override;
  // Needs the latency profiler's rows (time p50) in `result.layers`: run it after that one.
  Status Collect(const std::vector<double>& e2e_ms, TargetResult& result) override;

 private:
  void Sample();

  std::map<std::string, DeviceCeilings> ceilings_;
  std::optional<int64_t> heap_baseline_;
  const CompiledModel* model_ = nullptr;
  int64_t heap_peak_ = 0;
  bool sampling_ = true;  // the first observed run only: mallinfo2 walks the heap
  size_t kernels_seen_ = 0;
};

}  // namespace chipfit
