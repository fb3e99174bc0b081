// Memory traffic, roofline and the measured heap high-water mark.
#include "profilers/memory/memory_profiler.h"

#include <malloc.h>

#include <algorithm>
#include <limits>

namespace chipfit {

std::optional<int64_t> HeapInUseBytes() {
  // AddressSanitizer replaces malloc: glibc's counters then see almost nothing of the heap.
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)) && !defined(__SANITIZE_ADDRESS__)
  const struct mallinfo2 info = mallinfo2();
  const auto bytes = static_cast<int64_t>(info.uordblks + info.hblkhd);
  if (bytes > 0) return bytes;
#endif
  return std::nullopt;
}

std::string RooflineBound(double flops, double bytes, double peak_gflops, double bandwidth_gbps,
                          double* attainable_gflops) {
  if (attainable_gflops) *attainable_gflops = 0;
  if (bytes <= 0 && flops <= 0) return "";
  if (flops <= 0) return bandwidth_gbps > 0 ? "memory" : "";
  if (peak_gflops <= 0 || bandwidth_gbps <= 0) return "";
  const double intensity = bytes > 0 ? flops / bytes : std::numeric_limits<double>::infinity();
  if (attainable_gflops) *attainable_gflops = std::min(peak_gflops, intensity * bandwidth_gbps);
  return intensity < peak_gflops / bandwidth_gbps ? "memory" : "compute";
}

void MemoryProfiler::Begin(const CompiledModel& model) {
  model_ = &model;
  heap_peak_ = 0;
  sampling_ = true;
  kernels_seen_ = 0;
  Sample();  // after compiling: arenas, constants and packed weights are held now
}

void MemoryProfiler::Sample() {
  if (!heap_baseline_) return;
  if (auto now = HeapInUseBytes()) heap_peak_ = std::max(heap_peak_, *now);
}

void MemoryProfiler::KernelBegin(size_t, const KernelInfo&) {
  if (sampling_) Sample();
}

void MemoryProfiler::KernelEnd(size_t, const KernelInfo&, double) {
  if (!sampling_) return;
  Sample();
  if (model_ != nullptr && ++kernels_seen_ >= model_->kernels().size()) sampling_ = false;
}

Status MemoryProfiler::Collect(const std::vector<double>&, TargetResult& result) {
  if (model_ == nullptr) return Internal("memory profiler: Collect before Begin");
  const auto& costs = model_->costs();
  if (result.layers.size() != model_->kernels().size()) {
    return Internal("memory profiler: needs the latency profiler's layer rows first");
  }
  for (size_t i = 0; i < result.layers.size(); ++i) {
    LayerResult& layer = result.layers[i];
    if (i >= costs.size() || !costs[i].known) continue;
    layer.flops = costs[i].flops;
    layer.bytes_read = costs[i].bytes_read;
    layer.bytes_written = costs[i].bytes_written;
    layer.output_shape = costs[i].output_shape;
    const double bytes = static_cast<double>(layer.bytes_read + layer.bytes_written);
    const double flops = static_cast<double>(layer.flops);
    layer.arithmetic_intensity = bytes > 0 ? flops / bytes : 0;
    if (layer.time_p50_ms > 0) {
      layer.gflops_per_s = flops / (layer.time_p50_ms * 1e6);
      layer.gb_per_s = bytes / (layer.time_p50_ms * 1e6);
    }
    // The reference kernels run on the CPU: its ceilings apply.
    const auto device = ceilings_.find(layer.device == "ref" ? "cpu" : layer.device);
    if (device == ceilings_.end()) continue;
    double peak = 0;
    if (auto precision = ParsePrecision(layer.precision)) {
      const auto it = device->second.peak_gflops.find(*precision);
      if (it != device->second.peak_gflops.end()) peak = it->second;
    }
    layer.bound =
        RooflineBound(flops, bytes, peak, device->second.memory_bandwidth_gbps, &layer.attainable_gflops_per_s);
  }
  const CompileStats& st = model_->stats();
  result.peak_memory_bytes = st.planned_arena_bytes + st.constant_bytes + st.device_arena_bytes;
  if (heap_baseline_ && heap_peak_ > 0) {
    result.measured_peak_memory_bytes = std::max<int64_t>(0, heap_peak_ - *heap_baseline_);
  } else {
    result.notes.push_back(
        "measured memory high-water mark: unavailable (this allocator does not report heap use through mallinfo2)");
  }
  const auto own = ceilings_.find(result.target.DeviceId());
  if (own != ceilings_.end()) result.ceilings = own->second;
  return Status();
}

}  // namespace chipfit
