// The number formats that the run charts and the reports share: three significant digits, units
// scaled to the value, no exponent for the ranges a profile holds.
#pragma once

#include <optional>
#include <string>

namespace chipfit::formats {

// A measured value, or nullopt where it is not finite: the profile JSON writes NaN and infinity as
// null, so charts and reports show a dash for them, as they did when they read that JSON.
std::optional<double> Finite(double value);

// Three significant digits, no exponent for the ranges a profile holds.
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
// 45.69 → "45.7 dB"; the kExactSqnrDb sentinel of identical tensors (200 dB) → "exact".
std::string FormatSqnr(double db);

}  // namespace chipfit::formats
