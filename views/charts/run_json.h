// Reading the profile JSON (chipfit.profile/1) without exceptions, and the number formats that charts
// and reports share.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace chipfit::runjson {

// Drift SQNR of identical values: the profiler writes this sentinel instead of infinity.
inline constexpr double kExactSqnrDb = 200.0;

// The member `key` of an object, or nullptr when `j` is not an object, has no such member or it is null.
// A report must render whatever a (possibly older, possibly hand-edited) run holds, so nothing here
// throws on a missing field or a wrong type.
const nlohmann::json* Field(const nlohmann::json& j, const char* key);
std::optional<double> Number(const nlohmann::json& j, const char* key);
// The same for an object that may be absent (a Field result).
std::optional<double> Number(const nlohmann::json* j, const char* key);
std::string String(const nlohmann::json& j, const char* key, const std::string& fallback = {});
std::optional<bool> Bool(const nlohmann::json& j, const char* key);
// The array at `key`, or an empty array.
const nlohmann::json& Array(const nlohmann::json& j, const char* key);
// A nested number: Number(Field(j, a), b), e.g. NumberAt(target, "latency_ms", "p50").
std::optional<double> NumberAt(const nlohmann::json& j, const char* a, const char* b);

// The entries of run["targets"], in the order the run lists them (non-objects skipped).
std::vector<const nlohmann::json*> Targets(const nlohmann::json& run);
bool TargetOk(const nlohmann::json& target);
// "cpu:int8" → "int8"; "opencl:0:fp16" → "fp16".
std::string TargetPrecision(const std::string& target);
// The device id of a target entry: target["device"]["id"], else the target name less its precision.
std::string TargetDevice(const nlohmann::json& target);

// Number formats: three significant digits, no exponent for the ranges a profile holds.
std::string FormatSig(double value, int digits = 3);
// Whole numbers (counts, seeds, ids): 1658 → "1658".
std::string FormatInt(double value);
// At most `digits` significant digits, trailing zeros dropped: 0.1 → "0.1", 848.459 → "848.5".
std::string FormatShort(double value, int digits = 4);
// 0.0177 → "17.7 µs", 3.2 → "3.20 ms", 1532 → "1.53 s".
std::string FormatDuration(double ms);
// 458752 → "459 k" (SI, for FLOPs).
std::string FormatSi(double value);
// 51304 → "50.1 KiB".
std::string FormatBytes(double bytes);
// 2.78e-5 J → "27.8 µJ".
std::string FormatEnergy(double joules);
// 45.69 → "45.7 dB"; the 200 dB sentinel → "exact".
std::string FormatSqnr(double db);

}  // namespace chipfit::runjson
