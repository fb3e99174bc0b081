// Compiling a model for a target with that device's kernels: the one place that knows which kernel
// table serves which device kind, and that calibrates before an int8 compile.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/quant/calibration.h"
#include "core/runtime/compiled_model.h"

namespace chipfit {

// The kernel table of a device kind in this binary; nullptr for the reference and for devices
// without kernels yet (every node then falls back to the reference, each with its reason).
const KernelTable* KernelsFor(DeviceKind kind);

struct Int8Options {
  CalibrationOptions calibration{};
  // Calibration inputs (the user's --data); empty: `random_samples` seeded random inputs, and every
  // output says "random calibration".
  std::vector<std::map<std::string, Tensor>> samples{};
  int random_samples = 8;
  uint64_t seed = 1;
  // > 0: after calibrating, revert the layers with the worst int8 error to fp32, one at a time,
  // until the outputs' SQNR against fp32 on the calibration inputs reaches this (or none is left).
  double target_sqnr_db = 0;
  // > 0 (a share, 0..1): the same search also reverts until the outputs' task agreement with fp32
  // (top-1, sequence or map IoU, as `agreement` computes it) reaches this. Without `agreement`, or when
  // no output has a task, only the SQNR counts.
  double target_agreement = 0;
  // The task agreement of a quantised model's outputs with the fp32 model's on the samples; the
  // profilers provide it (OutputAgreement in profilers/accuracy/task_metrics.h). nullopt: no output
  // has a task.
  std::function<Result<std::optional<double>>(CompiledModel& quantized, CompiledModel& reference,
                                              const std::vector<std::map<std::string, Tensor>>& samples)>
      agreement{};
  int max_reverted = 16;
  // Conv/MatMul/Gemm layers under this many multiply-adds stay fp32: quantising their input costs
  // about as much as the int8 arithmetic saves, and every quantised layer adds error (MobileNetV3's
  // squeeze-excitation 1x1 convs on 1x1 maps, a final classifier).
  int64_t min_int8_macs = 1 << 17;
  // After calibrating, time every int8 layer against the same layer of the fp32 compile (medians over
  // alternating runs of both models on the first calibration input); a layer whose int8 kernel, its
  // input's quantisation included, is no faster than the fp32 one and the reorders in front of it stays fp32. oneDNN's
  // int8 kernels lose to fp32 on depthwise and on small convolutions, where quantising the input costs as much as the
  // arithmetic saves. Off: every eligible layer runs in int8, as a QDQ export needs.
  // A CPU bf16 target makes the same choice (bf16 against fp32, with the rounding of its input): oneDNN 2.6's
  // bf16 depthwise and small convolutions run slower than fp32 on CPUs with AMX as on those without.
  bool fp32_where_faster = false;
  int speed_min_runs = 15;         // per model, after 2 warm-up runs
  double speed_min_seconds = 0.3;  // both models together, at most 200 runs each
};

// One layer's timing in the int8-or-fp32 and bf16-or-fp32 choices (Int8Options::fp32_where_faster).
struct LayerSpeed {
  std::string name;
  std::vector<std::string> nodes;  // its ONNX nodes
  double low_ms = 0;               // median in the target's precision (int8 or bf16)
  double fp32_ms = 0;              // median of the fp32 compile's layer of the same name
};

// The layers that are no faster in the target's precision than in fp32: those of `speeds` whose int8 (bf16)
// median is not below the fp32 one. Pure, so that the rule is tested apart from the noise of timing it.
std::vector<LayerSpeed> LayersThatDoNotPay(const std::vector<LayerSpeed>& speeds);

// What an int8 compile did, for every report to show.
struct QuantReport {
  bool random_calibration = false;
  int samples = 0;
  std::string method;
  QuantTable table{};
  std::vector<std::string> kept_fp32{};      // by request (CompileOptions::keep_fp32)
  std::vector<std::string> kept_small{};     // under Int8Options::min_int8_macs
  std::vector<std::string> auto_reverted{};  // by the accuracy search, worst first
  std::vector<LayerSpeed> kept_slower{};     // int8 (bf16) measured no faster here (Int8Options::fp32_where_faster)
  double output_sqnr_db = 0;                 // int8 vs fp32 outputs on the calibration inputs
  std::optional<double> output_agreement{};  // their task agreement, when the search aimed at it
  int int8_kernels = 0;
  // Lines every report shows under the summary (a QDQ model: not calibrated, how many patterns run in int8).
  std::vector<std::string> notes{};
};

// Tensor cores take fp16/bf16 channels in multiples of 8 and int8 channels in multiples of 16; a layer
// with other channel counts pads its tiles (TensorRT Engine Explorer's lint). The line for one layer,
// empty when its channels are aligned or the precision has no such rule (fp32, tf32).
std::string ChannelAlignmentLint(const std::string& layer, Precision precision, int64_t in_channels,
                                 int64_t out_channels);
// That lint over every Conv, FusedConv, ConvTranspose, MatMul and Gemm whose weights are constant, for a
// CUDA target (empty for other devices): one line per misaligned layer, in graph order.
std::vector<std::string> TensorCoreChannelLint(const Graph& graph, const Target& target);

// Compiles `graph` for `target` with its device's kernels. int8 first compiles the same device in
// fp32, runs the calibration inputs through it (every kernel's outputs feed the calibrator), then
// compiles with the calibrated ranges. `report` (optional) receives what calibration did.
Result<std::unique_ptr<CompiledModel>> CompileForTarget(const Graph& graph, const Target& target,
                                                        CompileOptions options = {}, const Int8Options& int8 = {},
                                                        QuantReport* report = nullptr);

}  // namespace chipfit
