// Builds the `chipfit profile` line that reproduces a recorded run: each flag from the field the run
// recorded it in, so a run started from the GUI ("chipfit-gui model.onnx") still says how to repeat it.
#include "views/report/report_command.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

namespace chipfit::report {

using nlohmann::json;

namespace {

// Shortest text that parses back to the same double ("0.3", not "0.300000"); integers without a point.
std::string Number(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

void Flag(std::vector<std::string>& args, const char* flag, const std::string& value) {
  args.emplace_back(flag);
  args.push_back(value);
}

// The data folder, or the seed of the random inputs; a folder of images or audio also its preprocessing.
void AddInputs(const RunResult& run, std::vector<std::string>& args) {
  const RunInputs& inputs = run.inputs;
  if (inputs.source.rfind("data ", 0) == 0) {
    Flag(args, "--data", inputs.source.substr(5));
    if (inputs.kind == "images" && !inputs.preprocess.empty()) Flag(args, "--preprocess", inputs.preprocess);
    // Audio records "sample_rate=16000,samples=N": the rate is the flag, the length follows from the files.
    const std::string rate_key = "sample_rate=";
    if (inputs.kind == "audio" && inputs.preprocess.rfind(rate_key, 0) == 0) {
      const std::string rest = inputs.preprocess.substr(rate_key.size());
      Flag(args, "--sample-rate", rest.substr(0, rest.find(',')));
    }
  } else if (inputs.seed) {
    Flag(args, "--seed", std::to_string(*inputs.seed));
  }
}

// Throughput mode: the batch sizes in the order they ran, and the largest stream count (each batch ran on
// one stream and, with --streams N, on N).
void AddThroughput(const RunResult& run, std::vector<std::string>& args) {
  std::vector<int> batches;
  int streams = 1;
  for (const auto& t : run.targets) {
    for (const ThroughputPoint& p : t->throughput) {
      if (std::find(batches.begin(), batches.end(), p.batch) == batches.end()) batches.push_back(p.batch);
      streams = std::max(streams, p.streams);
    }
  }
  if (batches.empty()) return;
  std::string list;
  for (int b : batches) list += (list.empty() ? "" : ",") + std::to_string(b);
  Flag(args, "--batch", list);
  if (streams > 1) Flag(args, "--streams", std::to_string(streams));
}

const json* Member(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

// The limits and objective of the recommendation the report shows (the GUI's Recommend limits on an
// export), as `profile` takes them.
void AddRecommendation(const json& rec, std::vector<std::string>& args) {
  if (!rec.is_object()) return;
  const json* limits = Member(rec, "limits");
  const auto number = [&](const char* key, const char* flag) {
    const json* v = limits != nullptr ? Member(*limits, key) : nullptr;
    if (v != nullptr && v->is_number()) Flag(args, flag, Number(v->get<double>()));
  };
  number("max_latency_ms", "--max-latency-ms");
  // The statistic was given when it is not the default p99, or when the ranking used it (by default
  // targets rank by p50 whatever the limit's statistic).
  const json* stat = limits != nullptr ? Member(*limits, "latency_stat") : nullptr;
  const json* ranked_by = Member(rec, "ranked_by");
  if (stat != nullptr && stat->is_string()) {
    const std::string s = stat->get<std::string>();
    const bool ranked =
        ranked_by != nullptr && ranked_by->is_string() && ranked_by->get<std::string>() == s + " latency";
    if (s != "p99" || ranked) Flag(args, "--latency-stat", s);
  }
  number("min_top1", "--min-top1");
  number("min_sqnr_db", "--min-sqnr-db");
  number("max_memory_mb", "--max-memory-mb");
  number("max_energy_mj", "--max-energy-mj");
  if (const json* guard = limits != nullptr ? Member(*limits, "accuracy_guard") : nullptr;
      guard != nullptr && guard->is_boolean() && !guard->get<bool>()) {
    args.emplace_back("--no-accuracy-guard");
  }
  if (const json* unreliable = limits != nullptr ? Member(*limits, "rank_unreliable") : nullptr;
      unreliable != nullptr && unreliable->is_boolean() && unreliable->get<bool>()) {
    args.emplace_back("--rank-unreliable");
  }
  const json* objective = Member(rec, "objective");
  if (objective != nullptr && objective->is_string() && objective->get<std::string>() != "latency") {
    Flag(args, "--objective", objective->get<std::string>());
  }
  // A weighted ranking has several terms; the objective alone records one weight of 1.
  if (const json* weights = Member(rec, "weights"); weights != nullptr && weights->is_object()) {
    std::string list;
    for (const auto& [term, w] : weights->items()) {
      if (w.is_number()) list += (list.empty() ? "" : ",") + term + "=" + Number(w.get<double>());
    }
    if (weights->size() > 1) Flag(args, "--weights", list);
  }
  if (const json* costs = Member(rec, "cost_table"); costs != nullptr && costs->is_string()) {
    const std::string path = costs->get<std::string>();
    // The shipped table is the default: naming it would tie the line to this checkout's path.
    if (path.find("resources/costs/default.yaml") == std::string::npos) Flag(args, "--costs", path);
  }
}

}  // namespace

std::vector<std::string> ProfileCommandArgs(const RunResult& run) {
  const RunSettings& s = run.settings;
  std::vector<std::string> args = {"chipfit", "profile", run.model.path};
  for (const auto& [name, dims] : run.inputs.shapes) {
    if (!dims.empty()) Flag(args, "--shape", name + "=" + dims);  // a scalar input has no dims to bind
  }
  if (s.targets == "all") {
    args.emplace_back("--all-targets");
  } else if (!s.targets.empty()) {
    Flag(args, "--targets", s.targets);
  } else {
    // Older runs did not record the list as given: the targets that ran.
    std::string list;
    for (const auto& t : run.targets) list += (list.empty() ? "" : ",") + t->target.ToString();
    if (!list.empty()) Flag(args, "--targets", list);
  }
  Flag(args, "--iterations", std::to_string(s.iterations));
  Flag(args, "--warmup", std::to_string(s.warmup));
  Flag(args, "--min-time", Number(s.min_time_s));
  if (s.max_time_s > 0) Flag(args, "--max-time", Number(s.max_time_s));
  // The thread count the run had, chosen or given: latency depends on it more than on any other setting.
  if (s.threads > 0) Flag(args, "--threads", std::to_string(s.threads));
  if (!s.reference.empty() && s.reference != "ref:fp32") Flag(args, "--reference", s.reference);
  AddInputs(run, args);
  AddThroughput(run, args);
  if (!s.calibration.empty() && s.calibration != "minmax") Flag(args, "--calibration", s.calibration);
  if (s.int8_all_layers) args.emplace_back("--int8-all-layers");
  if (!s.keep_fp32.empty()) {
    std::string nodes;
    for (const std::string& n : s.keep_fp32) nodes += (nodes.empty() ? "" : ",") + n;
    Flag(args, "--keep-fp32", nodes);
  }
  AddRecommendation(run.recommendation, args);
  return args;
}

std::string ShellQuote(const std::string& arg) {
  static const std::set<char> kPlain = {'_', '-', '.', ',', ':', '/', '=', '+', '@', '%'};
  bool plain = !arg.empty();
  for (char c : arg) {
    const auto u = static_cast<unsigned char>(c);
    plain = plain && (std::isalnum(u) != 0 || kPlain.contains(c));
  }
  if (plain) return arg;
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string ProfileCommandLine(const RunResult& run) {
  std::string line;
  for (const std::string& arg : ProfileCommandArgs(run)) line += (line.empty() ? "" : " ") + ShellQuote(arg);
  return line;
}

}  // namespace chipfit::report
