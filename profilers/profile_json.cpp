// JSON of one target's profile; every member docs/json.md names, null where nothing was measured.
#include "profilers/profile_json.h"

#include <sys/utsname.h>

#include <algorithm>
#include <optional>

#include "devices/device_json.h"
#include "profilers/accuracy/drift.h"
#include "profilers/precision_mix.h"

namespace chipfit {
namespace {

nlohmann::json EnergyJson(const std::optional<EnergyValue>& e) {
  if (!e) return nullptr;
  return {{"value", e->joules}, {"source", e->source}};
}

nlohmann::json CeilingsJson(const std::optional<DeviceCeilings>& c) {
  if (!c) return nullptr;
  nlohmann::json peak = nlohmann::json::object();
  for (const auto& [precision, gflops] : c->peak_gflops) peak[std::string(PrecisionName(precision))] = gflops;
  return {{"peak_gflops", peak},
          {"memory_bandwidth_gbps",
           c->memory_bandwidth_gbps > 0 ? nlohmann::json(c->memory_bandwidth_gbps) : nlohmann::json(nullptr)},
          {"source", "measured by `chipfit devices --measure`"}};
}

}  // namespace

nlohmann::json OnnxNodeView(const TargetResult& p, const std::map<std::string, std::string>& node_ops) {
  // The executed kernel is the unit of time: a node's time is the whole time of the kernel that
  // computes it ("shared_by" its nodes when fused), never a share of it, so a sum over nodes that
  // counts each kernel once is the sum over kernels. A copy or reorder inserted in front of a node
  // (named "conv1/reorder:input") is a kernel of its own, listed in the node's `layers` only.
  auto inserted = [](const LayerResult& l) { return !l.onnx_nodes.empty() && l.name != l.onnx_nodes.front(); };
  struct Row {
    std::vector<size_t> layers;
    std::optional<size_t> kernel;
  };
  std::vector<std::string> order;
  std::map<std::string, Row> rows;
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const LayerResult& l = p.layers[i];
    for (const std::string& node : l.onnx_nodes) {
      auto [it, fresh] = rows.try_emplace(node);
      if (fresh) order.push_back(node);
      Row& row = it->second;
      row.layers.push_back(i);
      // The computing kernel: one of the graph before an inserted one, then one with arithmetic.
      const bool better = [&] {
        if (!row.kernel) return true;
        const LayerResult& current = p.layers[*row.kernel];
        if (inserted(l) != inserted(current)) return inserted(current);
        return current.flops <= 0 && l.flops > 0;
      }();
      if (better) row.kernel = i;
    }
  }
  nlohmann::json view = nlohmann::json::array();
  for (const std::string& node : order) {
    const Row& row = rows[node];
    const LayerResult& kernel = p.layers[*row.kernel];
    const auto op = node_ops.find(node);
    view.push_back({{"node", node},
                    {"op", op == node_ops.end() ? nlohmann::json(nullptr) : nlohmann::json(op->second)},
                    {"layers", row.layers},
                    {"kernel", *row.kernel},
                    {"shared_by", kernel.onnx_nodes.size()},
                    {"time_ms", {{"p50", kernel.time_p50_ms}}}});
  }
  return view;
}

namespace {

nlohmann::json LayersJson(const std::vector<LayerResult>& list) {
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerResult& l : list) {
    nlohmann::json drift = nullptr;
    if (l.drift && !l.drift->invalid.empty()) {
      // Not measurements (NaN/Inf or saturation on one side, shapes that differ): null, and why.
      drift = {{"cosine", nullptr},
               {"nmse", nullptr},
               {"sqnr_db", nullptr},
               {"max_abs", nullptr},
               {"invalid", l.drift->invalid}};
    } else if (l.drift) {
      drift = {{"cosine", l.drift->cosine},
               {"nmse", l.drift->nmse},
               {"sqnr_db", l.drift->sqnr_db},
               {"max_abs", l.drift->max_abs},
               {"invalid", nullptr}};
    }
    layers.push_back(
        {{"name", l.name},
         {"op", l.op},
         {"onnx_nodes", l.onnx_nodes},
         {"device", l.device},
         {"implementation", l.implementation},
         {"precision", l.precision},
         {"time_ms", {{"p50", l.time_p50_ms}, {"p90", l.time_p90_ms}}},
         {"flops", l.flops},
         {"bytes_read", l.bytes_read},
         {"bytes_written", l.bytes_written},
         {"arithmetic_intensity", l.arithmetic_intensity},
         {"gflops_per_s", l.gflops_per_s},
         {"gb_per_s", l.gb_per_s},
         {"bound", l.bound.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.bound)},
         {"attainable_gflops_per_s",
          l.attainable_gflops_per_s > 0 ? nlohmann::json(l.attainable_gflops_per_s) : nlohmann::json(nullptr)},
         {"drift", drift},
         {"energy_j", EnergyJson(l.energy)}});
    if (l.observed_start_ms && l.observed_ms) {
      layers.back()["observed"] = {{"start_ms", *l.observed_start_ms}, {"time_ms", *l.observed_ms}};
    }
    // Only where the device library named it (runs made before it lack it, and read back as they were).
    if (!l.isa.empty()) layers.back()["isa"] = l.isa;
    if (!l.output_shape.empty()) layers.back()["output_shape"] = l.output_shape;
    if (!l.parent.empty()) {
      layers.back()["parent"] = l.parent;
      layers.back()["iterations"] = l.iterations;
    }
  }
  return layers;
}

nlohmann::json LatencyJson(const LatencyStats& s) {
  nlohmann::json latency = {{"p50", s.p50},    {"p90", s.p90}, {"p99", s.p99}, {"mean", s.mean},
                            {"min", s.min},    {"max", s.max}, {"cov", s.cov}, {"iterations", s.iterations},
                            {"noisy", s.noisy}};
  // The robust spread and the samples, which runs made before them lack (kept as they were).
  if (!s.samples.empty()) {
    latency["mad"] = s.mad;
    latency["outliers"] = s.outliers;
    latency["other_cpu_share"] = s.other_cpu_share ? nlohmann::json(*s.other_cpu_share) : nlohmann::json(nullptr);
    latency["machine_busy"] = s.machine_busy;
    latency["samples"] = s.samples;
    latency["samples_sketch"] = s.samples_sketch;
  }
  return latency;
}

nlohmann::json ThroughputJson(const std::vector<ThroughputPoint>& points) {
  nlohmann::json out = nlohmann::json::array();
  for (const ThroughputPoint& t : points) {
    const bool measured = t.status == "ok";
    out.push_back({{"batch", t.batch},
                   {"streams", t.streams},
                   {"threads_per_stream", t.threads_per_stream},
                   {"status", t.status},
                   {"error", t.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.error)},
                   {"latency_ms", measured ? LatencyJson(t.latency) : nlohmann::json(nullptr)},
                   {"inferences_per_s", measured ? nlohmann::json(t.inferences_per_s) : nlohmann::json(nullptr)},
                   {"requests", t.requests},
                   {"duration_s", t.duration_s},
                   {"layers", LayersJson(t.layers)}});
  }
  return out;
}

// The interleaved timing's members (docs/json.md, targets): written only for targets timed in rounds (or
// judged unreliable), so runs stored before rounds are the same document as before.
void WriteRounds(const TargetResult& p, nlohmann::json& out) {
  if (p.rounds.empty() && !p.unreliable && !p.attribution) return;
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json rounds = nlohmann::json::array();
  for (const TimingRound& r : p.rounds) {
    rounds.push_back({{"round", r.round},
                      {"position", r.position},
                      {"runs", r.runs},
                      {"median_ms", r.median_ms},
                      {"other_cpu_share", opt(r.other_cpu_share)},
                      {"steal_share", opt(r.steal_share)},
                      {"threads", r.threads},
                      {"clean", r.clean},
                      {"dropped", r.dropped.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.dropped)}});
  }
  out["rounds"] = rounds;
  out["unreliable"] = p.unreliable;
  if (p.unreliable) out["unreliable_reason"] = p.unreliable_reason;
  nlohmann::json attribution = nullptr;
  if (const auto& a = p.attribution) {
    attribution = {{"end_to_end_ms", a->end_to_end_ms},
                   {"attributed_ms", a->attributed_ms},
                   {"between_ms", a->between_ms},
                   {"unexplained_ms", a->unexplained_ms},
                   {"explanation", a->explanation.empty() ? nlohmann::json(nullptr) : nlohmann::json(a->explanation)}};
  }
  out["time_attribution"] = attribution;
}

// Kernels and time per device and precision, and the target the kernels ran as; null when the
// target did not run or its layers carry no precision.
nlohmann::json PrecisionMixJson(const PrecisionMix& mix) {
  if (mix.text.empty()) return nullptr;
  nlohmann::json shares = nlohmann::json::array();
  for (const PrecisionShare& s : mix.shares) {
    shares.push_back({{"device", s.device},
                      {"precision", s.precision},
                      {"kernels", s.kernels},
                      {"time_ms", s.time_ms},
                      {"compute_time_ms", s.compute_time_ms}});
  }
  return {{"shares", shares},
          {"kernels", mix.kernels},
          {"own_kernels", mix.own_kernels},
          {"own_time_share", mix.own_time_share},
          {"ran_as", mix.ran_as.empty() ? nlohmann::json(nullptr) : nlohmann::json(mix.ran_as)},
          {"text", mix.text}};
}

}  // namespace

nlohmann::json TargetResultToJson(const TargetResult& p, const std::map<std::string, std::string>& node_ops) {
  nlohmann::json fallbacks = nlohmann::json::array();
  for (const Fallback& f : p.fallbacks) fallbacks.push_back({{"node", f.node}, {"op", f.op}, {"reason", f.reason}});
  const nlohmann::json layers = LayersJson(p.layers);
  const bool measured = p.status == "ok" || p.partial;
  const nlohmann::json latency = measured ? LatencyJson(p.latency) : nlohmann::json(nullptr);
  nlohmann::json accuracy = nullptr;
  if (p.accuracy) {
    const AccuracySummary& a = *p.accuracy;
    accuracy = {
        {"reference", a.reference},
        {"random_inputs", a.random_inputs},
        {"samples", a.samples},
        {"output_sqnr_db", a.output_invalid.empty() ? nlohmann::json(a.output_sqnr_db) : nlohmann::json(nullptr)},
        {"output_cosine", a.output_invalid.empty() ? nlohmann::json(a.output_cosine) : nlohmann::json(nullptr)},
        {"output_invalid", a.output_invalid.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.output_invalid)},
        {"first_non_finite_layer",
         a.first_non_finite_layer.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.first_non_finite_layer)},
        {"non_finite", a.non_finite.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.non_finite)},
        {"top1_agreement", a.top1_agreement ? nlohmann::json(*a.top1_agreement) : nlohmann::json(nullptr)},
        {"task_agreement", a.task_agreement ? nlohmann::json(*a.task_agreement) : nlohmann::json(nullptr)},
        {"task_metric", a.task_metric.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.task_metric)},
        {"random_calibration", a.random_calibration},
        {"first_layer_below_threshold", a.first_layer_below_threshold.empty()
                                            ? nlohmann::json(nullptr)
                                            : nlohmann::json(a.first_layer_below_threshold)}};
    nlohmann::json tasks = nlohmann::json::array();
    auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    for (const OutputTask& t : a.tasks) {
      tasks.push_back({{"output", t.output},
                       {"task", t.task},
                       {"metric", t.metric},
                       {"agreement", opt(t.agreement)},
                       {"position_agreement", opt(t.position_agreement)},
                       {"pixel_agreement", opt(t.pixel_agreement)},
                       {"top5_agreement", opt(t.top5_agreement)},
                       {"precision", opt(t.precision)},
                       {"recall", opt(t.recall)},
                       {"items", t.items},
                       {"why", t.why},
                       {"not_informative",
                        t.not_informative.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.not_informative)}});
    }
    accuracy["tasks"] = tasks;
  }
  nlohmann::json out = {
      {"target", p.target.ToString()},
      {"status", p.status},
      {"error", p.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.error)},
      {"device",
       {{"kind", std::string(DeviceKindName(p.target.kind))}, {"id", p.target.DeviceId()}, {"name", p.device_name}}},
      {"compile_ms", p.compile_ms},
      {"fallbacks", fallbacks},
      {"latency_ms", latency},
      {"instrumentation_overhead", measured ? nlohmann::json(p.instrumentation_overhead) : nlohmann::json(nullptr)},
      {"peak_memory_bytes", p.peak_memory_bytes},
      {"measured_peak_memory_bytes",
       p.measured_peak_memory_bytes ? nlohmann::json(*p.measured_peak_memory_bytes) : nlohmann::json(nullptr)},
      {"ceilings", CeilingsJson(p.ceilings)},
      {"energy_j", EnergyJson(p.energy)},
      {"accuracy", accuracy},
      {"notes", p.notes},
      {"layers", layers},
      {"nodes", OnnxNodeView(p, node_ops)}};
  // Present only in throughput mode, so other profiles are the same document as before.
  if (!p.throughput.empty()) out["throughput"] = ThroughputJson(p.throughput);
  WriteRounds(p, out);
  if (p.partial) out["partial"] = true;  // present only on a stopped target that kept its figures
  out["precision_mix"] = PrecisionMixJson(ComputePrecisionMix(p));
  return out;
}

}  // namespace chipfit

namespace chipfit {
namespace {

using json = nlohmann::json;

// Tolerant look-ups for the reader: a member that is absent or null keeps the default; a member of
// the wrong type throws json::type_error, turned into a ParseError naming it by the caller.
template <typename T>
T Get(const json& j, const char* key, T fallback = {}) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return it->get<T>();
}

template <typename T>
std::optional<T> GetOptional(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

const json& Member(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::optional<EnergyValue> EnergyFromJson(const json& j) {
  if (!j.is_object() || !j.contains("value") || j["value"].is_null()) return std::nullopt;
  return EnergyValue{j["value"].get<double>(), Get<std::string>(j, "source")};
}

LayerResult LayerFromJson(const json& l) {
  LayerResult layer;
  layer.name = Get<std::string>(l, "name");
  layer.op = Get<std::string>(l, "op");
  layer.onnx_nodes = Get<std::vector<std::string>>(l, "onnx_nodes");
  layer.device = Get<std::string>(l, "device");
  layer.implementation = Get<std::string>(l, "implementation");
  layer.isa = GetOptional<std::string>(l, "isa").value_or("");  // absent in profiles written before 2026-11-29
  layer.precision = Get<std::string>(l, "precision");
  layer.time_p50_ms = Get<double>(Member(l, "time_ms"), "p50");
  layer.time_p90_ms = Get<double>(Member(l, "time_ms"), "p90");
  if (const json& o = Member(l, "observed"); o.is_object()) {
    layer.observed_start_ms = GetOptional<double>(o, "start_ms");
    layer.observed_ms = GetOptional<double>(o, "time_ms");
  }
  if (l.contains("parent")) {
    layer.parent = Get<std::string>(l, "parent");
    layer.iterations = Get<double>(l, "iterations");
  }
  layer.flops = Get<int64_t>(l, "flops");
  layer.bytes_read = Get<int64_t>(l, "bytes_read");
  layer.bytes_written = Get<int64_t>(l, "bytes_written");
  if (l.contains("output_shape") && l["output_shape"].is_array()) {
    layer.output_shape = l["output_shape"].get<std::vector<int64_t>>();
  }
  layer.arithmetic_intensity = Get<double>(l, "arithmetic_intensity");
  layer.gflops_per_s = Get<double>(l, "gflops_per_s");
  layer.gb_per_s = Get<double>(l, "gb_per_s");
  layer.bound = Get<std::string>(l, "bound");
  layer.attainable_gflops_per_s = Get<double>(l, "attainable_gflops_per_s");
  if (const json& d = Member(l, "drift"); d.is_object()) {
    layer.drift =
        DriftStats{Get<double>(d, "cosine", 1.0), Get<double>(d, "nmse"), Get<double>(d, "sqnr_db", kExactSqnrDb),
                   Get<double>(d, "max_abs"), Get<std::string>(d, "invalid")};
    // Written as null: read back as the worst values MeasureDrift keeps for them.
    if (!layer.drift->invalid.empty()) {
      *layer.drift = {.cosine = 0,
                      .nmse = kWorstNmse,
                      .sqnr_db = -kExactSqnrDb,
                      .max_abs = std::numeric_limits<double>::max(),
                      .invalid = layer.drift->invalid};
    }
  }
  layer.energy = EnergyFromJson(Member(l, "energy_j"));
  return layer;
}

std::optional<DeviceCeilings> TargetCeilingsFromJson(const json& c) {
  if (!c.is_object()) return std::nullopt;
  DeviceCeilings ceilings;
  if (const json& peak = Member(c, "peak_gflops"); peak.is_object()) {
    for (const auto& [name, value] : peak.items()) {
      if (const auto precision = ParsePrecision(name); precision && value.is_number())
        ceilings.peak_gflops[*precision] = value.get<double>();
    }
  }
  ceilings.memory_bandwidth_gbps = Get<double>(c, "memory_bandwidth_gbps");
  return ceilings;
}

LatencyStats LatencyFromJson(const json& s) {
  LatencyStats l;
  l.p50 = Get<double>(s, "p50");
  l.p90 = Get<double>(s, "p90");
  l.p99 = Get<double>(s, "p99");
  l.mean = Get<double>(s, "mean");
  l.min = Get<double>(s, "min");
  l.max = Get<double>(s, "max");
  l.cov = Get<double>(s, "cov");
  l.iterations = Get<int>(s, "iterations");
  l.noisy = Get<bool>(s, "noisy");
  l.mad = Get<double>(s, "mad");
  l.outliers = Get<int>(s, "outliers");
  l.samples = Get<std::vector<double>>(s, "samples");
  l.samples_sketch = Get<bool>(s, "samples_sketch");
  l.other_cpu_share = GetOptional<double>(s, "other_cpu_share");
  l.machine_busy = Get<bool>(s, "machine_busy");
  return l;
}

// The interleaved timing's members; absent in runs stored before rounds (their defaults then hold).
void ReadRounds(const json& j, TargetResult& t) {
  for (const json& r : Member(j, "rounds").is_array() ? j["rounds"] : json::array()) {
    t.rounds.push_back({.round = Get<int>(r, "round"),
                        .position = Get<int>(r, "position"),
                        .runs = Get<int>(r, "runs"),
                        .median_ms = Get<double>(r, "median_ms"),
                        .other_cpu_share = GetOptional<double>(r, "other_cpu_share"),
                        .steal_share = GetOptional<double>(r, "steal_share"),
                        .threads = Get<int>(r, "threads"),
                        .clean = Get<bool>(r, "clean", true),
                        .dropped = Get<std::string>(r, "dropped")});
  }
  t.unreliable = Get<bool>(j, "unreliable");
  t.partial = Get<bool>(j, "partial");
  t.unreliable_reason = Get<std::string>(j, "unreliable_reason");
  if (const json& a = Member(j, "time_attribution"); a.is_object()) {
    t.attribution = TimeAttribution{.end_to_end_ms = Get<double>(a, "end_to_end_ms"),
                                    .attributed_ms = Get<double>(a, "attributed_ms"),
                                    .between_ms = Get<double>(a, "between_ms"),
                                    .unexplained_ms = Get<double>(a, "unexplained_ms"),
                                    .explanation = Get<std::string>(a, "explanation")};
  }
}

}  // namespace

Result<TargetResult> TargetResultFromJson(const json& j) {
  if (!j.is_object()) return ParseError("a targets[] entry is not a JSON object");
  const std::string name = Get<std::string>(j, "target");
  try {
    TargetResult t;
    auto target = ParseTarget(name);
    if (!target.ok()) return ParseError("target '" + name + "': " + target.status().message());
    t.target = *target;
    t.status = Get<std::string>(j, "status", std::string("ok"));
    t.error = Get<std::string>(j, "error");
    t.device_name = Get<std::string>(Member(j, "device"), "name");
    for (const json& f : Member(j, "fallbacks").is_array() ? j["fallbacks"] : json::array()) {
      t.fallbacks.push_back({Get<std::string>(f, "node"), Get<std::string>(f, "op"), Get<std::string>(f, "reason")});
    }
    t.compile_ms = Get<double>(j, "compile_ms");
    if (const json& s = Member(j, "latency_ms"); s.is_object()) t.latency = LatencyFromJson(s);
    t.instrumentation_overhead = Get<double>(j, "instrumentation_overhead");
    t.peak_memory_bytes = Get<size_t>(j, "peak_memory_bytes");
    t.measured_peak_memory_bytes = GetOptional<int64_t>(j, "measured_peak_memory_bytes");
    t.ceilings = TargetCeilingsFromJson(Member(j, "ceilings"));
    t.energy = EnergyFromJson(Member(j, "energy_j"));
    if (const json& a = Member(j, "accuracy"); a.is_object()) {
      AccuracySummary acc;
      acc.reference = Get<std::string>(a, "reference");
      acc.random_inputs = Get<bool>(a, "random_inputs", true);
      acc.samples = Get<int>(a, "samples");
      acc.output_sqnr_db = Get<double>(a, "output_sqnr_db", kExactSqnrDb);
      acc.output_cosine = Get<double>(a, "output_cosine", 1.0);
      acc.top1_agreement = GetOptional<double>(a, "top1_agreement");
      acc.task_agreement = GetOptional<double>(a, "task_agreement");
      acc.task_metric = Get<std::string>(a, "task_metric");
      acc.random_calibration = Get<bool>(a, "random_calibration", false);
      acc.output_invalid = Get<std::string>(a, "output_invalid");
      if (!acc.output_invalid.empty()) {
        acc.output_sqnr_db = -kExactSqnrDb;  // written as null: the worst values, as MeasureDrift keeps them
        acc.output_cosine = 0;
      }
      acc.first_non_finite_layer = Get<std::string>(a, "first_non_finite_layer");
      acc.non_finite = Get<std::string>(a, "non_finite");
      for (const json& task : Member(a, "tasks").is_array() ? a["tasks"] : json::array()) {
        acc.tasks.push_back({.output = Get<std::string>(task, "output"),
                             .task = Get<std::string>(task, "task"),
                             .metric = Get<std::string>(task, "metric"),
                             .agreement = GetOptional<double>(task, "agreement"),
                             .position_agreement = GetOptional<double>(task, "position_agreement"),
                             .pixel_agreement = GetOptional<double>(task, "pixel_agreement"),
                             .items = Get<int64_t>(task, "items"),
                             .why = Get<std::string>(task, "why"),
                             .not_informative = Get<std::string>(task, "not_informative"),
                             .top5_agreement = GetOptional<double>(task, "top5_agreement"),
                             .precision = GetOptional<double>(task, "precision"),
                             .recall = GetOptional<double>(task, "recall")});
      }
      acc.first_layer_below_threshold = Get<std::string>(a, "first_layer_below_threshold");
      t.accuracy = acc;
    }
    t.notes = Get<std::vector<std::string>>(j, "notes");
    for (const json& l : Member(j, "layers").is_array() ? j["layers"] : json::array()) {
      t.layers.push_back(LayerFromJson(l));
    }
    for (const json& p : Member(j, "throughput").is_array() ? j["throughput"] : json::array()) {
      ThroughputPoint point;
      point.batch = Get<int>(p, "batch", 1);
      point.streams = Get<int>(p, "streams", 1);
      point.threads_per_stream = Get<int>(p, "threads_per_stream");
      point.status = Get<std::string>(p, "status", std::string("ok"));
      point.error = Get<std::string>(p, "error");
      if (const json& s = Member(p, "latency_ms"); s.is_object()) point.latency = LatencyFromJson(s);
      point.inferences_per_s = Get<double>(p, "inferences_per_s");
      point.requests = Get<int64_t>(p, "requests");
      point.duration_s = Get<double>(p, "duration_s");
      for (const json& l : Member(p, "layers").is_array() ? p["layers"] : json::array()) {
        point.layers.push_back(LayerFromJson(l));
      }
      t.throughput.push_back(std::move(point));
    }
    ReadRounds(j, t);
    return t;
  } catch (const json::exception& e) {
    return ParseError("target '" + name + "': " + e.what());
  }
}

MachineInfo DescribeMachine(const DiscoveryReport& discovery) {
  MachineInfo machine;
  for (const auto& device : discovery.devices) machine.devices.push_back(device->info());
  machine.notes = discovery.notes;
  utsname name{};
  if (uname(&name) == 0) {
    machine.hostname = name.nodename;
    machine.os = std::string(name.sysname) + " " + name.release;
    machine.arch = name.machine;
  }
  return machine;
}

json RunResultToJson(const RunResult& run) {
  json devices = json::array();
  for (const DeviceInfo& d : run.machine.devices) devices.push_back(DeviceInfoToJson(d));
  json machine = {{"devices", devices}, {"notes", run.machine.notes}};
  if (!run.machine.hostname.empty()) {
    machine["hostname"] = run.machine.hostname;
    machine["os"] = run.machine.os;
    machine["arch"] = run.machine.arch;
  }
  json model = SummaryToJson(run.model);
  model["flops"] = run.model_flops;
  json inputs = {{"source", run.inputs.source}};
  if (run.inputs.seed) inputs["seed"] = *run.inputs.seed;
  if (run.inputs.samples) inputs["samples"] = *run.inputs.samples;
  if (!run.inputs.shapes.empty()) inputs["shapes"] = run.inputs.shapes;
  if (!run.inputs.kind.empty()) {
    inputs["kind"] = run.inputs.kind;
    inputs["files"] = run.inputs.files;
    inputs["files_sha256"] = run.inputs.files_sha256;
    inputs["preprocess"] = run.inputs.preprocess.empty() ? json(nullptr) : json(run.inputs.preprocess);
    inputs["notes"] = run.inputs.notes;
  }
  json ceilings = json::array();
  for (const CeilingReport& c : run.ceilings) ceilings.push_back(CeilingReportToJson(c));
  json targets = json::array();
  for (const auto& t : run.targets) targets.push_back(TargetResultToJson(*t, run.node_ops));
  json out = run.extra.is_object() ? run.extra : json::object();
  out["schema"] = kProfileSchema;
  out["chipfit_version"] = run.chipfit_version;
  out["run_id"] = run.run_id ? json(*run.run_id) : json(nullptr);
  if (!run.run_uid.empty()) out["run_uid"] = run.run_uid;
  out["status"] = run.status;
  if (!run.started_at.empty()) out["started_at"] = run.started_at;
  if (!run.started_at.empty()) out["finished_at"] = run.finished_at.empty() ? json(nullptr) : json(run.finished_at);
  out["command"] = run.command;
  out["source"] = run.source;
  out["model"] = model;
  out["machine"] = machine;
  out["inputs"] = inputs;
  out["settings"] = {{"warmup", run.settings.warmup},
                     {"iterations", run.settings.iterations},
                     {"min_time_s", run.settings.min_time_s},
                     {"reference", run.settings.reference},
                     {"targets", run.settings.targets}};
  // Recorded since runs are compared only when they measured the same thing; older runs lack them.
  if (run.settings.threads > 0) out["settings"]["threads"] = run.settings.threads;
  if (!run.settings.calibration.empty()) out["settings"]["calibration"] = run.settings.calibration;
  if (run.settings.int8_all_layers) out["settings"]["int8_layers"] = "all";
  if (!run.settings.keep_fp32.empty()) out["settings"]["keep_fp32"] = run.settings.keep_fp32;
  // How the threads were chosen and the machine's load before timing: runs made before the interleaved
  // rounds have no `cores` and none of these.
  if (run.settings.cores > 0) {
    out["settings"]["threads_reason"] = run.settings.threads_reason;
    out["settings"]["cores"] = run.settings.cores;
    out["settings"]["other_cpus_before"] =
        run.settings.other_cpus_before ? json(*run.settings.other_cpus_before) : json(nullptr);
    out["settings"]["max_time_s"] = run.settings.max_time_s;
  }
  out["energy_sensors"] = {{"found", run.energy_sensors.found},
                           {"used", run.energy_sensors.used ? json(*run.energy_sensors.used) : json(nullptr)},
                           {"notes", run.energy_sensors.notes}};
  out["ceilings"] = ceilings;
  out["targets"] = targets;
  if (!run.recommendation.is_null()) out["recommendation"] = run.recommendation;
  if (run.projections.is_array() && !run.projections.empty()) {
    out["projections"] = run.projections;
    out["projection_calibration"] = run.projection_calibration;
  }
  return out;
}

Result<RunResult> RunResultFromJson(const json& j) {
  if (!j.is_object()) return ParseError("a profile is a JSON object (schema chipfit.profile/1)");
  if (const std::string schema = Get<std::string>(j, "schema"); schema != kProfileSchema) {
    return ParseError("schema '" + schema + "' is not " + kProfileSchema);
  }
  static const char* const kKnown[] = {"schema",
                                       "chipfit_version",
                                       "run_id",
                                       "run_uid",
                                       "status",
                                       "started_at",
                                       "finished_at",
                                       "command",
                                       "source",
                                       "model",
                                       "machine",
                                       "inputs",
                                       "settings",
                                       "energy_sensors",
                                       "ceilings",
                                       "targets",
                                       "recommendation",
                                       "projections",
                                       "projection_calibration"};
  const char* where = "run";
  try {
    RunResult run;
    for (const auto& item : j.items()) {
      const std::string& key = item.key();
      if (std::find_if(std::begin(kKnown), std::end(kKnown), [&key](const char* k) { return key == k; }) ==
          std::end(kKnown)) {
        run.extra[key] = item.value();
      }
    }
    run.chipfit_version = Get<std::string>(j, "chipfit_version");
    run.run_id = GetOptional<int64_t>(j, "run_id");
    run.run_uid = Get<std::string>(j, "run_uid");
    run.status = Get<std::string>(j, "status", std::string("ok"));
    run.started_at = Get<std::string>(j, "started_at");
    run.finished_at = Get<std::string>(j, "finished_at");
    run.command = Get<std::string>(j, "command");
    run.source = Get<std::string>(j, "source", std::string("cli"));
    where = "model";
    if (!Member(j, "model").is_null()) {
      ASSIGN_OR_RETURN(run.model, SummaryFromJson(Member(j, "model")));
    }
    run.model_flops = Get<int64_t>(Member(j, "model"), "flops");
    where = "machine";
    const json& machine = Member(j, "machine");
    run.machine.hostname = Get<std::string>(machine, "hostname");
    run.machine.os = Get<std::string>(machine, "os");
    run.machine.arch = Get<std::string>(machine, "arch");
    run.machine.notes = Get<std::vector<std::string>>(machine, "notes");
    for (const json& d : Member(machine, "devices").is_array() ? machine["devices"] : json::array()) {
      ASSIGN_OR_RETURN(DeviceInfo info, DeviceInfoFromJson(d));
      run.machine.devices.push_back(std::move(info));
    }
    where = "inputs";
    const json& inputs = Member(j, "inputs");
    run.inputs.source = Get<std::string>(inputs, "source");
    run.inputs.seed = GetOptional<uint64_t>(inputs, "seed");
    run.inputs.samples = GetOptional<int64_t>(inputs, "samples");
    run.inputs.shapes = Get<std::map<std::string, std::string>>(inputs, "shapes");
    run.inputs.kind = Get<std::string>(inputs, "kind");
    run.inputs.files = Get<int64_t>(inputs, "files");
    run.inputs.files_sha256 = Get<std::string>(inputs, "files_sha256");
    run.inputs.preprocess = Get<std::string>(inputs, "preprocess");
    run.inputs.notes = Get<std::vector<std::string>>(inputs, "notes");
    where = "settings";
    const json& settings = Member(j, "settings");
    run.settings.warmup = Get<int>(settings, "warmup", 10);
    run.settings.iterations = Get<int>(settings, "iterations", 50);
    run.settings.min_time_s = Get<double>(settings, "min_time_s", 1.0);
    run.settings.reference = Get<std::string>(settings, "reference", std::string("ref:fp32"));
    run.settings.targets = Get<std::string>(settings, "targets");
    run.settings.threads = Get<int>(settings, "threads");
    run.settings.calibration = Get<std::string>(settings, "calibration");
    run.settings.int8_all_layers = Get<std::string>(settings, "int8_layers") == "all";
    run.settings.keep_fp32 = Get<std::vector<std::string>>(settings, "keep_fp32");
    run.settings.threads_reason = Get<std::string>(settings, "threads_reason");
    run.settings.cores = Get<int>(settings, "cores");
    run.settings.other_cpus_before = GetOptional<double>(settings, "other_cpus_before");
    run.settings.max_time_s = Get<double>(settings, "max_time_s");
    where = "energy_sensors";
    const json& sensors = Member(j, "energy_sensors");
    run.energy_sensors.found = Get<std::vector<std::string>>(sensors, "found");
    run.energy_sensors.used = GetOptional<std::string>(sensors, "used");
    run.energy_sensors.notes = Get<std::vector<std::string>>(sensors, "notes");
    where = "ceilings";
    for (const json& c : Member(j, "ceilings").is_array() ? j["ceilings"] : json::array()) {
      ASSIGN_OR_RETURN(CeilingReport report, CeilingReportFromJson(c));
      run.ceilings.push_back(std::move(report));
    }
    where = "targets";
    for (const json& t : Member(j, "targets").is_array() ? j["targets"] : json::array()) {
      auto target = TargetResultFromJson(t);
      if (!target.ok()) return Status(target.status().code(), "profile JSON, targets: " + target.status().message());
      for (const json& n : Member(t, "nodes").is_array() ? t["nodes"] : json::array()) {
        if (const auto op = GetOptional<std::string>(n, "op")) run.node_ops[Get<std::string>(n, "node")] = *op;
      }
      run.targets.push_back(std::make_shared<const TargetResult>(std::move(target).value()));
    }
    run.recommendation = Member(j, "recommendation");
    if (j.contains("projections") && j["projections"].is_array()) run.projections = j["projections"];
    if (j.contains("projection_calibration")) run.projection_calibration = j["projection_calibration"];
    return run;
  } catch (const json::exception& e) {
    return ParseError(std::string("profile JSON, ") + where + ": " + e.what());
  }
}

const TargetResult* RunResult::FindTarget(const std::string& target) const {
  for (const auto& t : targets) {
    if (t->target.ToString() == target) return t.get();
  }
  return nullptr;
}

}  // namespace chipfit
