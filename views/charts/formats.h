// The number formats that the run charts and the reports share: three significant digits, units
// scaled to the value, no exponent for the ranges a profile holds.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace chipfit {
struct CeilingReport;
struct TimeAttribution;
struct TimingRound;
}  // namespace chipfit

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

// A target's interleaved timing slots (TargetResult::rounds): the clean ones its latency comes from,
// and those dropped because other processes took the CPUs.
struct RoundCounts {
  int clean = 0, dropped = 0;
};
RoundCounts CountRounds(const std::vector<TimingRound>& rounds);
// "8 clean / 2 dropped"; "" when the target was not timed in rounds (a run recorded before them).
std::string FormatRounds(const std::vector<TimingRound>& rounds);
// Where the end-to-end time goes, the one line every view prints: "Σ layers 6.70 ms · between kernels
// 300 µs · unexplained 100 µs of 7.10 ms end to end".
std::string FormatAttribution(const TimeAttribution& a);
// How a device's ceilings were measured, when it changes how to read them: "2 threads; measured while
// busy (other processes used 45 % of the CPUs): low"; "" when the report records neither.
std::string FormatCeilingConditions(const CeilingReport& c);

}  // namespace chipfit::formats
