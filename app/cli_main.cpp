// chipfit: the headless front end. Parses flags, calls core and devices, prints; nothing else.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "CLI/CLI.hpp"
#include "chipfit/version.h"
#include "core/graph/model_summary.h"
#include "core/graph/onnx_loader.h"
#include "devices/device_json.h"
#include "devices/registry.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace chipfit {
namespace {

// Exit codes of DESIGN.md §7.
constexpr int kExitOk = 0;
constexpr int kExitInputError = 2;

int Fail(const Status& status) {
  fmt::print(stderr, "chipfit: error: {}\n", status.message());
  return kExitInputError;
}

std::string HumanBytes(uint64_t bytes) {
  if (bytes >= (1ull << 30)) return fmt::format("{:.1f} GiB", bytes / double(1ull << 30));
  if (bytes >= (1ull << 20)) return fmt::format("{:.1f} MiB", bytes / double(1ull << 20));
  if (bytes >= (1ull << 10)) return fmt::format("{:.1f} KiB", bytes / double(1ull << 10));
  return fmt::format("{} B", bytes);
}

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

void PrintDevice(const DeviceInfo& info) {
  fmt::print("{}  {}\n", info.Id(), info.name);
  auto row = [](std::string_view key, const std::string& value) {
    if (!value.empty()) fmt::print("    {:<18} {}\n", key, value);
  };
  row("vendor", info.vendor);
  row("compute units", info.compute_units ? std::to_string(info.compute_units) : "");
  row("memory", info.memory_bytes ? HumanBytes(info.memory_bytes) : "");
  row("runtime", info.runtime_version);
  row("driver", info.driver_version);
  row("features", Join(info.features, " "));
  for (const auto& [key, value] : info.properties) {
    if (key != "extensions") row(key, value);
  }
  for (const auto& p : info.precisions) {
    const std::string target = Target{info.kind, info.index, p.precision}.ToString();
    if (p.support.ok) {
      row("target", p.support.reason.empty() ? target : fmt::format("{}  ({})", target, p.support.reason));
    } else {
      row("unsupported", fmt::format("{}  ({})", target, p.support.reason));
    }
  }
}

int RunDevices(bool json) {
  DiscoveryReport report = DiscoverDevices();
  if (json) {
    std::cout << DiscoveryToJson(report).dump(2) << "\n";
    return kExitOk;
  }
  for (const auto& device : report.devices) {
    PrintDevice(device->info());
    fmt::print("\n");
  }
  for (const auto& note : report.notes) fmt::print("note: {}\n", note);
  return kExitOk;
}

void PrintSummary(const ModelSummary& s) {
  fmt::print("model        {}\n", s.path);
  fmt::print("format       ONNX IR {}, opset {}{}\n", s.ir_version, s.default_opset,
             s.producer.empty() ? "" : ", produced by " + s.producer);
  for (const TensorSpec& in : s.inputs) fmt::print("input        {}  {}  {}\n", in.name, in.dtype, FormatDims(in));
  for (const TensorSpec& out : s.outputs) {
    fmt::print("output       {}  {}  {}\n", out.name, out.dtype, FormatDims(out));
  }
  std::vector<std::string> ops;
  for (const auto& [op, count] : s.op_histogram) ops.push_back(fmt::format("{} {}", op, count));
  fmt::print("nodes        {}: {}\n", s.node_count, Join(ops, ", "));
  fmt::print("parameters   {} ({}) in {} initializers{}\n", s.parameter_count, HumanBytes(s.parameter_bytes),
             s.initializer_count,
             s.constant_node_count ? fmt::format(" and {} Constant nodes", s.constant_node_count) : "");
  for (const auto& note : s.notes) fmt::print("note         {}\n", note);
}

int RunInspect(const std::string& path, bool json) {
  auto model = LoadOnnxModel(path);
  if (!model.ok()) return Fail(model.status());
  const ModelSummary summary = Summarize(*model);
  if (json) {
    std::cout << nlohmann::json{{"schema", "chipfit.inspect/1"}, {"model", SummaryToJson(summary)}}.dump(2) << "\n";
  } else {
    PrintSummary(summary);
  }
  return kExitOk;
}

int Main(int argc, char** argv) {
  CLI::App app{"chipfit: profile ONNX models on every device and precision of this machine, and pick a target."};
  app.name("chipfit");
  app.set_version_flag("--version", std::string("chipfit ") + CHIPFIT_VERSION + " (" + CHIPFIT_GIT_REVISION + ")");
  app.require_subcommand(1);

  bool json = false;
  auto* devices = app.add_subcommand("devices", "List the devices chipfit found and the targets each offers");
  devices->add_flag("--json", json, "Print JSON instead of text");

  std::string model_path;
  auto* inspect = app.add_subcommand("inspect", "Summarise an ONNX model: inputs, outputs, ops, parameters");
  inspect->add_option("MODEL", model_path, "Path to an .onnx file")->required();
  inspect->add_flag("--json", json, "Print JSON instead of text");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "chipfit: error: {}\nRun 'chipfit --help' for usage.\n", e.what());
    return kExitInputError;
  }

  if (devices->parsed()) return RunDevices(json);
  if (inspect->parsed()) return RunInspect(model_path, json);
  return kExitInputError;
}

}  // namespace
}  // namespace chipfit

int main(int argc, char** argv) {
  try {
    return chipfit::Main(argc, argv);
  } catch (const std::exception& e) {
    // Core reports errors as Status; an exception here is a library failure nobody converted.
    fmt::print(stderr, "chipfit: internal error: {}\n", e.what());
    return 2;
  }
}
