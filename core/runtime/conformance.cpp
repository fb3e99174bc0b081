// Conformance runner: load → import → compile → run each data set → compare with per-dtype tolerances.
// Unsupported (a Status of kind kUnsupported) is kept apart from a wrong answer or an error.
#include "core/runtime/conformance.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/graph/onnx_import.h"
#include "core/graph/onnx_loader.h"
#include "core/reference/op_versions.h"
#include "core/reference/reference_kernels.h"
#include "core/runtime/compiled_model.h"
#include "core/tensor/metrics.h"

namespace chipfit {
namespace fs = std::filesystem;
namespace {

using Outcome = ConformanceCase::Outcome;

std::vector<fs::path> SortedEntries(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().starts_with(prefix)) out.push_back(entry.path());
  }
  // input_10.pb must follow input_9.pb: order by the number after the prefix.
  std::sort(out.begin(), out.end(), [&](const fs::path& a, const fs::path& b) {
    auto number = [&](const fs::path& p) {
      const std::string name = p.stem().string().substr(prefix.size());
      return name.empty() || !std::isdigit(static_cast<unsigned char>(name[0])) ? 0L : std::stol(name);
    };
    const long na = number(a), nb = number(b);
    return na != nb ? na < nb : a.filename() < b.filename();
  });
  return out;
}

// Max abs error, or a Status describing the first mismatch that breaks the tolerance.
Result<double> Compare(const Tensor& actual, const Tensor& expected, const std::string& name, double rtol,
                       double atol) {
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    return InvalidArgument("output '" + name + "' is " + DescribeTensor(actual) + ", expected " +
                           DescribeTensor(expected));
  }
  const bool floating = IsFloatingDType(expected.dtype());
  double max_error = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const double a = actual.GetAsDouble(i);
    const double e = expected.GetAsDouble(i);
    if (std::isnan(e) || std::isnan(a)) {
      if (std::isnan(e) != std::isnan(a)) {
        return InvalidArgument("output '" + name + "' element " + std::to_string(i) + ": got " + std::to_string(a) +
                               ", expected " + std::to_string(e));
      }
      continue;
    }
    if (std::isinf(e) || std::isinf(a)) {
      if (a != e) {
        return InvalidArgument("output '" + name + "' element " + std::to_string(i) + ": got " + std::to_string(a) +
                               ", expected " + std::to_string(e));
      }
      continue;
    }
    const double error = std::fabs(a - e);
    max_error = std::max(max_error, error);
    const bool ok = floating ? error <= atol + rtol * std::fabs(e)
                    : (actual.dtype() == DType::kI64 || actual.dtype() == DType::kU64)
                        ? actual.GetAsInt64(i) == expected.GetAsInt64(i)
                        : a == e;
    if (!ok) {
      return InvalidArgument("output '" + name + "' element " + std::to_string(i) + ": got " + std::to_string(a) +
                             ", expected " + std::to_string(e) + " (abs error " + std::to_string(error) + ")");
    }
  }
  return max_error;
}

// Compare for any value: sequences element by element, empty optionals by form, strings exactly.
Result<double> CompareValues(const Tensor& actual, const Tensor& expected, const std::string& name, double rtol,
                             double atol) {
  if (actual.form() != expected.form() || actual.dtype() != expected.dtype()) {
    return InvalidArgument("output '" + name + "' is " + DescribeTensor(actual) + ", expected " +
                           DescribeTensor(expected));
  }
  if (expected.is_none()) return 0.0;
  if (expected.is_sequence()) {
    const auto& a = actual.elements();
    const auto& e = expected.elements();
    if (a.size() != e.size()) {
      return InvalidArgument("output '" + name + "' has " + std::to_string(a.size()) + " elements, expected " +
                             std::to_string(e.size()));
    }
    double max_error = 0;
    for (size_t k = 0; k < e.size(); ++k) {
      ASSIGN_OR_RETURN(const double error, CompareValues(a[k], e[k], name + "[" + std::to_string(k) + "]", rtol, atol));
      max_error = std::max(max_error, error);
    }
    return max_error;
  }
  if (expected.dtype() != DType::kString) return Compare(actual, expected, name, rtol, atol);
  if (actual.shape() != expected.shape()) {
    return InvalidArgument("output '" + name + "' is " + DescribeTensor(actual) + ", expected " +
                           DescribeTensor(expected));
  }
  for (int64_t i = 0; i < expected.numel(); ++i) {
    if (actual.data<std::string>()[i] != expected.data<std::string>()[i]) {
      return InvalidArgument("output '" + name + "' element " + std::to_string(i) + ": got \"" +
                             actual.data<std::string>()[i] + "\", expected \"" + expected.data<std::string>()[i] +
                             "\"");
    }
  }
  return 0.0;
}

// A random output: dtype and shape as expected, finite where the expected values are, inside the
// expected values' range widened by half its span, and integral where they all are (Bernoulli's 0/1).
Status CompareByProperty(const Tensor& actual, const Tensor& expected, const std::string& name) {
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    return InvalidArgument("output '" + name + "' is " + DescribeTensor(actual) + ", expected " +
                           DescribeTensor(expected));
  }
  double lo = INFINITY, hi = -INFINITY;
  bool integral = true;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const double e = expected.GetAsDouble(i);
    if (!std::isfinite(e)) continue;
    lo = std::min(lo, e);
    hi = std::max(hi, e);
    integral &= e == std::floor(e);
  }
  if (lo > hi) return Status();
  const double margin = (hi - lo) * 0.5;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double a = actual.GetAsDouble(i);
    if (!std::isfinite(a) || a < lo - margin || a > hi + margin || (integral && a != std::floor(a))) {
      return InvalidArgument("output '" + name + "' element " + std::to_string(i) + ": " + std::to_string(a) +
                             " is outside what the expected values allow ([" + std::to_string(lo) + ", " +
                             std::to_string(hi) + "]" + (integral ? ", integral" : "") + ")");
    }
  }
  return Status();
}

ConformanceCase RunCase(const fs::path& dir, const std::string& suite, const ConformanceOptions& options) {
  ConformanceCase result;
  result.name = dir.filename().string();
  result.suite = suite;
  auto finish = [&](Outcome outcome, const Status& status) {
    result.outcome = outcome;
    result.detail = status.message();
    return result;
  };
  auto classify = [&](const Status& status) {
    return finish(status.code() == StatusCode::kUnsupported ? Outcome::kUnsupported : Outcome::kFail, status);
  };
  // Parsed once; checked and shape-inferred below, once per distinct set of input shapes.
  auto loaded = LoadOnnxModel(dir / "model.onnx", {.run_checker = false, .infer_shapes = false});
  if (!loaded.ok()) return classify(loaded.status());
  std::set<std::string> ops;
  for (const auto& node : loaded->proto.graph().node()) ops.insert(node.op_type());
  for (const std::string& op : ops) result.ops += (result.ops.empty() ? "" : ",") + op;
  // Dropout with a training_mode input drops at random too.
  const bool random = std::any_of(ops.begin(), ops.end(), IsRandomOp) ||
                      std::any_of(loaded->proto.graph().node().begin(), loaded->proto.graph().node().end(),
                                  [](const onnx::NodeProto& n) {
                                    return n.op_type() == "Dropout" && n.input_size() > 2 && !n.input(2).empty();
                                  });

  // The data decides the input shapes (some cases declare other dims than their data has), so
  // each data set is compiled with its own shapes, as a user's --shape would bind them.
  std::map<std::string, Shape> compiled_shapes;
  std::unique_ptr<CompiledModel> compiled;
  std::vector<ValueDesc> outputs_desc;
  std::set<std::string> initializer_names;
  for (const auto& init : loaded->proto.graph().initializer()) initializer_names.insert(init.name());
  std::vector<std::string> input_names;
  std::vector<ValueDesc> input_descs;
  for (const auto& in : loaded->proto.graph().input()) {
    if (initializer_names.contains(in.name())) continue;
    input_names.push_back(in.name());
    input_descs.push_back(ValueDescFromOnnx(in));
  }
  std::vector<ValueDesc> declared_outputs;
  for (const auto& out : loaded->proto.graph().output()) declared_outputs.push_back(ValueDescFromOnnx(out));
  for (const fs::path& set_dir : SortedEntries(dir, "test_data_set_")) {
    const auto input_files = SortedEntries(set_dir, "input_");
    if (input_files.size() < input_names.size()) {
      return finish(Outcome::kFail, InvalidArgument(set_dir.string() + " has " + std::to_string(input_files.size()) +
                                                    " inputs, the model " + std::to_string(input_names.size())));
    }
    std::map<std::string, Tensor> inputs;
    std::map<std::string, Shape> shapes;
    for (size_t i = 0; i < input_names.size(); ++i) {
      auto tensor = ReadValueProtoFile(input_files[i], input_descs[i]);
      if (!tensor.ok()) return classify(tensor.status());
      // Sequences and empty optionals have no shape to bind.
      if (tensor->is_dense() && !input_descs[i].sequence) shapes[input_names[i]] = tensor->shape();
      inputs[input_names[i]] = std::move(tensor).value();
    }
    if (!compiled || shapes != compiled_shapes) {
      OnnxLoadOptions load_options;
      load_options.input_shapes = shapes;
      load_options.override_declared_shapes = true;
      auto bound = CheckOnnxModel(loaded->proto, (dir / "model.onnx").string(), load_options);
      if (!bound.ok()) return classify(bound.status());
      auto graph = ImportModel(*bound, {.require_static_inputs = false});
      if (!graph.ok()) return classify(graph.status());
      for (const auto* list : {&graph->inputs, &graph->outputs}) {
        for (const ValueDesc& v : *list) {
          if (v.dtype == DType::kUndefined) {
            return finish(Outcome::kUnsupported,
                          Unsupported("value '" + v.name + "' has no element type chipfit supports"));
          }
        }
      }
      // The test data stores bfloat16 tensors as uint16 bit patterns (numpy has no bfloat16).
      for (const ValueDesc& desc : graph->inputs) {
        Tensor& t = inputs[desc.name];
        if (desc.dtype == DType::kBF16 && t.dtype() == DType::kU16)
          t = Tensor::View(DType::kBF16, t.shape(), t.raw_data()).Clone();
      }
      auto model = options.compile ? options.compile(*graph, options.target, inputs) : Compile(*graph, options.target);
      if (!model.ok()) return classify(model.status());
      compiled = std::move(model).value();
      compiled_shapes = shapes;
      result.kernels = 0;
      result.device_kernels = 0;
      const std::string device = options.target.DeviceId();
      for (const KernelInfo& k : compiled->kernels()) {
        if (k.op_type == "Copy") continue;
        ++result.kernels;
        result.device_kernels += k.device == device && options.target.kind != DeviceKind::kReference ? 1 : 0;
      }
      result.fallbacks = compiled->fallbacks();
      outputs_desc = graph->outputs;
    }
    for (const ValueDesc& desc : compiled->inputs()) {
      Tensor& t = inputs[desc.name];
      if (desc.dtype == DType::kBF16 && t.dtype() == DType::kU16)
        t = Tensor::View(DType::kBF16, t.shape(), t.raw_data()).Clone();
    }
    auto outputs = compiled->Run(inputs);
    if (!outputs.ok()) return classify(outputs.status());
    const auto output_files = SortedEntries(set_dir, "output_");
    if (output_files.size() != outputs->size()) {
      return finish(Outcome::kFail, InvalidArgument("expected " + std::to_string(output_files.size()) +
                                                    " outputs, got " + std::to_string(outputs->size())));
    }
    for (size_t i = 0; i < output_files.size(); ++i) {
      auto expected =
          ReadValueProtoFile(output_files[i], i < declared_outputs.size() ? declared_outputs[i] : ValueDesc{});
      if (!expected.ok()) return classify(expected.status());
      if (!expected->is_dense() || !(*outputs)[i].is_dense() || expected->dtype() == DType::kString) {
        auto error = CompareValues((*outputs)[i], *expected, outputs_desc[i].name, options.rtol, options.atol);
        if (!error.ok()) return finish(Outcome::kFail, error.status());
        result.max_abs_error = std::max(result.max_abs_error, *error);
        continue;
      }
      if ((*outputs)[i].dtype() == DType::kBF16 && expected->dtype() == DType::kU16) {
        *expected = Tensor::View(DType::kBF16, expected->shape(), expected->raw_data()).Clone();
      }
      if (options.min_sqnr_db > 0 && IsFloatingDType(expected->dtype()) && (*outputs)[i].shape() == expected->shape() &&
          (*outputs)[i].dtype() == expected->dtype()) {
        const double sqnr = SqnrDb((*outputs)[i], *expected);
        result.min_sqnr_db = result.data_sets == 0 && i == 0 ? sqnr : std::min(result.min_sqnr_db, sqnr);
        if (sqnr < options.min_sqnr_db) {
          return finish(Outcome::kFail,
                        InvalidArgument("output '" + outputs_desc[i].name + "': SQNR " + std::to_string(sqnr) +
                                        " dB < " + std::to_string(options.min_sqnr_db) + " dB"));
        }
        continue;
      }
      if (random) {
        if (Status st = CompareByProperty((*outputs)[i], *expected, outputs_desc[i].name); !st.ok()) {
          return finish(Outcome::kFail, st);
        }
        result.detail = "random values: checked for dtype, shape and range, not value by value";
        continue;
      }
      auto error = Compare((*outputs)[i], *expected, outputs_desc[i].name, options.rtol, options.atol);
      if (!error.ok()) return finish(Outcome::kFail, error.status());
      result.max_abs_error = std::max(result.max_abs_error, *error);
    }
    ++result.data_sets;
  }
  result.outcome = Outcome::kPass;
  return result;
}

}  // namespace

std::vector<fs::path> DefaultConformanceSuites() {
  std::vector<fs::path> suites;
  for (const char* name : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    fs::path dir = fs::path("/usr/share/libonnx-testdata/data") / name;
    std::error_code ec;
    if (fs::is_directory(dir, ec)) suites.push_back(dir);
  }
  return suites;
}

const char* OutcomeName(ConformanceCase::Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass: return "pass";
    case Outcome::kFail: return "fail";
    case Outcome::kUnsupported: return "unsupported";
  }
  return "?";
}

Result<std::vector<ConformanceCase>> RunConformance(const ConformanceOptions& options,
                                                    const std::function<void(const ConformanceCase&)>& on_case) {
  std::vector<ConformanceCase> cases;
  for (const fs::path& suite : options.suites) {
    std::error_code ec;
    if (!fs::is_directory(suite, ec))
      return NotFound("conformance suite folder '" + suite.string() + "' does not exist");
    for (const fs::path& dir : SortedEntries(suite, "test_")) {
      if (!options.filter.empty() && dir.filename().string().find(options.filter) == std::string::npos) continue;
      if (!fs::exists(dir / "model.onnx")) continue;
      cases.push_back(RunCase(dir, suite.filename().string(), options));
      if (on_case) on_case(cases.back());
    }
  }
  return cases;
}

std::vector<OpCoverage> ReferenceOpCoverage() {
  std::map<std::pair<std::string, std::string>, const OpVersion*> versions;
  for (const OpVersion& v : ReferenceOpVersions()) versions.emplace(std::make_pair(v.op_type, v.domain), &v);
  std::vector<OpCoverage> rows;
  for (const OpEntry& entry : ReferenceOps()) {
    OpCoverage row;
    row.op_type = entry.op_type;
    row.domain = entry.domain;
    auto it = versions.find({row.op_type, row.domain});
    if (it == versions.end()) {
      row.refuses = "no version record in core/reference/op_versions.cpp";
    } else {
      row.onnx_version = it->second->onnx_version;
      row.implemented_version = it->second->implemented_version;
      row.refuses = it->second->refuses;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace chipfit
