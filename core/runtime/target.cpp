// Target names and parsing.
#include "core/runtime/target.h"

#include <array>
#include <charconv>
#include <utility>
#include <vector>

namespace chipfit {
namespace {

constexpr std::array<std::pair<DeviceKind, std::string_view>, 4> kKinds = {{
    {DeviceKind::kReference, "ref"},
    {DeviceKind::kCpu, "cpu"},
    {DeviceKind::kOpenCL, "opencl"},
    {DeviceKind::kCuda, "cuda"},
}};
constexpr std::array<std::pair<Precision, std::string_view>, 5> kPrecisions = {{
    {Precision::kFp32, "fp32"},
    {Precision::kTf32, "tf32"},
    {Precision::kFp16, "fp16"},
    {Precision::kBf16, "bf16"},
    {Precision::kInt8, "int8"},
}};

bool Indexed(DeviceKind kind) { return kind == DeviceKind::kOpenCL || kind == DeviceKind::kCuda; }

std::vector<std::string_view> SplitColons(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = text.find(':', start);
    parts.push_back(text.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

}  // namespace

std::string_view DeviceKindName(DeviceKind kind) {
  for (const auto& [k, name] : kKinds) {
    if (k == kind) return name;
  }
  return "?";
}

std::string_view PrecisionName(Precision precision) {
  for (const auto& [p, name] : kPrecisions) {
    if (p == precision) return name;
  }
  return "?";
}

std::optional<DeviceKind> ParseDeviceKind(std::string_view text) {
  for (const auto& [k, name] : kKinds) {
    if (name == text) return k;
  }
  return std::nullopt;
}

std::optional<Precision> ParsePrecision(std::string_view text) {
  for (const auto& [p, name] : kPrecisions) {
    if (name == text) return p;
  }
  return std::nullopt;
}

std::string Target::DeviceId() const {
  std::string id(DeviceKindName(kind));
  if (Indexed(kind)) id += ":" + std::to_string(index);
  return id;
}

std::string Target::ToString() const { return DeviceId() + ":" + std::string(PrecisionName(precision)); }

Result<Target> ParseTarget(std::string_view text) {
  const std::string quoted = "target '" + std::string(text) + "'";
  std::vector<std::string_view> parts = SplitColons(text);
  Target target;
  auto kind = ParseDeviceKind(parts[0]);
  if (!kind) {
    return InvalidArgument(quoted + ": unknown device '" + std::string(parts[0]) +
                           "' (expected ref, cpu, opencl or cuda)");
  }
  target.kind = *kind;
  size_t next = 1;
  if (Indexed(target.kind) && parts.size() == 3) {
    const std::string_view index = parts[1];
    auto [ptr, ec] = std::from_chars(index.data(), index.data() + index.size(), target.index);
    if (ec != std::errc() || ptr != index.data() + index.size() || target.index < 0) {
      return InvalidArgument(quoted + ": device index '" + std::string(index) + "' is not a number");
    }
    next = 2;
  }
  if (parts.size() > next + 1) {
    return InvalidArgument(quoted + ": too many ':' parts (expected device[:index]:precision)");
  }
  if (parts.size() == next) {
    if (target.kind != DeviceKind::kReference) {
      return InvalidArgument(quoted + ": missing precision (e.g. " + target.DeviceId() + ":fp32)");
    }
    return target;
  }
  auto precision = ParsePrecision(parts[next]);
  if (!precision) {
    return InvalidArgument(quoted + ": unknown precision '" + std::string(parts[next]) +
                           "' (expected fp32, tf32, fp16, bf16 or int8)");
  }
  target.precision = *precision;
  return target;
}

}  // namespace chipfit
