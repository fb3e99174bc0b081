// The energy model: coefficient table loading, per-layer estimates and scaling to a measured total.
#include "profilers/energy/energy_model.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace chipfit {
namespace {

using nlohmann::json;

// {"value": <pJ>, "source": "<text>"}; a coefficient without its source is refused, so the table
// cannot grow figures nobody can trace.
Result<EnergyCoefficient> ParseCoefficient(const json& node, const std::string& where) {
  if (!node.is_object() || !node.contains("value") || !node.contains("source")) {
    return ParseError(where + ": expected {\"value\": pJ, \"source\": text}");
  }
  const json& value = node.at("value");
  const json& source = node.at("source");
  if (!value.is_number() || !source.is_string() || source.get<std::string>().empty()) {
    return ParseError(where + ": value must be a number and source a non-empty string");
  }
  const double pj = value.get<double>();
  if (!std::isfinite(pj) || pj < 0) return ParseError(where + ": value must be finite and non-negative");
  return EnergyCoefficient{pj, source.get<std::string>()};
}

Result<const json*> Member(const json& node, const std::string& key, const std::string& where) {
  if (!node.is_object() || !node.contains(key)) return ParseError(where + ": missing \"" + key + "\"");
  return &node.at(key);
}

DeviceKind TableKind(DeviceKind kind) { return kind == DeviceKind::kReference ? DeviceKind::kCpu : kind; }

}  // namespace

const std::vector<DeviceKind>& EnergyModel::TableKinds() {
  static const std::vector<DeviceKind> kinds = {DeviceKind::kCpu, DeviceKind::kOpenCL, DeviceKind::kCuda};
  return kinds;
}

const std::vector<Precision>& EnergyModel::TablePrecisions() {
  static const std::vector<Precision> precisions = {Precision::kFp32, Precision::kFp16, Precision::kBf16,
                                                    Precision::kInt8};
  return precisions;
}

const OpEnergy& EnergyModel::Ops(DeviceKind kind, Precision precision) const {
  if (precision == Precision::kTf32) precision = Precision::kFp32;
  return ops_.at({TableKind(kind), precision});
}

const MemoryEnergy& EnergyModel::Memory(DeviceKind kind) const { return memory_.at(TableKind(kind)); }

const EnergyCoefficient& EnergyModel::StaticWattsPerUnit(DeviceKind kind) const {
  return static_watts_.at(TableKind(kind));
}

Result<EnergyModel> ParseEnergyModel(const std::string& json_text, const std::string& origin) {
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::exception& e) {
    return ParseError(origin + ": " + e.what());
  }
  EnergyModel model;
  model.origin_ = origin;
  ASSIGN_OR_RETURN(const json* devices, Member(doc, "devices", origin));
  for (DeviceKind kind : EnergyModel::TableKinds()) {
    const std::string kind_name(DeviceKindName(kind));
    const std::string where = origin + ": devices." + kind_name;
    ASSIGN_OR_RETURN(const json* device, Member(*devices, kind_name, origin + ": devices"));
    ASSIGN_OR_RETURN(const json* memory, Member(*device, "memory", where));
    ASSIGN_OR_RETURN(const json* dram, Member(*memory, "dram_pj_per_32bit", where + ".memory"));
    ASSIGN_OR_RETURN(const json* sram, Member(*memory, "sram_pj_per_32bit", where + ".memory"));
    ASSIGN_OR_RETURN(EnergyCoefficient dram_word, ParseCoefficient(*dram, where + ".memory.dram_pj_per_32bit"));
    ASSIGN_OR_RETURN(EnergyCoefficient sram_word, ParseCoefficient(*sram, where + ".memory.sram_pj_per_32bit"));
    // Layers count bytes; the literature quotes 32-bit words.
    dram_word.pj /= 4;
    sram_word.pj /= 4;
    model.memory_[kind] = MemoryEnergy{dram_word, sram_word};
    ASSIGN_OR_RETURN(const json* static_power, Member(*device, "static_power", where));
    ASSIGN_OR_RETURN(const json* watts, Member(*static_power, "watts_per_unit", where + ".static_power"));
    ASSIGN_OR_RETURN(model.static_watts_[kind], ParseCoefficient(*watts, where + ".static_power.watts_per_unit"));

    ASSIGN_OR_RETURN(const json* precisions, Member(*device, "precisions", where));
    for (Precision precision : EnergyModel::TablePrecisions()) {
      const std::string precision_name(PrecisionName(precision));
      const std::string pwhere = where + ".precisions." + precision_name;
      ASSIGN_OR_RETURN(const json* entry, Member(*precisions, precision_name, where + ".precisions"));
      ASSIGN_OR_RETURN(const json* mult, Member(*entry, "mult_pj", pwhere));
      ASSIGN_OR_RETURN(const json* add, Member(*entry, "add_pj", pwhere));
      ASSIGN_OR_RETURN(EnergyCoefficient mult_pj, ParseCoefficient(*mult, pwhere + ".mult_pj"));
      ASSIGN_OR_RETURN(EnergyCoefficient add_pj, ParseCoefficient(*add, pwhere + ".add_pj"));
      model.ops_[{kind, precision}] = OpEnergy{mult_pj, add_pj};
    }
  }
  return model;
}

Result<EnergyModel> LoadEnergyModel(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("energy coefficients " + path + " cannot be opened");
  std::stringstream text;
  text << in.rdbuf();
  return ParseEnergyModel(text.str(), path);
}

double EstimateJoules(const EnergyModel& model, DeviceKind kind, Precision precision, int64_t flops, int64_t bytes_read,
                      int64_t bytes_written) {
  const OpEnergy& ops = model.Ops(kind, precision);
  const MemoryEnergy& memory = model.Memory(kind);
  const double per_flop_pj = 0.5 * (ops.mult.pj + ops.add.pj);
  const double pj = static_cast<double>(flops) * per_flop_pj +
                    static_cast<double>(bytes_read + bytes_written) * memory.dram_per_byte.pj;
  return pj * 1e-12;
}

Result<double> ScaleToMeasured(std::vector<double>& layer_joules, double measured_total) {
  if (!std::isfinite(measured_total) || measured_total < 0) {
    return InvalidArgument("measured energy " + std::to_string(measured_total) + " J cannot be attributed");
  }
  double model_total = 0;
  for (double j : layer_joules) {
    if (!std::isfinite(j) || j < 0) return InvalidArgument("a layer's estimated energy is negative or not finite");
    model_total += j;
  }
  if (!(model_total > 0)) {
    return InvalidArgument("the layers' estimated energy sums to zero; the measured total cannot be shared out");
  }
  const double factor = measured_total / model_total;
  for (double& j : layer_joules) j *= factor;
  return model_total;
}

EnergyEstimate AttributeEnergy(std::vector<double> layer_joules, std::optional<double> measured_total,
                               std::string* note) {
  EnergyEstimate estimate;
  double model_total = 0;
  for (double j : layer_joules) model_total += j;
  estimate.model_total = {model_total, "estimated"};
  std::string source = "estimated";
  if (measured_total) {
    Result<double> scaled = ScaleToMeasured(layer_joules, *measured_total);
    if (scaled.ok()) {
      source = "estimated:scaled";
    } else if (note) {
      *note = "per-layer energy not scaled to the measurement: " + scaled.status().message();
    }
  }
  estimate.layers.reserve(layer_joules.size());
  for (double j : layer_joules) estimate.layers.push_back({j, source});
  return estimate;
}

}  // namespace chipfit
