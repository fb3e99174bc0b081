// Target = device kind (+ index) + precision, written "cpu:fp32", "opencl:0:fp16", "ref:fp32".
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace chipfit {

enum class DeviceKind { kReference, kCpu, kOpenCL, kCuda };
enum class Precision { kFp32, kTf32, kFp16, kBf16, kInt8 };

std::string_view DeviceKindName(DeviceKind kind);     // "ref", "cpu", "opencl", "cuda"
std::string_view PrecisionName(Precision precision);  // "fp32", "tf32", "fp16", "bf16", "int8"
std::optional<DeviceKind> ParseDeviceKind(std::string_view text);
std::optional<Precision> ParsePrecision(std::string_view text);

struct Target {
  DeviceKind kind = DeviceKind::kReference;
  int index = 0;  // which device of that kind; always 0 for ref and cpu
  Precision precision = Precision::kFp32;

  // Canonical spelling: "cpu:fp32", "opencl:0:fp16"; ref and cpu carry no index.
  std::string ToString() const;
  // Device part alone: "cpu", "opencl:0".
  std::string DeviceId() const;
  auto operator<=>(const Target&) const = default;
};

// Accepts "cpu:int8", "opencl:fp16" (index 0), "opencl:1:fp32", "ref" (fp32); errors name the bad part.
Result<Target> ParseTarget(std::string_view text);

}  // namespace chipfit
