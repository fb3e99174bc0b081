// The published validation set, the efficiency fitted on it and the validation (published.h).
#include "profilers/projection/published.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "profilers/latency/latency_stats.h"

namespace chipfit {
namespace {

const std::vector<std::string> kColumns = {"model",    "input",  "device", "precision", "batch",
                                           "runtime",  "metric", "value",  "devices",   "status",
                                           "includes", "source", "table",  "date",      "notes"};
const std::vector<std::string> kRequiredColumns = {"model",   "input",  "device", "precision", "batch",
                                                   "runtime", "metric", "value",  "source",    "date"};

// RFC 4180 records: fields split on commas outside double quotes, "" inside quotes is a quote.
Result<std::vector<std::vector<std::string>>> CsvRecords(const std::string& text, const std::string& file) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, any = false;
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !field.empty()) {
        record.push_back(std::move(field));
        records.push_back(std::move(record));
      }
      record.clear();
      field.clear();
      any = false;
      ++line;
    } else {
      field += c;
      any = true;
    }
  }
  if (quoted) return ParseError(fmt::format("{}: line {}: a quoted field is not closed", file, line));
  if (any || !field.empty()) {
    record.push_back(std::move(field));
    records.push_back(std::move(record));
  }
  return records;
}

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// Median and quantiles of a copy (latency_stats' Quantile sorts in place).
double Median(std::vector<double> v) { return Quantile(v, 0.5); }
double QuantileOf(std::vector<double> v, double q) { return Quantile(v, q); }

// |error| as a factor: projected 2 ms for a measured 1 ms and projected 0.5 ms are both 100 %.
double FactorError(double log_error) { return std::exp(std::abs(log_error)) - 1; }

// ---------------------------------------------------------------------------------------------
// The fit. Parameters are logs of factors on chipfit's priors, per kind of device (shrunk towards the
// prior, so a kind whose only device is left out falls back to chipfit's priors for it: the kinds'
// software differs too much for one to stand in for another), the per-kind inference overhead, and
// two nuisance terms for figures that are not of a compiled engine (eager per-layer dispatch, a
// serving stack's fixed cost). Sharing factors across kinds was tried: it made the CPU and NPU
// projections of the left-out devices worse (82–110 % median |error| on the CPU against 60 %).

constexpr int kMatFp32 = 0, kMatHalf = 1, kMatInt8 = 2, kDepthwise = 3, kMemory = 4, kLayerOverhead = 5;
constexpr int kFactors = 6;
const std::vector<std::string> kKinds = {"cpu", "gpu", "npu", "accelerator"};
constexpr double kInferencePriorMs = 0.02;   // a compiled engine's call and input binding
constexpr double kEagerLayerPriorMs = 0.04;  // a framework's per-op dispatch from Python
constexpr double kServedPriorMs = 0.5;       // a serving stack's client, transport and queue

struct Alternative {
  int group = 0;  // kMatFp32 | kMatHalf | kMatInt8
  double compute_ms = 0, memory_ms = 0;
  double compute_floor_ms = 0;  // η_c = 1: no factor makes a matrix unit faster than its peak
};
struct PreparedLayer {
  OpClass op_class = OpClass::kElementwise;
  double iterations = 1;
  std::vector<Alternative> alternatives;  // one per precision the runtime may pick
};
struct PreparedRow {
  size_t row = 0;  // index into the rows
  int kind = 0;
  RuntimeClass runtime = RuntimeClass::kCompiled;
  double launch_prior_ms = 0;
  double measured_ms = 0;
  double roofline_ms = 0;  // η = 1, no overhead, at the row's precision
  std::vector<PreparedLayer> layers;
};

struct Parameters {
  std::array<std::array<double, kFactors>, 4> kind{};
  std::array<double, 4> inference{};  // log ms
  double eager_layer = std::log(kEagerLayerPriorMs), served = std::log(kServedPriorMs);
  Parameters() { inference.fill(std::log(kInferencePriorMs)); }
};

int GroupIndex(Precision p) {
  const std::string g = PrecisionGroup(p);
  return g == "fp32" ? kMatFp32 : g == "half" ? kMatHalf : kMatInt8;
}

double ProjectPrepared(const PreparedRow& r, const Parameters& th) {
  std::array<double, kFactors> f{};
  for (int i = 0; i < kFactors; ++i) f[i] = std::exp(th.kind[r.kind][i]);
  double overhead = r.launch_prior_ms * f[kLayerOverhead];
  if (r.runtime == RuntimeClass::kEager) overhead += std::exp(th.eager_layer);
  double total = std::exp(th.inference[r.kind]);
  if (r.runtime == RuntimeClass::kServed) total += std::exp(th.served);
  for (const PreparedLayer& l : r.layers) {
    double best = -1;
    for (const Alternative& a : l.alternatives) {
      double fc = f[kMemory], fm = f[kMemory];
      if (l.op_class == OpClass::kMatrix) {
        fc = f[a.group];
      } else if (l.op_class == OpClass::kDepthwise) {
        fc = fm = f[kDepthwise];
      }
      const double c = std::max(a.compute_ms / fc, a.compute_floor_ms), m = a.memory_ms / fm;
      const double body = std::cbrt(c * c * c + m * m * m);
      if (best < 0 || body < best) best = body;
    }
    total += (overhead + std::max(best, 0.0)) * l.iterations;
  }
  return total;
}

// Which parameter a coordinate is, so a step re-evaluates only the rows it touches.
struct Coordinate {
  double* value;
  double prior;
  double weight;  // of the penalty (value − prior)²
  int kind = -1;  // -1: every kind
  std::optional<RuntimeClass> runtime{};
};

void Fit(const std::vector<PreparedRow>& rows, Parameters& th) {
  std::vector<Coordinate> coords;
  std::set<int> kinds_present;
  std::set<RuntimeClass> runtimes_present;
  for (const auto& r : rows) {
    kinds_present.insert(r.kind);
    runtimes_present.insert(r.runtime);
  }
  for (int k : kinds_present) {
    for (int i = 0; i < kFactors; ++i) coords.push_back({&th.kind[k][i], 0.0, 0.5, k});
    coords.push_back({&th.inference[k], std::log(kInferencePriorMs), 0.1, k});
  }
  if (runtimes_present.contains(RuntimeClass::kEager)) {
    coords.push_back({&th.eager_layer, std::log(kEagerLayerPriorMs), 0.1, -1, RuntimeClass::kEager});
  }
  if (runtimes_present.contains(RuntimeClass::kServed)) {
    coords.push_back({&th.served, std::log(kServedPriorMs), 0.1, -1, RuntimeClass::kServed});
  }
  for (int sweep = 0; sweep < 6; ++sweep) {
    for (const Coordinate& c : coords) {
      std::vector<const PreparedRow*> touched;
      for (const auto& r : rows) {
        if ((c.kind < 0 || r.kind == c.kind) && (!c.runtime || r.runtime == *c.runtime)) touched.push_back(&r);
      }
      auto loss = [&](double v) {
        *c.value = v;
        double sum = c.weight * (v - c.prior) * (v - c.prior);
        for (const PreparedRow* r : touched) {
          const double e = std::log(r->measured_ms / ProjectPrepared(*r, th));
          sum += e * e;
        }
        return sum;
      };
      // Golden-section search within ±3 (a factor of 20) of where the coordinate is.
      constexpr double kRatio = 0.6180339887498949;
      const double start = *c.value;
      double a = start - 3, b = start + 3;
      double x1 = b - kRatio * (b - a), x2 = a + kRatio * (b - a);
      double f1 = loss(x1), f2 = loss(x2);
      for (int it = 0; it < 18; ++it) {
        if (f1 < f2) {
          b = x2;
          x2 = x1;
          f2 = f1;
          x1 = b - kRatio * (b - a);
          f1 = loss(x1);
        } else {
          a = x1;
          x1 = x2;
          f1 = f2;
          x2 = a + kRatio * (b - a);
          f2 = loss(x2);
        }
      }
      const double found = 0.5 * (a + b);
      *c.value = loss(found) <= loss(start) ? found : start;
    }
  }
}

KindEfficiency KindOf(const Parameters& th, int k) {
  KindEfficiency e;
  auto f = [&](int i) { return std::exp(th.kind[k][i]); };
  e.matrix = {{"fp32", f(kMatFp32)}, {"half", f(kMatHalf)}, {"int8", f(kMatInt8)}};
  e.depthwise = f(kDepthwise);
  e.memory = f(kMemory);
  e.inference_overhead_ms = std::exp(th.inference[k]);
  e.runtime = AssumedRuntime(kKinds[k]);
  return e;
}

const HardwareSpec* FindSpec(const std::vector<HardwareSpec>& catalog, const std::string& id) {
  for (const auto& s : catalog) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

int KindIndex(const std::string& kind) {
  for (size_t i = 0; i < kKinds.size(); ++i) {
    if (kKinds[i] == kind) return static_cast<int>(i);
  }
  return 0;
}

PreparedRow Prepare(size_t index, const PublishedRow& row, const HardwareSpec& spec,
                    const std::vector<LayerFeature>& features) {
  PreparedRow r;
  r.row = index;
  r.kind = KindIndex(spec.kind);
  r.runtime = RuntimeClassOf(row.runtime);
  r.launch_prior_ms = PriorLaunchOverheadMs(spec.launch_overhead);
  r.measured_ms = row.MeasuredBatchMs();
  const auto allowed = AllowedPrecisions(spec, row.precision);
  const bool throughput = row.metric == "throughput_per_s";
  for (const LayerFeature& f : features) {
    PreparedLayer l;
    l.op_class = f.op_class;
    l.iterations = f.iterations;
    for (Precision q : allowed) {
      // The vendors' runtimes move activations at the precision they compute in (on CPUs too).
      const LayerTerms t = PriorTerms(f, spec, q, PrecisionByteFactor(q, f.op_class), throughput);
      l.alternatives.push_back({GroupIndex(q), t.compute_ms, t.memory_ms, t.compute_ms * t.eta_c});
      // The baselines are the plain roofline of every layer.
      if (q == row.precision) r.roofline_ms += std::max(t.ideal_compute_ms, t.ideal_memory_ms) * f.iterations;
    }
    if (!ElidedByCompiledRuntime(f.op)) r.layers.push_back(std::move(l));
  }
  return r;
}

std::string RowLabel(const PublishedRow& r) {
  return fmt::format("{} {} {}:{} b{} {}", r.model, r.input, r.device, PrecisionName(r.precision), r.batch,
                     r.metric == "latency_ms" ? "latency" : "throughput");
}

struct Scores {
  std::vector<double> chipfit, roofline, fixed70;  // log errors
  int in_band = 0;
  nlohmann::json ToJson() const {
    std::vector<double> c, r, f;
    for (double e : chipfit) c.push_back(FactorError(e));
    for (double e : roofline) r.push_back(FactorError(e));
    for (double e : fixed70) f.push_back(FactorError(e));
    return {{"rows", chipfit.size()},
            {"median_abs_error", Median(c)},
            {"p90_abs_error", QuantileOf(c, 0.9)},
            {"in_band", chipfit.empty() ? 0.0 : static_cast<double>(in_band) / static_cast<double>(chipfit.size())},
            {"roofline_median_abs_error", Median(r)},
            {"fixed70_median_abs_error", Median(f)}};
  }
};

}  // namespace

double PublishedRow::MeasuredBatchMs() const {
  if (metric == "throughput_per_s") return static_cast<double>(batch) * 1000.0 / (value / std::max(1, devices));
  return value;
}

Result<std::vector<PublishedRow>> ParsePublishedCsv(const std::string& text, const std::string& file) {
  ASSIGN_OR_RETURN(auto records, CsvRecords(text, file));
  if (records.empty()) return InvalidArgument(file + ": no header line");
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < records[0].size(); ++i) {
    const std::string name = Trim(records[0][i]);
    if (std::find(kColumns.begin(), kColumns.end(), name) == kColumns.end()) {
      return InvalidArgument(
          fmt::format("{}: unknown column '{}' (columns: {})", file, name, fmt::join(kColumns, ",")));
    }
    column[name] = i;
  }
  for (const auto& name : kRequiredColumns) {
    if (!column.contains(name)) return InvalidArgument(fmt::format("{}: no column '{}'", file, name));
  }
  std::vector<PublishedRow> rows;
  for (size_t n = 1; n < records.size(); ++n) {
    const auto& rec = records[n];
    const int line = static_cast<int>(n + 1);
    auto get = [&](const std::string& name) {
      auto it = column.find(name);
      return it == column.end() || it->second >= rec.size() ? std::string() : Trim(rec[it->second]);
    };
    auto bad = [&](const std::string& name, const std::string& why) {
      return InvalidArgument(fmt::format("{}: row {}: {} '{}': {}", file, line, name, get(name), why));
    };
    PublishedRow r;
    r.file = file;
    r.line = line;
    r.model = get("model");
    r.input = get("input");
    r.device = get("device");
    r.runtime = get("runtime");
    r.metric = get("metric");
    r.includes = get("includes");
    r.source = get("source");
    r.table = get("table");
    r.date = get("date");
    r.notes = get("notes");
    if (!get("status").empty()) r.status = get("status");
    for (const auto& name : kRequiredColumns) {
      if (get(name).empty()) return bad(name, "is empty");
    }
    auto precision = ParsePrecision(get("precision"));
    if (!precision) return bad("precision", "must be fp32, tf32, fp16, bf16 or int8");
    r.precision = *precision;
    try {
      size_t used = 0;
      r.batch = std::stoi(get("batch"), &used);
      if (used != get("batch").size() || r.batch < 1) return bad("batch", "must be a whole number ≥ 1");
      r.value = std::stod(get("value"), &used);
      if (used != get("value").size() || !(r.value > 0)) return bad("value", "must be a positive number");
      if (!get("devices").empty()) {
        r.devices = std::stoi(get("devices"), &used);
        if (used != get("devices").size() || r.devices < 1) return bad("devices", "must be a whole number ≥ 1");
      }
    } catch (const std::exception&) {
      return InvalidArgument(fmt::format("{}: row {}: batch, value and devices must be numbers", file, line));
    }
    if (r.metric != "latency_ms" && r.metric != "throughput_per_s") {
      return bad("metric", "must be latency_ms or throughput_per_s");
    }
    if (r.status != "ok" && r.status.rfind("excluded:", 0) != 0) {
      return bad("status", "must be ok or 'excluded: <why>'");
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

Result<std::vector<PublishedRow>> LoadPublishedSet(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("published-", 0) == 0 && entry.path().extension() == ".csv") files.push_back(entry.path());
  }
  if (ec) return NotFound(fmt::format("{}: {}", dir.string(), ec.message()));
  if (files.empty()) return NotFound(dir.string() + ": no published-*.csv");
  std::sort(files.begin(), files.end());
  std::vector<PublishedRow> rows;
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return IoError("cannot read " + path.string());
    std::stringstream text;
    text << in.rdbuf();
    ASSIGN_OR_RETURN(auto part, ParsePublishedCsv(text.str(), path.filename().string()));
    rows.insert(rows.end(), part.begin(), part.end());
  }
  return rows;
}

std::filesystem::path DefaultValidationDir() { return DefaultHardwareDir() / "validation"; }
std::filesystem::path DefaultEfficiencyFile() { return DefaultValidationDir() / "efficiency.json"; }

std::vector<LayerFeature> ArchitectureFeatures::AtBatch(int batch) const {
  // Affine in the batch: x(B) = x(1) + (B − 1)·(x(2) − x(1)), for FLOPs, bytes and every output dim.
  const auto b = static_cast<double>(batch - 1);
  auto at = [&](int64_t one, int64_t two) {
    return static_cast<int64_t>(std::llround(static_cast<double>(one) + b * static_cast<double>(two - one)));
  };
  TargetResult t;
  for (size_t i = 0; i < b1.size() && i < b2.size(); ++i) {
    LayerResult l = b1[i];
    l.flops = at(b1[i].flops, b2[i].flops);
    l.bytes_read = at(b1[i].bytes_read, b2[i].bytes_read);
    l.bytes_written = at(b1[i].bytes_written, b2[i].bytes_written);
    for (size_t d = 0; d < l.output_shape.size() && d < b2[i].output_shape.size(); ++d) {
      l.output_shape[d] = at(b1[i].output_shape[d], b2[i].output_shape[d]);
    }
    t.layers.push_back(std::move(l));
  }
  return FeaturesOf(t);
}

Result<ArchitectureFeatures> ParseArchitectureFeatures(const nlohmann::json& j, const std::string& file) {
  if (j.value("schema", std::string()) != "chipfit.features/1") {
    return InvalidArgument(file + ": not a chipfit.features/1 document");
  }
  ArchitectureFeatures a;
  try {
    a.model = j.at("model").get<std::string>();
    a.input = j.at("input").get<std::string>();
    for (const auto& [key, list] : {std::pair{"b1", &a.b1}, std::pair{"b2", &a.b2}}) {
      for (const auto& row : j.at("layers").at(key)) {
        LayerResult l;
        l.name = row.at(0).get<std::string>();
        l.op = row.at(1).get<std::string>();
        l.flops = row.at(2).get<int64_t>();
        l.bytes_read = row.at(3).get<int64_t>();
        l.bytes_written = row.at(4).get<int64_t>();
        l.output_shape = row.at(5).get<std::vector<int64_t>>();
        list->push_back(std::move(l));
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(fmt::format("{}: {}", file, e.what()));
  }
  if (a.b1.size() != a.b2.size() || a.b1.empty()) {
    return InvalidArgument(file + ": batch 1 and batch 2 must list the same, non-empty, layers");
  }
  for (size_t i = 0; i < a.b1.size(); ++i) {
    if (a.b1[i].name != a.b2[i].name) {
      return InvalidArgument(
          fmt::format("{}: layer {} is '{}' at batch 1 and '{}' at batch 2", file, i, a.b1[i].name, a.b2[i].name));
    }
  }
  return a;
}

Result<std::map<std::string, ArchitectureFeatures>> LoadArchitectureFeatures(const std::filesystem::path& dir) {
  std::map<std::string, ArchitectureFeatures> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    nlohmann::json j;
    try {
      in >> j;
    } catch (const nlohmann::json::exception& e) {
      return ParseError(fmt::format("{}: {}", entry.path().string(), e.what()));
    }
    ASSIGN_OR_RETURN(auto a, ParseArchitectureFeatures(j, entry.path().filename().string()));
    out[a.model + "-" + a.input] = std::move(a);
  }
  if (ec) return NotFound(fmt::format("{}: {}", dir.string(), ec.message()));
  return out;
}

RuntimeClass RuntimeClassOf(const std::string& runtime) {
  const std::string name = runtime.substr(0, runtime.find(' '));
  if (name == "pytorch" || name == "tensorflow") return RuntimeClass::kEager;
  // A serving stack, or a harness whose timed loop copies inputs and outputs between host and device.
  if (name == "triton" || name == "bytemlperf-hpu") return RuntimeClass::kServed;
  return RuntimeClass::kCompiled;  // tensorrt, openvino, neuron, qnn, onnxruntime, pytorch-ipex, synapseai, …
}

Result<PublishedEfficiency> LoadPublishedEfficiency(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return NotFound("no efficiency file " + file.string());
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    return ParseError(fmt::format("{}: {}", file.string(), e.what()));
  }
  return PublishedEfficiencyFromJson(j, file.string());
}

Result<PublishedValidation> ValidatePublished(const std::filesystem::path& dir,
                                              const std::vector<HardwareSpec>& catalog) {
  ASSIGN_OR_RETURN(const auto rows, LoadPublishedSet(dir));
  ASSIGN_OR_RETURN(const auto features, LoadArchitectureFeatures(dir / "features"));
  std::vector<PreparedRow> prepared;
  nlohmann::json excluded = nlohmann::json::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    const PublishedRow& r = rows[i];
    const HardwareSpec* spec = FindSpec(catalog, r.device);
    if (spec == nullptr) {
      return InvalidArgument(fmt::format("{}: row {}: device '{}' is not in the catalog", r.file, r.line, r.device));
    }
    auto f = features.find(r.model + "-" + r.input);
    if (f == features.end()) {
      return NotFound(fmt::format("{}: row {}: no features/{}-{}.json (run scripts/make-validation-features.py)",
                                  r.file, r.line, r.model, r.input));
    }
    if (!spec->Supports(r.precision)) {
      return InvalidArgument(
          fmt::format("{}: row {}: {} has no {} in the catalog", r.file, r.line, r.device, PrecisionName(r.precision)));
    }
    if (!r.Used()) {
      excluded.push_back({{"row", RowLabel(r)}, {"file", r.file}, {"line", r.line}, {"why", r.status}});
      continue;
    }
    prepared.push_back(Prepare(i, r, *spec, f->second.AtBatch(r.batch)));
  }
  if (prepared.size() < 2) return InvalidArgument(dir.string() + ": fewer than two usable published rows");

  // Leave one device out: fit on the other devices' rows, project the device's.
  std::vector<std::string> devices;
  for (const auto& p : prepared) {
    if (std::find(devices.begin(), devices.end(), rows[p.row].device) == devices.end())
      devices.push_back(rows[p.row].device);
  }
  std::vector<double> lodo_ms(prepared.size(), 0);
  for (size_t d = 0; d < devices.size(); ++d) {
    std::vector<PreparedRow> train;
    for (const auto& p : prepared) {
      if (rows[p.row].device != devices[d]) train.push_back(p);
    }
    Parameters th;
    Fit(train, th);
    for (size_t i = 0; i < prepared.size(); ++i) {
      if (rows[prepared[i].row].device == devices[d]) lodo_ms[i] = ProjectPrepared(prepared[i], th);
    }
  }
  // The efficiency `project` uses: every row, with each kind's leave-one-device-out errors.
  Parameters all;
  Fit(prepared, all);
  PublishedValidation out;
  std::map<int, std::set<std::string>> kind_devices;
  std::map<int, int> kind_rows;
  for (size_t i = 0; i < prepared.size(); ++i) {
    kind_devices[prepared[i].kind].insert(rows[prepared[i].row].device);
    kind_rows[prepared[i].kind] += 1;
  }
  for (const auto& [k, ids] : kind_devices) {
    KindEfficiency e = KindOf(all, k);
    e.rows = kind_rows[k];
    e.devices.assign(ids.begin(), ids.end());
    for (size_t i = 0; i < prepared.size(); ++i) {
      if (prepared[i].kind == k) e.lodo_log_errors.push_back(std::log(prepared[i].measured_ms / lodo_ms[i]));
    }
    e.layer_overhead_factor = std::exp(all.kind[k][kLayerOverhead]);
    out.efficiency.kinds[kKinds[k]] = std::move(e);
  }
  out.efficiency.fitted_on =
      fmt::format("{} published rows on {} devices ({})", prepared.size(), devices.size(),
                  (dir.filename().empty() ? dir.parent_path().filename() : dir.filename()).string());

  // Scores and the rows' table.
  Scores overall;
  std::map<std::string, Scores> by_device, by_kind;
  nlohmann::json table = nlohmann::json::array();
  std::map<std::string, std::vector<size_t>> by_model;  // "<model> <input> b<batch> <metric>" → prepared rows
  for (size_t i = 0; i < prepared.size(); ++i) {
    const PreparedRow& p = prepared[i];
    const PublishedRow& r = rows[p.row];
    const std::string& kind = kKinds[p.kind];
    // The band from the kind's errors on the other devices: the row's own device never widens or
    // narrows its own band.
    std::vector<double> others;
    for (size_t j = 0; j < prepared.size(); ++j) {
      if (prepared[j].kind == p.kind && rows[prepared[j].row].device != r.device) {
        others.push_back(std::log(prepared[j].measured_ms / lodo_ms[j]));
      }
    }
    const auto [lo, hi] = PublishedBand(others);
    const double p10 = lodo_ms[i] * lo, p90 = lodo_ms[i] * hi;
    const bool in_band = p.measured_ms >= p10 && p.measured_ms <= p90;
    const double e = std::log(p.measured_ms / lodo_ms[i]);
    const double e_roof = std::log(p.measured_ms / p.roofline_ms);
    const double e_fixed = std::log(p.measured_ms / (p.roofline_ms / 0.7));
    for (Scores* s : {&overall, &by_device[r.device], &by_kind[kind]}) {
      s->chipfit.push_back(e);
      s->roofline.push_back(e_roof);
      s->fixed70.push_back(e_fixed);
      s->in_band += in_band ? 1 : 0;
    }
    const bool throughput = r.metric == "throughput_per_s";
    auto as_metric = [&](double ms) { return throughput ? r.batch * 1000.0 / ms : ms; };
    table.push_back({{"row", RowLabel(r)},
                     {"model", r.model},
                     {"input", r.input},
                     {"device", r.device},
                     {"kind", kind},
                     {"precision", std::string(PrecisionName(r.precision))},
                     {"batch", r.batch},
                     {"runtime", r.runtime},
                     {"metric", r.metric},
                     {"measured", r.metric == "throughput_per_s" ? r.value / r.devices : r.value},
                     {"projected", as_metric(lodo_ms[i])},
                     {"p10", as_metric(throughput ? p90 : p10)},
                     {"p90", as_metric(throughput ? p10 : p90)},
                     {"error", lodo_ms[i] / p.measured_ms - 1},
                     {"in_band", in_band},
                     {"roofline_error", p.roofline_ms / p.measured_ms - 1},
                     {"fixed70_error", p.roofline_ms / 0.7 / p.measured_ms - 1},
                     {"source", r.source},
                     {"file", r.file},
                     {"line", r.line}});
    by_model[fmt::format("{} {} b{} {}", r.model, r.input, r.batch, r.metric)].push_back(i);
  }
  // Kendall's τ of the ranking of devices (and precisions) per model, shape, batch and metric.
  nlohmann::json taus = nlohmann::json::array();
  std::vector<double> tau_c, tau_r;
  for (const auto& [key, list] : by_model) {
    if (list.size() < 3) continue;
    std::vector<double> measured, projected, roof;
    for (size_t i : list) {
      measured.push_back(prepared[i].measured_ms);
      projected.push_back(lodo_ms[i]);
      roof.push_back(prepared[i].roofline_ms);
    }
    const auto t = KendallTau(projected, measured);
    const auto tr = KendallTau(roof, measured);
    if (!t) continue;
    tau_c.push_back(*t);
    if (tr) tau_r.push_back(*tr);
    taus.push_back({{"group", key}, {"rows", list.size()}, {"tau", *t}, {"roofline_tau", tr ? *tr : 0.0}});
  }
  nlohmann::json devices_json = nlohmann::json::object(), kinds_json = nlohmann::json::object();
  for (const auto& [id, s] : by_device) devices_json[id] = s.ToJson();
  for (const auto& [kind, s] : by_kind) {
    kinds_json[kind] = s.ToJson();
    const KindEfficiency& e = out.efficiency.kinds.at(kind);
    kinds_json[kind]["devices"] = e.devices;
    kinds_json[kind]["efficiency"] = PublishedEfficiencyToJson({{{kind, e}}, ""})["kinds"][kind];
  }
  nlohmann::json summary = overall.ToJson();
  summary["median_tau"] = tau_c.empty() ? nlohmann::json(nullptr) : nlohmann::json(Median(tau_c));
  summary["roofline_median_tau"] = tau_r.empty() ? nlohmann::json(nullptr) : nlohmann::json(Median(tau_r));
  summary["nuisance"] = {{"eager_layer_overhead_ms", std::exp(all.eager_layer)},
                         {"served_overhead_ms", std::exp(all.served)}};
  out.document = {{"schema", "chipfit.published-validation/1"},
                  {"set", dir.string()},
                  {"method",
                   "leave one device out: the efficiency is fitted on every other device's rows, the device's rows "
                   "are projected with it; bands from the kind's errors on the other devices"},
                  {"rows", table},
                  {"excluded", excluded},
                  {"devices", devices_json},
                  {"kinds", kinds_json},
                  {"tau", taus},
                  {"summary", summary},
                  {"efficiency", PublishedEfficiencyToJson(out.efficiency)}};
  return out;
}

std::string PublishedValidationTable(const nlohmann::json& doc) {
  auto pct = [](double v) { return fmt::format("{:+.0f} %", v * 100); };
  auto num = [](double v) {
    return v >= 100 ? fmt::format("{:.0f}", v) : v >= 10 ? fmt::format("{:.1f}", v) : fmt::format("{:.3g}", v);
  };
  std::string out = fmt::format("{:<58} {:>10} {:>10} {:>17} {:>8} {:>8} {:>9}\n", "published row (left-out device)",
                                "measured", "projected", "P10–P90", "error", "η=1", "fixed 70%");
  for (const auto& r : doc["rows"]) {
    const bool tp = r["metric"] == "throughput_per_s";
    out += fmt::format("{:<58} {:>10} {:>10} {:>17} {:>8} {:>8} {:>9}{}\n", r["row"].get<std::string>(),
                       num(r["measured"].get<double>()) + (tp ? "/s" : ""), num(r["projected"].get<double>()),
                       num(r["p10"].get<double>()) + "–" + num(r["p90"].get<double>()), pct(r["error"].get<double>()),
                       pct(r["roofline_error"].get<double>()), pct(r["fixed70_error"].get<double>()),
                       r["in_band"].get<bool>() ? "" : "  outside band");
  }
  auto block = [&](const char* title, const nlohmann::json& group) {
    std::string s = fmt::format("\n{:<24} {:>5} {:>14} {:>9} {:>12} {:>12}\n", title, "rows", "median |err|", "in band",
                                "η=1 median", "70 % median");
    for (const auto& [name, g] : group.items()) {
      s += fmt::format("{:<24} {:>5} {:>13.1f}% {:>8.0f}% {:>11.1f}% {:>11.1f}%\n", name, g["rows"].get<int>(),
                       100 * g["median_abs_error"].get<double>(), 100 * g["in_band"].get<double>(),
                       100 * g["roofline_median_abs_error"].get<double>(),
                       100 * g["fixed70_median_abs_error"].get<double>());
    }
    return s;
  };
  out += block("device", doc["devices"]);
  out += block("kind", doc["kinds"]);
  const auto& s = doc["summary"];
  out += fmt::format(
      "\nall {} rows: median |error| {:.1f} % (P90 {:.0f} %), {:.0f} % inside P10–P90; η=1 roofline {:.1f} %, fixed 70 "
      "% "
      "{:.1f} %",
      s["rows"].get<int>(), 100 * s["median_abs_error"].get<double>(), 100 * s["p90_abs_error"].get<double>(),
      100 * s["in_band"].get<double>(), 100 * s["roofline_median_abs_error"].get<double>(),
      100 * s["fixed70_median_abs_error"].get<double>());
  if (s["median_tau"].is_number()) {
    out += fmt::format("; Kendall τ (median over {} groups) {:.2f}, η=1 {:.2f}", doc["tau"].size(),
                       s["median_tau"].get<double>(),
                       s["roofline_median_tau"].is_number() ? s["roofline_median_tau"].get<double>() : 0.0);
  }
  out += "\n|error| is a factor: projected twice or half the measurement are both 100 %\n";
  if (!doc["excluded"].empty()) {
    out += fmt::format("excluded ({} rows, not scored):\n", doc["excluded"].size());
    for (const auto& e : doc["excluded"]) {
      out += fmt::format("  {} ({}:{}): {}\n", e["row"].get<std::string>(), e["file"].get<std::string>(),
                         e["line"].get<int>(), e["why"].get<std::string>());
    }
  }
  return out;
}

}  // namespace chipfit
