// chipfit-bench-ort: end-to-end latency of chipfit's compiled CPU targets against ONNX Runtime
// (onnxruntime-node, a long-lived worker process), on the same inputs, in alternating rounds.
// Usage: chipfit-bench-ort [--models cls,oww,cnn,det,rec | --model FILE [--shape NAME=DxD,...] | --set DIR [--only
// A,B]]
//                          [--data DIR] [--targets cpu:fp32,...] [--kernels] [--json FILE]
#include <fcntl.h>
#include <omp.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "chipfit/version.h"
#include "core/graph/onnx_import.h"
#include "core/graph/onnx_loader.h"
#include "core/quant/calibration_data.h"
#include "core/quant/input_data.h"
#include "core/quant/preprocess.h"
#include "core/runtime/allocator.h"
#include "core/runtime/compiled_model.h"
#include "core/runtime/observer.h"
#include "core/tensor/npy.h"
#include "core/tensor/random.h"
#include "devices/cpu/cpu_device.h"
#include "devices/target_compiler.h"
#include "fmt/format.h"
#include "profilers/accuracy/task_metrics.h"

extern char** environ;

namespace chipfit {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kKernelProfileRuns = 20;
constexpr int kTopKernels = 15;
// Seeded inputs the task agreement with cpu:fp32 is measured on when the model has no --data samples (seeds
// other than the calibration's, so int8 is judged on inputs it was not calibrated on).
constexpr int kAgreementInputs = 32;
// Idle gap between one runtime's block and the next, so that the spinning threads of the previous
// one (ORT's pool, libgomp's OMP_WAIT_POLICY spin) have gone to sleep and the Node worker's
// after-block work is done before the other is timed. At 20 ms the first chipfit target after each
// ORT block had p90 ≈ 4.6 ms on a 0.6 ms model (openWakeWord, whichever target came first); at 250 ms
// its p90 is 0.68 ms.
constexpr auto kBlockGap = std::chrono::milliseconds(250);

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// ---------------------------------------------------------------------------------------------
// Statistics

struct Stats {
  double p50 = 0, p90 = 0, min = 0, max = 0, mean = 0;
  size_t count = 0;
};

// Linear interpolation between closest ranks on a sorted copy.
double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

Stats Summarize(const std::vector<double>& values) {
  Stats s;
  if (values.empty()) return s;
  s.count = values.size();
  s.p50 = Percentile(values, 0.5);
  s.p90 = Percentile(values, 0.9);
  s.min = *std::min_element(values.begin(), values.end());
  s.max = *std::max_element(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  return s;
}

json StatsJson(const Stats& s) {
  return {{"p50", s.p50}, {"p90", s.p90}, {"min", s.min}, {"max", s.max}, {"mean", s.mean}, {"count", s.count}};
}

// "12.3%", or ">999%" when one round was wrecked by something else on the machine.
std::string PercentText(double fraction) {
  return fraction > 9.99 ? std::string(">999%") : fmt::format("{:.1f}%", fraction * 100);
}

// Spread of the per-round medians relative to the overall median: how much the machine drifted.
double RoundSpread(const std::vector<double>& round_p50s, double p50) {
  if (round_p50s.size() < 2 || p50 <= 0) return 0;
  const auto [lo, hi] = std::minmax_element(round_p50s.begin(), round_p50s.end());
  return (*hi - *lo) / p50;
}

// ---------------------------------------------------------------------------------------------
// How much of the machine other processes took while we measured (/proc/stat minus our own and the
// worker's CPU time). The load average lags by a minute; this covers exactly the timed rounds.

struct CpuSnapshot {
  long long busy = 0, total = 0, ours = 0;  // clock ticks
};

long long ProcessTicks(const std::string& stat_file) {
  std::ifstream in(stat_file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream fields(text.substr(paren + 2));
  std::string field;
  long long utime = 0, stime = 0;
  // Fields after "pid (comm) ": state is field 3, utime 14, stime 15.
  for (int index = 3; fields >> field && index <= 15; ++index) {
    if (index == 14) utime = std::atoll(field.c_str());
    if (index == 15) stime = std::atoll(field.c_str());
  }
  return utime + stime;
}

CpuSnapshot TakeCpuSnapshot(pid_t worker) {
  CpuSnapshot snap;
  std::ifstream in("/proc/stat");
  std::string label;
  long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (in >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal && label == "cpu") {
    snap.busy = user + nice + system + irq + softirq + steal;
    snap.total = snap.busy + idle + iowait;
  }
  snap.ours = ProcessTicks("/proc/self/stat") + ProcessTicks(fmt::format("/proc/{}/stat", worker));
  return snap;
}

// Share of all CPUs' time used by other processes between two snapshots; negative when unknown.
double ForeignCpuShare(const CpuSnapshot& a, const CpuSnapshot& b) {
  const long long total = b.total - a.total;
  if (total <= 0) return -1;
  const long long foreign = (b.busy - a.busy) - (b.ours - a.ours);
  return std::clamp(static_cast<double>(foreign) / static_cast<double>(total), 0.0, 1.0);
}

// ---------------------------------------------------------------------------------------------
// The ONNX Runtime worker: node bench/ort_worker.mjs, JSON lines over two pipes.

class OrtWorker {
 public:
  OrtWorker(const OrtWorker&) = delete;
  OrtWorker& operator=(const OrtWorker&) = delete;

  static Result<std::unique_ptr<OrtWorker>> Start(const fs::path& script, const fs::path& node_modules) {
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0) return IoError(std::string("pipe: ") + std::strerror(errno));
    if (pipe2(from_child, O_CLOEXEC) != 0) {
      close(to_child[0]);
      close(to_child[1]);
      return IoError(std::string("pipe: ") + std::strerror(errno));
    }
    // The environment is built here, not in the child: only exec-safe work happens after fork.
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) {
      if (std::strncmp(*e, "NODE_PATH=", 10) != 0) env_strings.emplace_back(*e);
    }
    env_strings.push_back("NODE_PATH=" + node_modules.string());
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string node = "node", script_arg = script.string();
    std::vector<char*> argv = {node.data(), script_arg.data(), nullptr};

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, "node", &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    close(to_child[0]);
    close(from_child[1]);
    if (rc != 0) {
      close(to_child[1]);
      close(from_child[0]);
      return NotFound(std::string("cannot start node (") + std::strerror(rc) +
                      "): install nodejs (scripts/setup-deps.sh)");
    }
    return std::unique_ptr<OrtWorker>(new OrtWorker(pid, to_child[1], from_child[0]));
  }

  ~OrtWorker() {
    close(to_child_);  // EOF on its stdin ends the worker's command loop
    close(from_child_);
    int status = 0;
    waitpid(pid_, &status, 0);
  }

  // Sends one command and waits for its reply; an {"error": ...} reply becomes a Status.
  Result<json> Call(const json& command) {
    const std::string line = command.dump() + "\n";
    for (size_t done = 0; done < line.size();) {
      const ssize_t n = write(to_child_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return IoError("ONNX Runtime worker is gone (its stderr is above)");
      done += static_cast<size_t>(n);
    }
    size_t newline;
    while ((newline = buffer_.find('\n')) == std::string::npos) {
      char chunk[65536];
      const ssize_t n = read(from_child_, chunk, sizeof(chunk));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return IoError("ONNX Runtime worker exited (its stderr is above)");
      buffer_.append(chunk, static_cast<size_t>(n));
    }
    const std::string reply_text = buffer_.substr(0, newline);
    buffer_.erase(0, newline + 1);
    json reply = json::parse(reply_text, nullptr, /*allow_exceptions=*/false);
    if (reply.is_discarded()) return Internal("ONNX Runtime worker replied with a non-JSON line: " + reply_text);
    if (reply.contains("error")) return Internal("ONNX Runtime: " + reply["error"].get<std::string>());
    return reply;
  }

  pid_t pid() const { return pid_; }

  Result<std::vector<double>> Time(int iterations) {
    auto reply = Call({{"cmd", "run"}, {"iterations", iterations}});
    if (!reply.ok()) return reply.status();
    return (*reply)["times_ms"].get<std::vector<double>>();
  }

 private:
  OrtWorker(pid_t pid, int to_child, int from_child) : pid_(pid), to_child_(to_child), from_child_(from_child) {}

  pid_t pid_;
  int to_child_;
  int from_child_;
  std::string buffer_;
};

// ---------------------------------------------------------------------------------------------
// Models and targets

struct BenchInput {
  std::string name;
  Shape shape;
};

struct BenchModel {
  std::string key;  // --models name, or the file name without .onnx
  std::string label;
  fs::path path;
  std::vector<BenchInput> inputs;  // every graph input that is not an initializer, at a static shape
  // --data, or a --set model's NAME.data: its first sample is the timing input, all its samples calibrate int8.
  std::string data_dir;
};

struct TargetRun {
  Target target;
  std::string status = "ok";  // ok | unsupported | failed
  std::string reason;
  double compile_ms = 0;
  std::unique_ptr<CompiledModel> model;
  std::vector<double> times;
  std::vector<double> round_p50s;
  Stats stats;
  int fallbacks = 0;           // nodes the device did not take (reference kernels)
  int precision_fallback = 0;  // kernels computing in another precision than the target's
  std::optional<double> rel_error;
  std::string worst_output;  // of several outputs, the one farthest from ORT's
  // The task agreement with cpu:fp32 (profile's task metric: top-1, detections, maps, sequences), over
  // `agreement_inputs`; nullopt where no output has a task metric.
  std::optional<double> agreement;
  std::string agreement_inputs;
  std::string quant_note;  // int8: what CompileForTarget's calibration did
};

std::string ShapeText(const Shape& shape) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "x" : "") + std::to_string(shape[i]);
  return text;
}

// "input_ids 1x128, attention_mask 1x128"
std::string InputsText(const std::vector<BenchInput>& inputs) {
  std::string text;
  for (const BenchInput& in : inputs) text += (text.empty() ? "" : ", ") + in.name + " " + ShapeText(in.shape);
  return text;
}

Result<Graph> LoadGraph(const fs::path& path, const std::vector<BenchInput>& inputs) {
  OnnxLoadOptions options;
  for (const BenchInput& in : inputs) options.input_shapes[in.name] = in.shape;
  auto loaded = LoadOnnxModel(path, options);
  if (!loaded.ok()) return loaded.status();
  return ImportModel(*loaded);
}

// Max |a−b| over all elements of all outputs, relative to max |reference|; *worst is the output whose own
// max |a−b| / max |reference| is largest (a detector's boxes, say, where near-equal scores swap two rows).
Result<double> RelativeError(const std::vector<Tensor>& actual, const std::vector<Tensor>& reference, size_t* worst) {
  if (actual.size() != reference.size())
    return Internal(fmt::format("{} outputs vs {} from ONNX Runtime", actual.size(), reference.size()));
  double max_ref = 0, max_err = 0, worst_rel = -1;
  for (size_t o = 0; o < actual.size(); ++o) {
    double output_ref = 0, output_err = 0;
    if (actual[o].shape() != reference[o].shape())
      return Internal(fmt::format("output {}: shape {} vs {} from ONNX Runtime", o, ShapeText(actual[o].shape()),
                                  ShapeText(reference[o].shape())));
    for (int64_t i = 0; i < reference[o].numel(); ++i) {
      const double r = reference[o].GetAsDouble(i), a = actual[o].GetAsDouble(i);
      if (!std::isfinite(r) || !std::isfinite(a)) {
        // std::max would drop a NaN silently; equal infinities agree, anything else is a total mismatch.
        if (a != r) output_err = std::numeric_limits<double>::infinity();
        continue;
      }
      output_ref = std::max(output_ref, std::fabs(r));
      output_err = std::max(output_err, std::fabs(a - r));
    }
    if (const double rel = output_ref > 0 ? output_err / output_ref : output_err; rel > worst_rel) {
      worst_rel = rel;
      *worst = o;
    }
    max_ref = std::max(max_ref, output_ref);
    max_err = std::max(max_err, output_err);
  }
  return max_ref > 0 ? max_err / max_ref : max_err;
}

Tensor Filled(DType dtype, const Shape& shape, int value) {
  Tensor t(dtype, shape);
  VisitDType(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_integral_v<T>) std::fill_n(t.data<T>(), t.numel(), static_cast<T>(value));
  });
  return t;
}

// The timing input without --data: per input SeededTensor(seed + index × 7919), as RandomCalibrationData
// seeds them, so floats are uniform in [-1, 1) and integers in [0, 10) (token ids any vocabulary holds).
// An integer or bool input named like a mask is all ones (attend everywhere) and one named like token-type
// ids all zeros, as a tokenizer makes them: random 0..9 there would be out of range or a broken mask.
std::map<std::string, Tensor> SeededInputs(const std::vector<ValueDesc>& inputs, uint64_t seed) {
  std::map<std::string, Tensor> tensors;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueDesc& in = inputs[i];
    const DType dtype = in.dtype == DType::kUndefined ? DType::kF32 : in.dtype;
    Shape shape = in.has_shape ? in.shape : Shape{};
    for (int64_t& d : shape) d = d < 0 ? 1 : d;
    std::string name = in.name;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    const bool integer = dtype != DType::kF32 && dtype != DType::kF64 && dtype != DType::kF16 && dtype != DType::kBF16;
    if (integer && name.find("mask") != std::string::npos) {
      tensors.emplace(in.name, Filled(dtype, shape, 1));
    } else if (integer && (name.find("token_type") != std::string::npos || name.find("segment") != std::string::npos)) {
      tensors.emplace(in.name, Filled(dtype, shape, 0));
    } else {
      tensors.emplace(in.name, SeededTensor(dtype, shape, seed + static_cast<uint64_t>(i) * 7919u));
    }
  }
  return tensors;
}

Result<std::vector<double>> TimeChipfit(CompiledModel& model, const std::map<std::string, Tensor>& inputs,
                                        int iterations) {
  std::vector<double> times;
  times.reserve(static_cast<size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    const auto start = Clock::now();
    auto out = model.Run(inputs);
    const double ms = MsSince(start);
    if (!out.ok()) return out.status();
    times.push_back(ms);
  }
  return times;
}

// Per-kernel device times (KernelEnd) over several runs: the profile that decides optimisations.
class KernelTimes final : public RunObserver {
 public:
  explicit KernelTimes(size_t kernels) : samples_(kernels) {}
  void KernelEnd(size_t index, const KernelInfo& /*kernel*/, double elapsed_ms) override {
    if (index < samples_.size()) samples_[index].push_back(elapsed_ms);
  }
  const std::vector<std::vector<double>>& samples() const { return samples_; }

 private:
  std::vector<std::vector<double>> samples_;
};

std::string Shorten(const std::string& text, size_t width) {
  return text.size() <= width ? text : text.substr(0, width - 1) + "~";
}

json ProfileKernels(TargetRun& run, const std::map<std::string, Tensor>& inputs) {
  CompiledModel& model = *run.model;
  KernelTimes observer(model.kernels().size());
  std::vector<double> observed_e2e;
  for (int i = 0; i < kKernelProfileRuns; ++i) {
    const auto start = Clock::now();
    auto out = model.Run(inputs, &observer);
    observed_e2e.push_back(MsSince(start));
    if (!out.ok()) {
      fmt::print("  kernel profile of {} failed: {}\n", run.target.ToString(), out.status().ToString());
      return nullptr;
    }
  }
  struct Row {
    size_t index;
    double p50;
  };
  std::vector<Row> rows;
  double total = 0;
  for (size_t k = 0; k < observer.samples().size(); ++k) {
    const double p50 = Percentile(observer.samples()[k], 0.5);
    rows.push_back({k, p50});
    total += p50;
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.p50 > b.p50; });

  fmt::print("\n  {} — top {} of {} kernels by p50 over {} observed runs\n", run.target.ToString(),
             std::min<size_t>(kTopKernels, rows.size()), rows.size(), kKernelProfileRuns);
  fmt::print("  {:<34} {:<22} {:<26} {:>5} {:>10} {:>7}\n", "kernel (first ONNX node)", "op_type", "implementation",
             "prec", "p50 us", "share");
  json top = json::array();
  for (size_t r = 0; r < rows.size(); ++r) {
    const KernelInfo& info = model.kernels()[rows[r].index];
    const double share = total > 0 ? rows[r].p50 / total : 0;
    if (r < static_cast<size_t>(kTopKernels)) {
      fmt::print("  {:<34} {:<22} {:<26} {:>5} {:>10.1f} {:>6.1f}%\n", Shorten(info.name, 34),
                 Shorten(info.op_type, 22), Shorten(info.implementation, 26), info.precision, rows[r].p50 * 1e3,
                 share * 100);
    }
    top.push_back({{"name", info.name},
                   {"op_type", info.op_type},
                   {"implementation", info.implementation},
                   {"precision", info.precision},
                   {"p50_us", rows[r].p50 * 1e3},
                   {"share", share}});
  }
  // The same time grouped by op and implementation: which kernel family to write or tune next.
  std::map<std::pair<std::string, std::string>, std::pair<double, int>> groups;
  for (const Row& row : rows) {
    const KernelInfo& info = model.kernels()[row.index];
    auto& g = groups[{info.op_type, info.implementation}];
    g.first += row.p50;
    g.second += 1;
  }
  std::vector<std::pair<std::pair<std::string, std::string>, std::pair<double, int>>> sorted(groups.begin(),
                                                                                             groups.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  fmt::print("  by op_type / implementation:");
  for (size_t i = 0; i < sorted.size() && i < 6; ++i) {
    fmt::print("{} {} [{}] x{} {:.1f}%", i ? "," : "", sorted[i].first.first, sorted[i].first.second,
               sorted[i].second.second, total > 0 ? sorted[i].second.first / total * 100 : 0);
  }
  fmt::print("\n");
  const double e2e = run.stats.p50, observed = Percentile(observed_e2e, 0.5);
  fmt::print(
      "  sum of kernel p50s {:.3f} ms = {:.0f}% of e2e p50 {:.3f} ms (timed pass, no observer); e2e p50 of the "
      "observed runs {:.3f} ms\n",
      total, e2e > 0 ? total / e2e * 100 : 0, e2e, observed);
  return {{"runs", kKernelProfileRuns},
          {"sum_p50_ms", total},
          {"e2e_p50_ms", e2e},
          {"observed_e2e_p50_ms", observed},
          {"kernels", top}};
}

// ---------------------------------------------------------------------------------------------
// Per-call floor: a one-node Identity model shows what each side costs per call before any math.

Result<fs::path> WriteIdentityModel(const fs::path& file) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("chipfit-bench-ort");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  auto* graph = model.mutable_graph();
  graph->set_name("call_floor");
  auto* node = graph->add_node();
  node->set_name("identity");
  node->set_op_type("Identity");
  node->add_input("x");
  node->add_output("y");
  const auto describe = [](onnx::ValueInfoProto* value, const char* name) {
    value->set_name(name);
    auto* tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    tensor->mutable_shape()->add_dim()->set_dim_value(1);
  };
  describe(graph->add_input(), "x");
  describe(graph->add_output(), "y");
  std::ofstream out(file, std::ios::binary);
  if (!out || !model.SerializeToOstream(&out)) return IoError("cannot write " + file.string());
  return file;
}

struct Floor {
  std::optional<Stats> ort, chipfit;
};

Floor MeasureFloor(OrtWorker& worker, const fs::path& work, int iterations, int threads) {
  Floor floor;
  auto file = WriteIdentityModel(work / "identity.onnx");
  if (!file.ok()) return floor;
  const Tensor x = SeededTensor(DType::kF32, {1}, 1);
  if (!WriteNpy(work / "identity_x.npy", x).ok()) return floor;
  auto loaded = worker.Call({{"cmd", "load"},
                             {"model", file->string()},
                             {"inputs", {{"x", (work / "identity_x.npy").string()}}},
                             {"threads", threads}});
  if (loaded.ok() && worker.Time(iterations).ok()) {  // the first batch warms up
    auto times = worker.Time(iterations);
    if (times.ok()) floor.ort = Summarize(*times);
  }
  auto graph = LoadGraph(*file, {{"x", {1}}});
  if (!graph.ok()) return floor;
  auto model = CompileForTarget(*graph, Target{DeviceKind::kCpu, 0, Precision::kFp32});
  if (!model.ok()) return floor;
  const std::map<std::string, Tensor> inputs = {{"x", x}};
  if (TimeChipfit(**model, inputs, iterations).ok()) {  // the first batch warms up
    auto times = TimeChipfit(**model, inputs, iterations);
    if (times.ok()) floor.chipfit = Summarize(*times);
  }
  return floor;
}

// ---------------------------------------------------------------------------------------------

struct Settings {
  std::vector<std::string> models = {"cls", "oww", "cnn"};
  std::string model_file;           // --model: any model, benchmarked the same way
  std::vector<std::string> shapes;  // --shape NAME=DxD...: its inputs' shapes (needed where a dim is dynamic)
  std::string set_dir;              // --set: every NAME.onnx of a folder, each with its NAME.data
  std::vector<std::string> only;    // --only: of the set, these names
  std::vector<std::string> targets = {"cpu:fp32", "cpu:int8", "cpu:bf16"};
  int rounds = 10;
  int iterations = 50;
  int warmup = 20;
  int threads = 0;
  bool kernels = false;
  std::string json_file;
  // The inputs (--data with --preprocess: the timing input and int8's calibration inputs) and int8 as
  // `chipfit profile` takes it: calibration method, the accuracy search's target, and --int8-all-layers.
  std::string data_dir;
  std::string preprocess;
  std::string calibration = "minmax";
  double auto_fp32_agreement = 0;
  bool int8_all_layers = false;
};

fs::path EnvPath(const char* name, const fs::path& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? fs::path(value) : fallback;
}

// 1-minute load average (/proc/loadavg); negative when unknown.
double LoadAverage() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  in >> load;
  return in ? load : -1;
}

// A busy machine makes every number here unreliable, and it hurts the two runtimes differently
// (a descheduled thread stalls a whole OpenMP barrier): say so next to the numbers. Only at the
// start: later the average includes this benchmark itself (the per-model /proc/stat share does not).
void PrintLoad(const char* when, const char* key, int cores, json& out) {
  const double load = LoadAverage();
  if (load < 0) return;
  out[key] = load;
  fmt::print("load average {}: {:.2f} on {} cores{}\n", when, load, cores,
             load > 0.5 * cores ? " — WARNING: other processes compete for the CPU, timings are noisy" : "");
}

std::string ReadOrtVersion(const fs::path& node_modules) {
  std::ifstream in(node_modules / "onnxruntime-node/package.json");
  const json package = json::parse(in, nullptr, /*allow_exceptions=*/false);
  return package.is_object() && package.contains("version") ? package["version"].get<std::string>() : "unknown";
}

// The folder of DIR's first .npy sample, ordered as LoadCalibrationData orders them: DIR itself when it
// holds loose .npy files, else its first sub-folder by name; empty when there is none.
fs::path FirstNpySample(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> folders;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_regular_file(type_ec) && it->path().extension() == ".npy") return dir;
    if (it->is_directory(type_ec) && !it->path().filename().string().starts_with(".")) folders.push_back(it->path());
  }
  if (folders.empty()) return {};
  return *std::min_element(folders.begin(), folders.end(), [](const fs::path& a, const fs::path& b) {
    return a.filename().string() < b.filename().string();
  });
}

// --model FILE or a --set member: each input's shape is the one --shape gives, else that of its .npy in the
// data folder's first sample, else the one the model declares (which must then be static).
Result<BenchModel> ModelFromFile(const fs::path& file, const std::vector<std::string>& shape_texts,
                                 const std::string& data_dir) {
  auto loaded = LoadOnnxModel(file, {.run_checker = false, .infer_shapes = false});
  if (!loaded.ok()) return loaded.status();
  std::map<std::string, Shape> given;
  for (const std::string& text : shape_texts) {
    ASSIGN_OR_RETURN(auto binding, ParseShapeBinding(text));
    given[binding.first] = binding.second;
  }
  std::set<std::string> initializers;
  for (const auto& init : loaded->proto.graph().initializer()) initializers.insert(init.name());
  BenchModel model{
      .key = file.stem().string(), .label = file.filename().string(), .path = file, .inputs = {}, .data_dir = data_dir};
  const fs::path sample = data_dir.empty() ? fs::path() : FirstNpySample(data_dir);
  std::string names;
  for (const auto& in : loaded->proto.graph().input()) {
    if (initializers.contains(in.name())) continue;
    names += (names.empty() ? "'" : ", '") + in.name() + "'";
    BenchInput& input = model.inputs.emplace_back(BenchInput{in.name(), {}});
    if (auto it = given.find(in.name()); it != given.end()) {
      input.shape = it->second;
      given.erase(it);
      continue;
    }
    if (const fs::path npy = sample / CalibrationFileName(in.name()); !sample.empty() && fs::is_regular_file(npy)) {
      ASSIGN_OR_RETURN(Tensor tensor, ReadNpy(npy));
      input.shape = tensor.shape();
      continue;
    }
    const ValueDesc desc = ValueDescFromOnnx(in);
    if (!desc.has_shape || std::any_of(desc.shape.begin(), desc.shape.end(), [](int64_t d) { return d < 0; })) {
      return InvalidArgument(fmt::format("input '{}' is {}; give --shape {}=DxD... or its .npy in --data", in.name(),
                                         DescribeValueType(desc), in.name()));
    }
    input.shape = desc.shape;
  }
  if (model.inputs.empty()) return InvalidArgument("the model has no input to feed");
  if (!given.empty()) {
    return InvalidArgument(fmt::format("--shape names '{}'; the model's inputs are {}", given.begin()->first, names));
  }
  return model;
}

// One model's line in the closing table of a multi-model run.
struct TargetSummary {
  std::string target;
  std::string status;
  double ratio = 0;                   // p50 / ORT p50
  double ratio_lo = 0, ratio_hi = 0;  // over the rounds: this round's p50 / the same round's ORT p50
  double drift = 0;
  std::optional<double> rel_error;
  std::string worst_output;
  int fallbacks = 0;
  std::optional<double> agreement;  // task agreement with cpu:fp32
};

struct ModelSummary {
  std::string key;
  std::string error;  // why the model was not measured at all
  double ort_p50 = 0, ort_drift = 0;
  double foreign = -1;
  std::vector<TargetSummary> targets;
};

struct ModelInputs {
  std::map<std::string, Tensor> timing;                // fed to both runtimes, timed and compared
  std::vector<std::map<std::string, Tensor>> samples;  // int8 calibration: the data folder's, else none (seeded)
  std::string source;                                  // where `timing` comes from, for the output
};

// The data folder's samples (the first one times), else SeededInputs; written as .npy for the ORT worker.
Result<ModelInputs> PrepareInputs(const BenchModel& bm, const Graph& graph, const Settings& settings,
                                  const fs::path& work, json& files) {
  ModelInputs result;
  if (bm.data_dir.empty()) {
    result.timing = SeededInputs(graph.inputs, 1);
    result.source = "seeded";
  } else {
    InputDataOptions data_options;
    auto preprocess = ParsePreprocess(settings.preprocess);
    if (!preprocess.ok()) return InvalidArgument("--preprocess: " + preprocess.status().message());
    data_options.preprocess = *preprocess;
    auto data = LoadInputData(bm.data_dir, graph.inputs, data_options);
    if (!data.ok()) return InvalidArgument("--data: " + data.status().message());
    result.samples = std::move(data->samples);
    result.timing = result.samples.front();
    result.source = fmt::format("first of {} sample(s) in {} ({}), all of them int8's calibration inputs",
                                result.samples.size(), bm.data_dir, data->kind);
  }
  files = json::object();
  for (const auto& [name, tensor] : result.timing) {
    const fs::path file = work / (bm.key + "_" + CalibrationFileName(name));
    RETURN_IF_ERROR(WriteNpy(file, tensor));
    files[name] = file.string();
  }
  return result;
}

struct OrtTimes {
  Stats stats;
  std::vector<double> round_p50s;
  double create_ms = 0;
};

// min and max over the rounds of (this round's p50 / the same round's ORT p50); nullopt unless every round ran.
std::optional<std::pair<double, double>> RoundRatioRange(const std::vector<double>& round_p50s,
                                                         const std::vector<double>& ort_round_p50s) {
  if (round_p50s.empty() || round_p50s.size() != ort_round_p50s.size()) return std::nullopt;
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (size_t r = 0; r < round_p50s.size(); ++r) {
    const double ratio = ort_round_p50s[r] > 0 ? round_p50s[r] / ort_round_p50s[r] : 0;
    lo = std::min(lo, ratio);
    hi = std::max(hi, ratio);
  }
  return std::make_pair(lo, hi);
}

// "12x TopK (reason), 3x NonZero (reason)": the nodes left on reference kernels, grouped, most frequent first.
std::string FallbackText(const std::vector<Fallback>& fallbacks) {
  std::map<std::pair<std::string, std::string>, int> groups;
  for (const Fallback& f : fallbacks) ++groups[{f.op, f.reason}];
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [key, count] : groups) sorted.emplace_back(count, key.first + " (" + Shorten(key.second, 90) + ")");
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string text;
  for (size_t i = 0; i < sorted.size() && i < 3; ++i)
    text += fmt::format("{}{}x {}", i ? ", " : "", sorted[i].first, sorted[i].second);
  if (sorted.size() > 3) text += fmt::format(", {} more kinds", sorted.size() - 3);
  return text;
}

// One model's table, its JSON and its line of the closing summary.
void ReportModel(const std::vector<TargetRun>& runs, const OrtTimes& ort_times, const std::optional<Stats>& ort_floor,
                 double load_ms, double foreign, json& out, ModelSummary& summary) {
  const Stats& ort = ort_times.stats;
  summary.ort_p50 = ort.p50;
  summary.ort_drift = RoundSpread(ort_times.round_p50s, ort.p50);
  summary.foreign = foreign;
  fmt::print("  chipfit load+import {:.1f} ms; ORT session create {:.1f} ms\n", load_ms, ort_times.create_ms);
  fmt::print("  {:<18} {:>10} {:>9} {:>9} {:>9} {:>8} {:>7} {:>13} {:>10}  {}\n", "runtime/target", "compile ms",
             "p50 ms", "p90 ms", "min ms", "p50/ORT", "drift", "round ratio", "err vs ORT", "notes");
  fmt::print("  {:<18} {:>10} {:>9.3f} {:>9.3f} {:>9.3f} {:>8} {:>7} {:>13} {:>10}  {}\n", "onnxruntime:fp32", "-",
             ort.p50, ort.p90, ort.min, "1.00x", PercentText(summary.ort_drift), "-", "-",
             ort_floor ? fmt::format("p50 - per-call floor = {:.3f} ms", ort.p50 - ort_floor->p50) : std::string());
  json target_json = json::array();
  for (const TargetRun& run : runs) {
    json tj = {{"target", run.target.ToString()}, {"status", run.status}};
    TargetSummary& ts = summary.targets.emplace_back();
    ts.target = run.target.ToString();
    ts.status = run.status;
    if (!run.reason.empty()) tj["reason"] = run.reason;
    if (run.compile_ms > 0) tj["compile_ms"] = run.compile_ms;
    if (run.status != "ok") {
      fmt::print("  {:<18} {:>10} {:>9} {:>9} {:>9} {:>8} {:>7} {:>13} {:>10}  {}: {}\n", run.target.ToString(),
                 run.compile_ms > 0 ? fmt::format("{:.1f}", run.compile_ms) : "-", "-", "-", "-", "-", "-", "-", "-",
                 run.status, run.reason);
      target_json.push_back(tj);
      continue;
    }
    ts.ratio = ort.p50 > 0 ? run.stats.p50 / ort.p50 : 0;
    ts.drift = RoundSpread(run.round_p50s, run.stats.p50);
    ts.rel_error = run.rel_error;
    ts.worst_output = run.worst_output;
    ts.fallbacks = run.fallbacks;
    ts.agreement = run.agreement;
    const auto range = RoundRatioRange(run.round_p50s, ort_times.round_p50s);
    if (range) std::tie(ts.ratio_lo, ts.ratio_hi) = *range;
    std::string notes = fmt::format("{} kernels", run.model->kernels().size());
    if (run.rel_error && *run.rel_error > 1e-4 && !run.worst_output.empty())
      notes += fmt::format(", err mostly in output '{}'", run.worst_output);
    if (run.fallbacks > 0) {
      notes += fmt::format(", {} nodes on reference kernels: {}", run.fallbacks, FallbackText(run.model->fallbacks()));
    }
    if (run.precision_fallback > 0)
      notes += fmt::format(", {} kernels not in {}", run.precision_fallback, PrecisionName(run.target.precision));
    if (run.agreement) {
      notes += fmt::format(", task agreement with cpu:fp32 {:.1f} % on {}", *run.agreement * 100, run.agreement_inputs);
    }
    if (!run.quant_note.empty()) notes += "; " + run.quant_note;
    fmt::print("  {:<18} {:>10.1f} {:>9.3f} {:>9.3f} {:>9.3f} {:>7.2f}x {:>7} {:>13} {:>10}  {}\n",
               run.target.ToString(), run.compile_ms, run.stats.p50, run.stats.p90, run.stats.min, ts.ratio,
               PercentText(ts.drift), range ? fmt::format("{:.2f}-{:.2f}", range->first, range->second) : "-",
               run.rel_error ? fmt::format("{:.2e}", *run.rel_error) : "-", notes);
    tj["latency_ms"] = StatsJson(run.stats);
    tj["round_p50s_ms"] = run.round_p50s;
    tj["ratio_p50_vs_ort"] = ts.ratio;
    if (range) tj["round_ratio_vs_ort"] = {{"min", range->first}, {"max", range->second}};
    tj["kernels"] = run.model->kernels().size();
    tj["fallback_nodes"] = run.fallbacks;
    tj["fallbacks"] = json::array();
    for (const Fallback& f : run.model->fallbacks())
      tj["fallbacks"].push_back({{"node", f.node}, {"op", f.op}, {"reason", f.reason}});
    tj["precision_fallback_kernels"] = run.precision_fallback;
    if (run.rel_error) tj["max_abs_error_rel_to_ort"] = *run.rel_error;
    if (!run.worst_output.empty()) tj["worst_output_vs_ort"] = run.worst_output;
    if (!run.quant_note.empty()) tj["quantization"] = run.quant_note;
    if (run.agreement) tj["task_agreement_vs_fp32"] = {{"agreement", *run.agreement}, {"on", run.agreement_inputs}};
    target_json.push_back(tj);
  }

  if (foreign >= 0) {
    out["foreign_cpu_share"] = foreign;
    fmt::print("  other processes used {:.0f}% of the CPUs' time during these rounds (/proc/stat){}\n", foreign * 100,
               foreign > 0.1 ? " — WARNING: contended machine, timings are unreliable; multi-threaded ones most (an "
                               "OpenMP barrier waits for every descheduled thread)"
                             : "");
  }
  out["load_import_ms"] = load_ms;
  out["onnxruntime"] = {{"session_create_ms", ort_times.create_ms},
                        {"latency_ms", StatsJson(ort)},
                        {"round_p50s_ms", ort_times.round_p50s}};
  out["targets"] = target_json;
}

// The closing table of a multi-model run: one line per model, p50 / ORT p50 per target with the range of the
// per-round ratios, then what each model's rows could not show.
void PrintSummary(const std::vector<ModelSummary>& models, const std::vector<Target>& targets) {
  fmt::print(
      "\n== summary: chipfit p50 / ORT p50 [min-max of the per-round ratios]; drift = spread of ORT's "
      "per-round p50s / p50\n");
  fmt::print("  {:<14} {:>11} {:>7}", "model", "ORT p50 ms", "drift");
  for (const Target& t : targets) fmt::print("  {:<24}", t.ToString());
  fmt::print("\n");
  for (const ModelSummary& m : models) {
    if (!m.error.empty()) {
      fmt::print("  {:<14} not measured: {}\n", m.key, Shorten(m.error, 160));
      continue;
    }
    fmt::print("  {:<14} {:>11.3f} {:>7}", m.key, m.ort_p50, PercentText(m.ort_drift));
    std::vector<std::string> notes;
    for (const TargetSummary& t : m.targets) {
      std::string cell = t.status;
      if (t.status == "ok") {
        cell = fmt::format("{:.2f}x", t.ratio);
        if (t.ratio_hi > 0) cell += fmt::format(" [{:.2f}-{:.2f}]", t.ratio_lo, t.ratio_hi);
        if (t.agreement) cell += fmt::format(" {:.1f}%", *t.agreement * 100);
        std::string note;
        if (t.rel_error) note += fmt::format("err {:.1e}", *t.rel_error);
        if (t.rel_error && *t.rel_error > 1e-4 && !t.worst_output.empty()) note += " (" + t.worst_output + ")";
        if (t.fallbacks > 0) note += fmt::format("{}{} nodes on reference", note.empty() ? "" : ", ", t.fallbacks);
        if (!note.empty()) notes.push_back(t.target + " " + note);
      }
      fmt::print("  {:<24}", cell);
    }
    if (m.foreign > 0.1) notes.push_back(fmt::format("others used {:.0f}% of the CPUs", m.foreign * 100));
    std::string joined;
    for (const std::string& n : notes) joined += (joined.empty() ? "" : "; ") + n;
    fmt::print("  {}\n", joined);
  }
  // Each target's median ratio over the models it ran on: what the speed goals are stated in.
  fmt::print("  {:<14} {:>11} {:>7}", "median", "", "");
  for (const Target& target : targets) {
    std::vector<double> ratios;
    for (const ModelSummary& m : models) {
      for (const TargetSummary& t : m.targets) {
        if (t.target == target.ToString() && t.status == "ok" && m.error.empty()) ratios.push_back(t.ratio);
      }
    }
    fmt::print("  {:<24}",
               ratios.empty() ? "-" : fmt::format("{:.2f}x ({} models)", Percentile(ratios, 0.5), ratios.size()));
  }
  fmt::print(
      "\n  (a percentage after a cell: the task agreement of that target's outputs with cpu:fp32, on the model's "
      "data samples or {} seeded inputs)\n",
      kAgreementInputs);
}

// Each target compiled as `chipfit profile` compiles it; a target the CPU or the compiler refuses stays in the
// list with its reason.
std::vector<TargetRun> CompileTargets(const Graph& graph, const std::vector<Target>& targets, const Settings& settings,
                                      const DeviceInfo& cpu,
                                      const std::vector<std::map<std::string, Tensor>>& samples) {
  std::vector<TargetRun> runs;
  for (const Target& target : targets) {
    TargetRun& run = runs.emplace_back();
    run.target = target;
    // What discovery says this CPU cannot run is not compiled at all (no silent fp32 stand-in).
    if (Support support = cpu.SupportFor(target.precision);
        target.kind == DeviceKind::kCpu && !cpu.precisions.empty() && !support.ok) {
      run.status = "unsupported";
      run.reason = support.reason;
      continue;
    }
    QuantReport quant;
    Int8Options int8;
    int8.fp32_where_faster = !settings.int8_all_layers;  // as `chipfit profile` compiles int8
    int8.calibration.method = ParseCalibrationMethod(settings.calibration).value_or(CalibrationMethod::kMinMax);
    // int8 calibrates on all of them; bf16 times its layers against fp32 on the first.
    if (target.precision == Precision::kInt8 || target.precision == Precision::kBf16) int8.samples = samples;
    int8.target_agreement = settings.auto_fp32_agreement / 100;
    int8.agreement = OutputAgreementFn(TaskOptions{});
    const auto start = Clock::now();
    auto compiled = CompileForTarget(graph, target, {}, int8, &quant);
    run.compile_ms = MsSince(start);
    if (target.precision == Precision::kInt8 && compiled.ok()) {
      run.quant_note = fmt::format(
          "compile includes {} calibration on {} {} inputs and timing int8 against fp32 per layer; {} int8 kernels, "
          "{} layer(s) kept fp32 as no faster in int8",
          quant.method, quant.samples, quant.random_calibration ? "seeded random" : "user", quant.int8_kernels,
          quant.kept_slower.size());
      if (!quant.auto_reverted.empty()) {
        run.quant_note += fmt::format(", {} reverted to fp32 by the accuracy search", quant.auto_reverted.size());
      }
      if (quant.output_agreement) {
        run.quant_note +=
            fmt::format("; task agreement with fp32 on the calibration inputs {:.1f} %", *quant.output_agreement * 100);
      }
    }
    if (target.precision == Precision::kBf16 && compiled.ok() && int8.fp32_where_faster) {
      run.quant_note = fmt::format(
          "compile includes timing bf16 against fp32 per layer; {} layer(s) kept fp32 as no "
          "faster in bf16",
          quant.kept_slower.size());
    }
    if (!compiled.ok()) {
      // A refusal with a reason is a known limit; any other compile error is a bug to look at.
      const bool refused = compiled.status().code() == StatusCode::kUnsupported;
      run.status = refused ? "unsupported" : "failed";
      run.reason = refused ? compiled.status().message() : "compile: " + compiled.status().ToString();
      continue;
    }
    run.model = std::move(*compiled);
    run.fallbacks = static_cast<int>(run.model->fallbacks().size());
    for (const KernelInfo& k : run.model->kernels())
      if (k.precision != PrecisionName(target.precision)) ++run.precision_fallback;
  }
  return runs;
}

// Benchmarks one model; returns false when something failed that is not a target's known limit.
bool BenchModelRun(const BenchModel& bm, const std::vector<Target>& targets, const Settings& settings,
                   const DeviceInfo& cpu, OrtWorker& worker, const std::optional<Stats>& ort_floor,
                   const fs::path& work, json& out, ModelSummary& summary) {
  json inputs_json = json::array();
  for (const BenchInput& in : bm.inputs) inputs_json.push_back({{"name", in.name}, {"shape", in.shape}});
  out = {{"model", bm.key}, {"path", bm.path.string()}, {"inputs", inputs_json}};
  summary.key = bm.key;
  auto fail_model = [&](const std::string& what) {
    fmt::print("  {}\n", what);
    out["error"] = what;
    summary.error = what;
    return false;
  };
  fmt::print("\n== {} ({}, {})\n", bm.label, bm.path.filename().string(), InputsText(bm.inputs));
  const auto load_start = Clock::now();
  auto graph = LoadGraph(bm.path, bm.inputs);
  const double load_ms = MsSince(load_start);
  if (!graph.ok()) return fail_model("cannot load: " + graph.status().ToString());
  json input_files;
  auto prepared = PrepareInputs(bm, *graph, settings, work, input_files);
  if (!prepared.ok()) return fail_model(prepared.status().ToString());
  const std::map<std::string, Tensor>& inputs = prepared->timing;
  const std::vector<std::map<std::string, Tensor>>& samples = prepared->samples;
  fmt::print("  inputs: {}\n", prepared->source);
  if (!bm.data_dir.empty()) out["data"] = bm.data_dir;

  auto ort_load = worker.Call(
      {{"cmd", "load"}, {"model", bm.path.string()}, {"inputs", input_files}, {"threads", settings.threads}});
  if (!ort_load.ok()) return fail_model(std::string(ort_load.status().message()));
  const double ort_create_ms = (*ort_load)["create_ms"].get<double>();

  std::vector<TargetRun> runs = CompileTargets(*graph, targets, settings, cpu, samples);
  auto alive = [](const TargetRun& run) { return run.status == "ok"; };
  auto fail = [](TargetRun& run, const Status& s) {
    run.status = "failed";
    run.reason = s.ToString();
    run.model.reset();
  };

  // Warm-up: caches, oneDNN primitive JIT, ORT's arena, both thread pools.
  auto ort_warm = worker.Time(settings.warmup);
  if (!ort_warm.ok()) return fail_model(ort_warm.status().ToString());
  for (TargetRun& run : runs) {
    if (!alive(run)) continue;
    if (auto warm = TimeChipfit(*run.model, inputs, settings.warmup); !warm.ok()) fail(run, warm.status());
  }

  // Alternating rounds: load drift on the machine lands on both sides alike, and each round's chipfit/ORT
  // ratio compares blocks a second or so apart.
  std::vector<double> ort_times, ort_round_p50s;
  const CpuSnapshot rounds_start = TakeCpuSnapshot(worker.pid());
  for (int round = 0; round < settings.rounds; ++round) {
    std::this_thread::sleep_for(kBlockGap);
    auto times = worker.Time(settings.iterations);
    if (!times.ok()) return fail_model(times.status().ToString());
    ort_round_p50s.push_back(Percentile(*times, 0.5));
    ort_times.insert(ort_times.end(), times->begin(), times->end());
    for (TargetRun& run : runs) {
      if (!alive(run)) continue;
      std::this_thread::sleep_for(kBlockGap);
      auto chip = TimeChipfit(*run.model, inputs, settings.iterations);
      if (!chip.ok()) {
        fail(run, chip.status());
        continue;
      }
      run.round_p50s.push_back(Percentile(*chip, 0.5));
      run.times.insert(run.times.end(), chip->begin(), chip->end());
    }
  }
  const double foreign = ForeignCpuShare(rounds_start, TakeCpuSnapshot(worker.pid()));
  const Stats ort = Summarize(ort_times);
  for (TargetRun& run : runs)
    if (alive(run)) run.stats = Summarize(run.times);

  // Outputs, once, on the benchmark input: every target against ONNX Runtime, matched by name.
  bool ok = true;
  std::vector<Tensor> ort_outputs;
  auto files = worker.Call({{"cmd", "outputs"}, {"dir", (work / (bm.key + "_ort")).string()}});
  if (files.ok()) {
    for (const ValueDesc& output : graph->outputs) {
      if (!(*files)["files"].contains(output.name)) {
        files = Internal("no output '" + output.name + "' from ONNX Runtime");
        break;
      }
      auto tensor = ReadNpy((*files)["files"][output.name].get<std::string>());
      if (!tensor.ok()) {
        files = tensor.status();
        break;
      }
      ort_outputs.push_back(std::move(*tensor));
    }
  }
  if (!files.ok()) {
    fmt::print("  ONNX Runtime outputs: {}\n", files.status().message());
    ort_outputs.clear();
    ok = false;
  }
  for (TargetRun& run : runs) {
    if (!alive(run) || ort_outputs.empty()) continue;
    auto outs = run.model->Run(inputs);
    if (!outs.ok()) {
      fail(run, outs.status());
      continue;
    }
    size_t worst = 0;
    auto err = RelativeError(*outs, ort_outputs, &worst);
    if (err.ok()) {
      run.rel_error = *err;
      if (ort_outputs.size() > 1) run.worst_output = graph->outputs[worst].name;
    } else {
      fmt::print("  {} vs ONNX Runtime: {}\n", run.target.ToString(), err.status().message());
    }
  }

  // Each other target's task agreement with cpu:fp32 (what the accuracy goals are stated in): on the model's
  // data samples, else on seeded inputs the calibration did not see.
  TargetRun* fp32 = nullptr;
  for (TargetRun& run : runs)
    if (alive(run) && run.target == Target{DeviceKind::kCpu, 0, Precision::kFp32}) fp32 = &run;
  if (fp32 != nullptr) {
    std::vector<std::map<std::string, Tensor>> judged = samples;
    std::string judged_on = fmt::format("the {} data samples", samples.size());
    if (judged.empty()) {
      for (uint64_t seed = 100; seed < 100 + kAgreementInputs; ++seed)
        judged.push_back(SeededInputs(graph->inputs, seed));
      judged_on = fmt::format("{} seeded inputs", judged.size());
    }
    for (TargetRun& run : runs) {
      if (!alive(run) || &run == fp32) continue;
      auto agreement = OutputAgreement(*run.model, *fp32->model, judged, TaskOptions{});
      if (!agreement.ok()) {
        fmt::print("  {} task agreement with cpu:fp32: {}\n", run.target.ToString(), agreement.status().message());
        continue;
      }
      run.agreement = *agreement;
      run.agreement_inputs = judged_on;
    }
  }

  // Kernels built at run time for the shapes met may have added fallbacks since the compile.
  for (TargetRun& run : runs)
    if (alive(run)) run.fallbacks = static_cast<int>(run.model->fallbacks().size());
  ReportModel(runs, {ort, ort_round_p50s, ort_create_ms}, ort_floor, load_ms, foreign, out, summary);
  if (settings.kernels) {
    for (size_t i = 0; i < runs.size(); ++i) {
      if (!alive(runs[i])) continue;
      json profile = ProfileKernels(runs[i], inputs);
      if (!profile.is_null()) out["targets"][i]["kernel_profile"] = profile;
    }
  }
  for (const TargetRun& run : runs) ok = ok && run.status != "failed";
  return ok;
}

// The models to run: --model FILE, every NAME.onnx of --set (less those --only leaves out), else --models.
Result<std::vector<BenchModel>> SelectModels(const Settings& settings, const std::vector<BenchModel>& builtin) {
  std::vector<BenchModel> models;
  if (!settings.model_file.empty()) {
    auto model = ModelFromFile(settings.model_file, settings.shapes, settings.data_dir);
    if (!model.ok()) return InvalidArgument("--model " + settings.model_file + ": " + model.status().message());
    models.push_back(std::move(model).value());
    return models;
  }
  if (!settings.set_dir.empty()) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(settings.set_dir)) {
      if (entry.is_regular_file() && entry.path().extension() == ".onnx") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    const std::set<std::string> only(settings.only.begin(), settings.only.end());
    std::set<std::string> wanted = only;  // what --only names and the folder has not shown yet
    for (const fs::path& file : files) {
      if (!only.empty() && !only.contains(file.stem().string())) continue;
      wanted.erase(file.stem().string());
      const fs::path data = fs::path(file).replace_extension(".data");
      auto model = ModelFromFile(file, {}, fs::is_directory(data) ? data.string() : std::string());
      if (!model.ok()) return InvalidArgument(file.string() + ": " + model.status().message());
      models.push_back(std::move(model).value());
    }
    if (!wanted.empty()) return InvalidArgument("--only: no " + *wanted.begin() + ".onnx in " + settings.set_dir);
    if (models.empty()) {
      return NotFound("no .onnx in " + settings.set_dir + ": run bench/make-model-set.py " + settings.set_dir);
    }
    return models;
  }
  for (const std::string& key : settings.models) {
    for (const BenchModel& m : builtin)
      if (m.key == key) models.push_back(m);
  }
  return models;
}

int Main(int argc, char** argv) {
  Settings settings;
  CLI::App app{"chipfit-bench-ort: chipfit's compiled targets vs ONNX Runtime (CPU), same input, alternating rounds"};
  auto* models_option =
      app.add_option("--models", settings.models,
                     "models to run: cls (PP-OCR cls), oww (openWakeWord embedding), cnn, det (PP-OCRv4 det "
                     "1x3x640x640), rec (PP-OCRv4 rec 1x3x48x320)")
          ->delimiter(',')
          ->check(CLI::IsMember({"cls", "oww", "cnn", "det", "rec"}));
  auto* model_option = app.add_option("--model", settings.model_file, "any ONNX model file instead of --models")
                           ->check(CLI::ExistingFile)
                           ->excludes(models_option);
  app.add_option("--shape", settings.shapes,
                 "the --model inputs' shapes, NAME=DxDx...,NAME=... (for dynamic dims not given by --data)")
      ->delimiter(',')
      ->needs(model_option);
  auto* set_option = app.add_option("--set", settings.set_dir,
                                    "every NAME.onnx of a folder made by bench/make-model-set.py, each fed its "
                                    "NAME.data folder, with one summary table at the end")
                         ->check(CLI::ExistingDirectory)
                         ->excludes(models_option)
                         ->excludes(model_option);
  app.add_option("--only", settings.only, "with --set: only these models (file names without .onnx)")
      ->delimiter(',')
      ->needs(set_option);
  app.add_option("--targets", settings.targets, "chipfit targets, comma-separated")->delimiter(',');
  app.add_option("--rounds", settings.rounds, "alternating rounds")->check(CLI::PositiveNumber);
  app.add_option("--iterations", settings.iterations, "timed runs per side per round")->check(CLI::PositiveNumber);
  app.add_option("--warmup", settings.warmup, "untimed runs per side before the rounds")->check(CLI::NonNegativeNumber);
  app.add_option("--threads", settings.threads, "threads for both runtimes (default: the CPU's cores)")
      ->check(CLI::PositiveNumber);
  app.add_flag("--kernels", settings.kernels, "per-kernel profile of each chipfit target after the timing");
  app.add_option("--json", settings.json_file, "also write the results as JSON");
  app.add_option("--data", settings.data_dir,
                 "inputs (.npy per input name, images or .wav, as chipfit profile --data): the first sample is the "
                 "timing input of both runtimes, all of them calibrate int8; default: seeded")
      ->check(CLI::ExistingDirectory)
      ->excludes(set_option);
  app.add_option("--preprocess", settings.preprocess, "images in --data, as chipfit profile --preprocess");
  app.add_option("--calibration", settings.calibration, "int8 calibration: minmax, entropy or percentile")
      ->check(CLI::IsMember({"minmax", "entropy", "percentile"}));
  app.add_option("--auto-fp32-agreement", settings.auto_fp32_agreement,
                 "int8: revert layers to fp32 until the task agreement with fp32 on the calibration inputs reaches "
                 "this percentage")
      ->check(CLI::Range(0.0, 100.0));
  app.add_flag("--int8-all-layers", settings.int8_all_layers,
               "int8: every eligible layer, also where int8 measures no faster than fp32");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  std::vector<Target> targets;
  for (const std::string& text : settings.targets) {
    auto target = ParseTarget(text);
    if (!target.ok()) {
      fmt::print(stderr, "chipfit-bench-ort: --targets: {}\n", target.status().message());
      return 2;
    }
    // OpenCL targets are compared too: ORT's CPU provider stays the baseline (on POCL the OpenCL
    // device is this same CPU, driven by POCL's own threads rather than OpenMP).
    if (target->kind == DeviceKind::kCuda) {
      fmt::print(stderr, "chipfit-bench-ort: --targets: {}: CUDA targets are not benchmarked by this tool yet\n", text);
      return 2;
    }
    targets.push_back(*target);
  }

  const fs::path root = CHIPFIT_SOURCE_DIR;
  const fs::path cache = EnvPath("CHIPFIT_MODEL_CACHE", root / ".cache/models");
  const fs::path node_modules = EnvPath("CHIPFIT_PEER_DIR", root / ".cache/peer") / "node_modules";
  const std::vector<BenchModel> all = {
      {"cls",
       "PP-OCR mobile v2 text-direction classifier",
       cache / "ppocr_mobile_v2_cls.onnx",
       {{"x", {1, 3, 48, 192}}},
       settings.data_dir},
      {"oww",
       "openWakeWord embedding",
       cache / "openwakeword_embedding.onnx",
       {{"input_1", {1, 76, 32, 1}}},
       settings.data_dir},
      {"cnn", "chipfit sample CNN", root / "resources/models/cnn.onnx", {{"input", {1, 3, 32, 32}}}, settings.data_dir},
      {"det", "PP-OCRv4 text detection", cache / "ppocrv4_det.onnx", {{"x", {1, 3, 640, 640}}}, settings.data_dir},
      {"rec", "PP-OCRv4 text recognition", cache / "ppocrv4_rec.onnx", {{"x", {1, 3, 48, 320}}}, settings.data_dir},
  };
  auto models = SelectModels(settings, all);
  if (!models.ok()) {
    fmt::print(stderr, "chipfit-bench-ort: {}\n", models.status().message());
    return 2;
  }
  for (const BenchModel& m : *models) {
    if (!fs::exists(m.path)) {
      fmt::print(stderr, "chipfit-bench-ort: {} is missing: run scripts/fetch-models.sh\n", m.path.string());
      return 2;
    }
  }
  if (!fs::exists(node_modules / "onnxruntime-node/package.json")) {
    fmt::print(stderr, "chipfit-bench-ort: onnxruntime-node is missing under {}: run scripts/fetch-models.sh\n",
               node_modules.string());
    return 2;
  }
  const fs::path script = root / "bench/ort_worker.mjs";

  DiscoveryReport report;
  DiscoverCpu(report);
  DeviceInfo cpu;
  if (!report.devices.empty()) cpu = report.devices.front()->info();
  if (settings.threads <= 0) {
    settings.threads =
        cpu.compute_units > 0 ? cpu.compute_units : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }
  // libgomp reads OMP_NUM_THREADS once; this call overrides it for oneDNN and chipfit's own loops.
  omp_set_num_threads(settings.threads);
  std::signal(SIGPIPE, SIG_IGN);  // a dead worker shows up as a write error, not a killed benchmark

  const fs::path work = fs::temp_directory_path() / fmt::format("chipfit_bench_ort_{}", getpid());
  fs::create_directories(work);
  auto worker = OrtWorker::Start(script, node_modules);
  if (!worker.ok()) {
    fmt::print(stderr, "chipfit-bench-ort: {}\n", worker.status().message());
    std::error_code ec;
    fs::remove_all(work, ec);
    return 2;
  }

  std::string onednn, isa;
  for (const auto& [key, value] : cpu.properties) {
    if (key == "oneDNN") onednn = value;
    if (key == "oneDNN ISA") isa = value;
  }
  const std::string ort_version = ReadOrtVersion(node_modules);
  fmt::print("chipfit-bench-ort: chipfit {} ({}) vs ONNX Runtime {} (onnxruntime-node, CPU execution provider)\n",
             CHIPFIT_VERSION, CHIPFIT_GIT_REVISION, ort_version);
  fmt::print("machine: {}, {} cores; oneDNN {} ISA {}\n", cpu.name, cpu.compute_units, onednn, isa);
  fmt::print("threads: {} on both sides (ORT intraOpNumThreads={} interOpNumThreads=1; chipfit omp_set_num_threads)\n",
             settings.threads, settings.threads);
  fmt::print(
      "timing: {} warm-up runs per side, then {} rounds alternating {} ORT runs -> {} runs of each chipfit target,\n"
      "        {} ms idle before each block; p50/p90/min over all {} timed runs per row; drift = spread of the "
      "per-round p50s / p50\n",
      settings.warmup, settings.rounds, settings.iterations, settings.iterations, kBlockGap.count(),
      settings.rounds * settings.iterations);
  fmt::print("  chipfit: steady_clock around CompiledModel::Run (no observer; output allocation included)\n");
  fmt::print(
      "  ORT: process.hrtime around `await session.run(feeds)` in a Node worker (graphOptimizationLevel all):\n"
      "       includes the JS / N-API async call overhead, see the per-call floor below\n");
  fmt::print(
      "compile ms: wall time of CompileForTarget after load+import; ORT's comparable cost is session create "
      "(parse + optimise)\n");
  fmt::print(
      "inputs: the first sample of --data (--set: the model's NAME.data), else seeded (floats uniform [-1, 1), "
      "integers [0, 10),\n        integer *mask* inputs 1, *token_type* 0), written as .npy and fed to both; "
      "err vs ORT = max |chipfit - ORT| / max |ORT|\n        over the outputs; round ratio = min-max over the rounds "
      "of the round's p50 / the same round's ORT p50\n");

  json result = {{"schema", "chipfit.bench-ort/1"},
                 {"chipfit_version", CHIPFIT_VERSION},
                 {"chipfit_revision", CHIPFIT_GIT_REVISION},
                 {"onnxruntime_version", ort_version},
                 {"machine", {{"cpu", cpu.name}, {"cores", cpu.compute_units}, {"onednn", onednn}, {"isa", isa}}},
                 {"settings",
                  {{"rounds", settings.rounds},
                   {"iterations", settings.iterations},
                   {"warmup", settings.warmup},
                   {"threads", settings.threads},
                   {"block_gap_ms", kBlockGap.count()}}}};

  PrintLoad("at start", "load_average_start", cpu.compute_units, result);
  const Floor floor = MeasureFloor(**worker, work, settings.iterations * 2, settings.threads);
  auto floor_text = [](const std::optional<Stats>& s) {
    return s ? fmt::format("p50 {:.1f} us (min {:.1f} us)", s->p50 * 1e3, s->min * 1e3) : std::string("not measured");
  };
  fmt::print("per-call floor (a one-node Identity model on 1 float): ORT {}; chipfit cpu:fp32 {}\n",
             floor_text(floor.ort), floor_text(floor.chipfit));
  if (floor.ort) result["call_floor_ms"]["onnxruntime"] = StatsJson(*floor.ort);
  if (floor.chipfit) result["call_floor_ms"]["chipfit"] = StatsJson(*floor.chipfit);

  bool all_ok = true;
  result["models"] = json::array();
  std::vector<ModelSummary> summaries;
  for (const BenchModel& m : *models) {
    json model_json;
    all_ok =
        BenchModelRun(m, targets, settings, cpu, **worker, floor.ort, work, model_json, summaries.emplace_back()) &&
        all_ok;
    result["models"].push_back(model_json);
  }
  if (summaries.size() > 1) PrintSummary(summaries, targets);
  worker->reset();
  std::error_code ec;
  fs::remove_all(work, ec);

  if (!settings.json_file.empty()) {
    std::ofstream out(settings.json_file);
    out << result.dump(2) << "\n";
    if (!out) {
      fmt::print(stderr, "chipfit-bench-ort: cannot write {}\n", settings.json_file);
      return 2;
    }
  }
  return all_ok ? 0 : 1;
}

}  // namespace
}  // namespace chipfit

int main(int argc, char** argv) {
  chipfit::KeepFreedMemoryForReuse();
  try {
    return chipfit::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chipfit-bench-ort: %s\n", e.what());
    return 2;
  }
}
