// CompileForTarget: kernel table per device kind; calibration and the accuracy search for int8.
#include "devices/target_compiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/graph/passes.h"
#include "core/graph/qdq_fusion.h"
#include "core/quant/calibration_data.h"
#include "core/tensor/metrics.h"
#include "devices/cpu/cpu_device.h"
#include "devices/cpu/cpu_kernels.h"
#include "devices/opencl/opencl_kernels.h"
#include "devices/opencl/opencl_runtime.h"
#ifdef CHIPFIT_HAVE_CUDA
#include "devices/cuda/cuda_device.h"
#include "devices/cuda/cuda_kernels.h"
#include "devices/cuda/cuda_runtime.h"
#endif

namespace chipfit {
namespace {

// Feeds every f32 kernel output (by value name) to the calibrator.
class CalibrationObserver final : public RunObserver {
 public:
  explicit CalibrationObserver(Calibrator& calibrator) : calibrator_(calibrator) {}
  bool WantsOutputs(size_t) override { return true; }
  void KernelOutputs(size_t, const KernelInfo& kernel, const std::vector<const Tensor*>& outputs) override {
    for (size_t k = 0; k < outputs.size() && k < kernel.outputs.size(); ++k) {
      if (outputs[k] != nullptr && !kernel.outputs[k].empty()) calibrator_.Observe(kernel.outputs[k], *outputs[k]);
    }
  }

 private:
  Calibrator& calibrator_;
};

// Lowest SQNR over the float outputs and samples.
Result<double> OutputSqnr(CompiledModel& quantized, CompiledModel& reference,
                          const std::vector<std::map<std::string, Tensor>>& samples) {
  double worst = 200.0;
  for (const auto& sample : samples) {
    ASSIGN_OR_RETURN(auto a, quantized.Run(sample));
    ASSIGN_OR_RETURN(auto b, reference.Run(sample));
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      if (b[i].dtype() == DType::kF32) worst = std::min(worst, SqnrDb(a[i], b[i]));
    }
  }
  return worst;
}

// Every kernel's device time, run by run.
class KernelTimes final : public RunObserver {
 public:
  void KernelEnd(size_t index, const KernelInfo&, double elapsed_ms) override {
    if (index >= times_.size()) times_.resize(index + 1);
    times_[index].push_back(elapsed_ms);
  }
  double Median(size_t index) const {
    if (index >= times_.size() || times_[index].empty()) return 0;
    std::vector<double> t = times_[index];
    std::nth_element(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2), t.end());
    return t[t.size() / 2];
  }

 private:
  std::vector<std::vector<double>> times_;
};

// A layer's median time in `model`: its own kernel's and those of the reorders compiled in front of it
// (named "<layer>/reorder:<value>"; an fp32 convolution may need one where the int8 one quantises from any
// layout itself).
double LayerMedian(const CompiledModel& model, const KernelTimes& times, const std::string& name) {
  double total = 0;
  const std::string reorder = name + "/reorder:";
  for (size_t i = 0; i < model.kernels().size(); ++i) {
    const std::string& kernel = model.kernels()[i].name;
    if (kernel == name || kernel.starts_with(reorder)) total += times.Median(i);
  }
  return total;
}

// Each layer of `low_model` that runs in `precision` (int8, bf16): its median time against the fp32
// compile's layer of the same name, the two models run alternately on `sample` so that both see the same
// machine.
Result<std::vector<LayerSpeed>> TimeLayersAgainstFp32(CompiledModel& low_model, CompiledModel& fp32_model,
                                                      const std::map<std::string, Tensor>& sample,
                                                      const Int8Options& int8, const std::string& precision) {
  std::set<std::string> fp32_layers;
  for (const KernelInfo& k : fp32_model.kernels()) fp32_layers.insert(k.name);
  for (int warm = 0; warm < 2; ++warm) {
    RETURN_IF_ERROR(low_model.Run(sample).status());
    RETURN_IF_ERROR(fp32_model.Run(sample).status());
  }
  KernelTimes times_low;
  KernelTimes times32;
  const auto start = std::chrono::steady_clock::now();
  for (int run = 0; run < 200; ++run) {
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    if (run >= int8.speed_min_runs && elapsed.count() >= int8.speed_min_seconds) break;
    RETURN_IF_ERROR(low_model.Run(sample, &times_low).status());
    RETURN_IF_ERROR(fp32_model.Run(sample, &times32).status());
  }
  std::vector<LayerSpeed> speeds;
  for (const KernelInfo& k : low_model.kernels()) {
    if (k.precision != precision || !fp32_layers.contains(k.name)) continue;
    speeds.push_back(
        {k.name, k.onnx_nodes, LayerMedian(low_model, times_low, k.name), LayerMedian(fp32_model, times32, k.name)});
  }
  return speeds;
}

// A CPU bf16 compile that keeps fp32 where bf16 is no faster (Int8Options::fp32_where_faster): each
// bf16 layer timed against its fp32 twin on the first of the user's inputs (seeded random without them),
// and those no faster recompiled in fp32 with both times as their reason.
Result<std::unique_ptr<CompiledModel>> CompileBf16(const Graph& graph, const Target& target, CompileOptions options,
                                                   const Int8Options& int8, QuantReport& report) {
  ASSIGN_OR_RETURN(auto model, Compile(graph, target, options));
  Target fp32_target = target;
  fp32_target.precision = Precision::kFp32;
  ASSIGN_OR_RETURN(auto fp32, Compile(graph, fp32_target, options));
  const std::map<std::string, Tensor> sample =
      int8.samples.empty() ? RandomCalibrationData(graph, 1, int8.seed).front() : int8.samples.front();
  ASSIGN_OR_RETURN(const std::vector<LayerSpeed> speeds, TimeLayersAgainstFp32(*model, *fp32, sample, int8, "bf16"));
  report.kept_slower = LayersThatDoNotPay(speeds);
  if (report.kept_slower.empty()) return model;
  for (const LayerSpeed& layer : report.kept_slower) {
    for (const std::string& node : layer.nodes) {
      options.keep_fp32.emplace(node, fmt::format("fp32: bf16 measured no faster here ({:.4f} ms vs fp32 {:.4f} ms)",
                                                  layer.low_ms, layer.fp32_ms));
    }
  }
  return Compile(graph, target, options);
}

Result<std::unique_ptr<CompiledModel>> CompileInt8(const Graph& graph, const Target& target, CompileOptions options,
                                                   const Int8Options& int8, QuantReport& report) {
  Target fp32_target = target;
  fp32_target.precision = Precision::kFp32;
  ASSIGN_OR_RETURN(auto fp32, Compile(graph, fp32_target, options));

  std::vector<std::map<std::string, Tensor>> samples = int8.samples;
  report.random_calibration = samples.empty();
  if (samples.empty()) samples = RandomCalibrationData(graph, int8.random_samples, int8.seed);
  report.samples = static_cast<int>(samples.size());
  report.method = std::string(CalibrationMethodName(int8.calibration.method));

  // Calibration runs the graph unfused (BatchNormalization folded, as the int8 compile folds it), so every value
  // gets a range: also a layer's own output that a FusedConv would keep inside, which a QDQ export quantises
  // after the layer (chipfit quantize). The kernels read only their inputs' ranges.
  CompileOptions unfused = options;
  unfused.fuse = false;
  ASSIGN_OR_RETURN(auto calibration_model, Compile(graph, fp32_target, unfused));
  Calibrator calibrator(int8.calibration);
  CalibrationObserver observer(calibrator);
  for (const auto& sample : samples) {
    for (const auto& [name, tensor] : sample) calibrator.Observe(name, tensor);
    auto run = calibration_model->Run(sample, &observer);
    if (!run.ok()) return Status(run.status().code(), "calibration run: " + run.status().message());
  }
  report.table = calibrator.ComputeAll();
  options.quant = &report.table;
  for (const auto& [name, reason] : options.keep_fp32) report.kept_fp32.push_back(name);
  // Small layers stay fp32 (cost: 2 FLOPs per multiply-add, from the fp32 compile's shapes).
  for (size_t i = 0; i < fp32->kernels().size(); ++i) {
    const KernelInfo& k = fp32->kernels()[i];
    const KernelCost& cost = fp32->costs()[i];
    const bool weighted = k.op_type == "Conv" || k.op_type == "FusedConv" || k.op_type == "ConvTranspose" ||
                          k.op_type == "MatMul" || k.op_type == "Gemm";
    if (!weighted || !cost.known || cost.flops / 2 >= int8.min_int8_macs) continue;
    for (const std::string& node : k.onnx_nodes) {
      options.keep_fp32.emplace(
          node, "fp32: " + std::to_string(cost.flops / 2) + " multiply-adds are too few for int8 to pay off");
    }
    report.kept_small.push_back(k.name);
  }

  ASSIGN_OR_RETURN(auto model, Compile(graph, target, options));
  if (int8.fp32_where_faster) {
    ASSIGN_OR_RETURN(const std::vector<LayerSpeed> speeds,
                     TimeLayersAgainstFp32(*model, *fp32, samples.front(), int8, "int8"));
    report.kept_slower = LayersThatDoNotPay(speeds);
    for (const LayerSpeed& layer : report.kept_slower) {
      for (const std::string& node : layer.nodes) {
        options.keep_fp32.emplace(node, fmt::format("fp32: int8 measured no faster here ({:.4f} ms vs fp32 {:.4f} ms)",
                                                    layer.low_ms, layer.fp32_ms));
      }
    }
    if (!report.kept_slower.empty()) {
      ASSIGN_OR_RETURN(model, Compile(graph, target, options));
    }
  }
  const bool aim_at_agreement = int8.target_agreement > 0 && int8.agreement;
  auto measure = [&]() -> Status {
    ASSIGN_OR_RETURN(report.output_sqnr_db, OutputSqnr(*model, *fp32, samples));
    if (aim_at_agreement) {
      ASSIGN_OR_RETURN(report.output_agreement, int8.agreement(*model, *fp32, samples));
    }
    return Status();
  };
  auto below_target = [&] {
    return (int8.target_sqnr_db > 0 && report.output_sqnr_db < int8.target_sqnr_db) ||
           (report.output_agreement && *report.output_agreement < int8.target_agreement);
  };
  RETURN_IF_ERROR(measure());
  // The accuracy search. A layer's sensitivity is the output noise it causes alone: the model with only
  // that layer in int8, 10^(-SQNR/10) of its outputs against fp32 on the first sample. (Noise measured
  // where a layer makes it misses that an early layer's noise is amplified downstream: on PP-OCRv4 det
  // that ranking reverted 16 layers and moved the map IoU from 92.1 to 92.5 %.) The most sensitive layers
  // go back to fp32 first, one at a time, until the outputs reach the targets.
  if (below_target() && int8.max_reverted > 0) {
    struct Candidate {
      std::string name;
      std::vector<std::string> nodes;
      double noise = 0;
    };
    std::vector<Candidate> candidates;
    for (const KernelInfo& k : model->kernels()) {
      if (k.precision == "int8") candidates.push_back({k.name, k.onnx_nodes});
    }
    const std::vector<std::map<std::string, Tensor>> first = {samples.front()};
    for (Candidate& c : candidates) {
      CompileOptions alone = options;
      for (const Candidate& other : candidates) {
        if (&other == &c) continue;
        for (const std::string& node : other.nodes) alone.keep_fp32.emplace(node, "fp32: sensitivity analysis");
      }
      ASSIGN_OR_RETURN(auto single, Compile(graph, target, alone));
      ASSIGN_OR_RETURN(const double sqnr, OutputSqnr(*single, *fp32, first));
      c.noise = std::pow(10.0, -sqnr / 10.0);
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.noise > b.noise; });
    for (const Candidate& c : candidates) {
      if (!below_target() || static_cast<int>(report.auto_reverted.size()) >= int8.max_reverted) break;
      for (const std::string& node : c.nodes) {
        options.keep_fp32[node] = "fp32: reverted by the accuracy search (--auto-fp32-sqnr, --auto-fp32-agreement)";
      }
      report.auto_reverted.push_back(c.name);
      ASSIGN_OR_RETURN(model, Compile(graph, target, options));
      RETURN_IF_ERROR(measure());
    }
  }
  for (const KernelInfo& k : model->kernels()) report.int8_kernels += k.precision == "int8" ? 1 : 0;
  return model;
}

}  // namespace

std::vector<LayerSpeed> LayersThatDoNotPay(const std::vector<LayerSpeed>& speeds) {
  std::vector<LayerSpeed> slower;
  for (const LayerSpeed& layer : speeds) {
    if (layer.low_ms >= layer.fp32_ms) slower.push_back(layer);
  }
  return slower;
}

namespace {

// A model that holds QuantizeLinear/DequantizeLinear nodes was quantized by whoever exported it.
bool HoldsQdq(const Graph& graph) {
  return std::any_of(graph.nodes.begin(), graph.nodes.end(), [](const Node& node) {
    return (node.domain.empty() || node.domain == "ai.onnx") &&
           (node.op_type == "QuantizeLinear" || node.op_type == "DequantizeLinear");
  });
}

// Which QDQ patterns Compile will fuse: the passes Fuse runs before FuseQdqPatterns, on a copy.
QdqFusionResult PlanQdqFusion(const Graph& graph, const Target& target, const CompileOptions& options,
                              std::set<std::string>& covered) {
  if (!options.fuse) return {};
  Graph copy = graph;
  if (options.eliminate_dead_nodes) EliminateDeadNodes(copy);
  PromoteConstantNodes(copy);
  if (options.fold_batchnorm) (void)FoldBatchNorm(copy);
  QdqFusionOptions qdq{.conv = !options.kernels->Find("QLinearConv", "", target.kind, target.precision).empty(),
                       .matmul = !options.kernels->Find("QLinearMatMul", "", target.kind, target.precision).empty()};
  for (const auto& [name, reason] : options.keep_fp32) qdq.keep.insert(name);
  QdqFusionResult fusion = FuseQdqPatterns(copy, qdq);
  const std::set<std::string> fused(fusion.fused_nodes.begin(), fusion.fused_nodes.end());
  for (const Node& node : copy.nodes) {
    if (fused.contains(node.name)) covered.insert(node.covers.begin(), node.covers.end());
  }
  return fusion;
}

// A QDQ model on an int8 target runs with its own scales, no calibration: its DequantizeLinear → layer →
// QuantizeLinear patterns become int8 kernels (FuseQdqPatterns, from Fuse), every other node runs as written
// in fp32, with that as its reason. The output SQNR compares the result with the graph as written on fp32.
Result<std::unique_ptr<CompiledModel>> CompileQdq(const Graph& graph, const Target& target, CompileOptions options,
                                                  const Int8Options& int8, QuantReport& report) {
  std::set<std::string> covered;
  const QdqFusionResult fusion = PlanQdqFusion(graph, target, options, covered);
  for (const Node& node : graph.nodes) {
    if (covered.contains(node.name) || options.keep_fp32.contains(node.name)) continue;
    auto left = fusion.left.find(node.name);
    options.keep_fp32[node.name] =
        "fp32 as written: " + (left != fusion.left.end() ? left->second : "outside the model's fused QDQ patterns");
  }
  Target fp32_target = target;
  fp32_target.precision = Precision::kFp32;
  ASSIGN_OR_RETURN(auto as_written, Compile(graph, fp32_target, options));
  ASSIGN_OR_RETURN(auto model, Compile(graph, target, options));

  std::vector<std::map<std::string, Tensor>> samples = int8.samples;
  const bool random = samples.empty();
  if (random) samples = RandomCalibrationData(graph, 1, int8.seed);
  report.samples = static_cast<int>(samples.size());
  report.method = "none (the model's own QuantizeLinear/DequantizeLinear scales)";
  report.notes.push_back("not calibrated: the model's own scales (" + std::to_string(fusion.fused) +
                         " QDQ patterns run as " + (target.kind == DeviceKind::kCpu ? "oneDNN " : "") + "int8, " +
                         std::to_string(fusion.left.size()) + " layers as written in fp32)");
  report.notes.push_back(std::string("fp32 here is the graph as written, its Q/DQ nodes computed in float") +
                         (random ? "; the SQNR is on seeded random input" : ""));
  ASSIGN_OR_RETURN(report.output_sqnr_db, OutputSqnr(*model, *as_written, samples));
  for (const KernelInfo& k : model->kernels()) report.int8_kernels += k.precision == "int8" ? 1 : 0;
  return model;
}

}  // namespace

const KernelTable* KernelsFor(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu: return &CpuKernels();
    case DeviceKind::kOpenCL: return &OpenClKernels();
#ifdef CHIPFIT_HAVE_CUDA
    case DeviceKind::kCuda: return &CudaKernels();
#endif
    default: return nullptr;
  }
}

// The CPU device's verdict on a precision ("bf16 needs AVX-512 …"), read once per process.
Status CheckCpuPrecision(const Target& target) {
  static const std::vector<PrecisionSupport> precisions = [] {
    DiscoveryReport report;
    DiscoverCpu(report);
    return report.devices.empty() ? std::vector<PrecisionSupport>{} : report.devices[0]->info().precisions;
  }();
  for (const PrecisionSupport& p : precisions) {
    if (p.precision == target.precision && !p.support.ok) {
      return Unsupported("target " + target.ToString() + " is unsupported on this CPU: " + p.support.reason);
    }
  }
  return Status();
}

namespace {

// A CUDA target needs the GPU it names and kernels to run on it: without either, every node would
// run on the reference kernels on the CPU, a measurement of the CPU labelled as the GPU.
Status CheckCudaTarget(const Target& target, const KernelTable* kernels) {
  static const DiscoveryReport found = [] {
    DiscoveryReport report;
#ifdef CHIPFIT_HAVE_CUDA
    DiscoverCuda(report);
#else
    report.notes.push_back("CUDA: not built into this chipfit");
#endif
    return report;
  }();
  const DeviceInfo* device = nullptr;
  for (const auto& d : found.devices) {
    if (d->info().kind == DeviceKind::kCuda && d->info().index == target.index) device = &d->info();
  }
  if (device == nullptr) {
    std::string why;
    for (const std::string& note : found.notes) why += (why.empty() ? "" : "; ") + note;
    return Unsupported("target " + target.ToString() + ": there is no " + target.DeviceId() + " on this machine" +
                       (why.empty() ? std::string() : " (" + why + ")") + "; `chipfit devices` lists the targets");
  }
  if (kernels == nullptr) {
    return Unsupported("target " + target.ToString() +
                       ": this chipfit has no CUDA kernels yet, so every node would run on the CPU's reference "
                       "kernels instead of " +
                       device->name + "; profile cpu or opencl targets");
  }
  const Support support = device->SupportFor(target.precision);
  if (!support.ok) return Unsupported("target " + target.ToString() + ": " + support.reason);
  if (target.precision == Precision::kInt8) {
    return Unsupported("target " + target.ToString() +
                       ": chipfit's CUDA device has no int8 kernels yet (int8 cuBLASLt and cuDNN need quantised "
                       "weights with per-channel scales); profile cuda fp32, tf32, fp16 or bf16");
  }
  return Status();
}

}  // namespace

std::string ChannelAlignmentLint(const std::string& layer, Precision precision, int64_t in_channels,
                                 int64_t out_channels) {
  int64_t multiple = 0;
  if (precision == Precision::kFp16 || precision == Precision::kBf16) multiple = 8;
  if (precision == Precision::kInt8) multiple = 16;
  if (multiple == 0) return {};
  std::string which;
  if (in_channels % multiple != 0) which = fmt::format("{} input channels", in_channels);
  if (out_channels % multiple != 0) {
    which += fmt::format("{}{} output channels", which.empty() ? "" : " and ", out_channels);
  }
  if (which.empty()) return {};
  return fmt::format("{}: {} not a multiple of {} ({} tensor-core tiles): pad the channels to use the tiles fully",
                     layer, which, multiple, PrecisionName(precision));
}

std::vector<std::string> TensorCoreChannelLint(const Graph& graph, const Target& target) {
  std::vector<std::string> lines;
  if (target.kind != DeviceKind::kCuda) return lines;
  for (const Node& node : graph.nodes) {
    if (node.inputs.size() < 2) continue;
    auto weight = graph.initializers.find(node.inputs[1]);
    if (weight == graph.initializers.end()) continue;
    const Shape& w = weight->second.shape();
    int64_t in = 0, out = 0;
    const int64_t group = node.GetInt("group", 1);
    if ((node.op_type == "Conv" || node.op_type == "FusedConv") && w.size() >= 3) {
      in = w[1] * group;  // W is [M, C/group, k...]
      out = w[0];
    } else if (node.op_type == "ConvTranspose" && w.size() >= 3) {
      in = w[0];  // W is [C, M/group, k...]
      out = w[1] * group;
    } else if (node.op_type == "MatMul" && w.size() >= 2) {
      in = w[w.size() - 2];
      out = w.back();
    } else if (node.op_type == "Gemm" && w.size() == 2) {
      const bool trans_b = node.GetInt("transB", 0) != 0;
      in = trans_b ? w[1] : w[0];
      out = trans_b ? w[0] : w[1];
    } else {
      continue;
    }
    // A depthwise convolution has no channel reduction for the tiles to pad.
    if (group > 1 && group == in) continue;
    std::string line = ChannelAlignmentLint(node.name, target.precision, in, out);
    if (!line.empty()) lines.push_back(std::move(line));
  }
  return lines;
}

Result<std::unique_ptr<CompiledModel>> CompileForTarget(const Graph& graph, const Target& target,
                                                        CompileOptions options, const Int8Options& int8,
                                                        QuantReport* report) {
  if (target.kind == DeviceKind::kCpu) RETURN_IF_ERROR(CheckCpuPrecision(target));
  options.kernels = KernelsFor(target.kind);
  if (target.kind == DeviceKind::kCuda) RETURN_IF_ERROR(CheckCudaTarget(target, options.kernels));
  if (target.kind == DeviceKind::kOpenCL) {
    if (target.precision != Precision::kFp32 && target.precision != Precision::kFp16) {
      return Unsupported("target " + target.ToString() + ": chipfit's OpenCL device runs fp32 and fp16 only");
    }
    ASSIGN_OR_RETURN(auto runtime, ocl::OpenClRuntime::Get(target.index));
    if (!options.device) options.device = std::make_shared<ocl::OpenClContext>(runtime, target.precision);
    // Nodes the OpenCL device refuses run on the CPU device (copies in between), then the reference.
    if (options.fallback_kernels == nullptr) options.fallback_kernels = &CpuKernels();
    return Compile(graph, target, options);
  }
#ifdef CHIPFIT_HAVE_CUDA
  if (target.kind == DeviceKind::kCuda) {
    if (!options.device) {
      ASSIGN_OR_RETURN(auto runtime, cuda::CudaRuntime::Get(target.index));
      ASSIGN_OR_RETURN(options.device, cuda::CudaContext::Create(runtime, target.precision));
    }
    // Nodes the CUDA device refuses run on the CPU device (copies in between), then the reference.
    if (options.fallback_kernels == nullptr) options.fallback_kernels = &CpuKernels();
    return Compile(graph, target, options);
  }
#endif
  QuantReport local;
  if (target.precision == Precision::kBf16 && options.kernels != nullptr && int8.fp32_where_faster) {
    return CompileBf16(graph, target, std::move(options), int8, report ? *report : local);
  }
  if (target.precision != Precision::kInt8 || options.kernels == nullptr) return Compile(graph, target, options);
  if (HoldsQdq(graph)) return CompileQdq(graph, target, std::move(options), int8, report ? *report : local);
  auto model = CompileInt8(graph, target, std::move(options), int8, report ? *report : local);
  // The table the kernels point at lives in the report; kernels copy what they need at Init.
  return model;
}

}  // namespace chipfit
