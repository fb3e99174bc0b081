// The number formats shared by the run charts and the reports.
#include "views/charts/formats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "profilers/memory/ceilings.h"
#include "profilers/run_result.h"

namespace chipfit::formats {

std::optional<double> Finite(double value) {
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

std::string FormatSig(double value, int digits) {
  if (!std::isfinite(value)) return "–";
  if (value == 0) return "0";
  const double magnitude = std::floor(std::log10(std::fabs(value)));
  // Digits after the point so that `digits` significant ones show; never an exponent for the
  // values a profile holds (10^-9 … 10^15).
  const int decimals = std::max(0, digits - 1 - static_cast<int>(magnitude));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", std::min(decimals, 12), value);
  return buf;
}

std::string FormatInt(double value) {
  if (!std::isfinite(value)) return "–";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", value);
  return buf;
}

std::string FormatShort(double value, int digits) {
  std::string s = FormatSig(value, digits);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

namespace {

std::string Scaled(double value, const char* const* units, const double* scales, int count) {
  for (int i = 0; i < count; ++i) {
    if (std::fabs(value) >= scales[i] * 0.9995 || i == count - 1) {
      return FormatSig(value / scales[i]) + " " + units[i];
    }
  }
  return FormatSig(value);
}

}  // namespace

std::string FormatDuration(double ms) {
  static const char* const kUnits[] = {"s", "ms", "µs", "ns"};
  static const double kScales[] = {1e3, 1, 1e-3, 1e-6};
  if (ms == 0) return "0 ms";
  return Scaled(ms, kUnits, kScales, 4);
}

std::string FormatSi(double value) {
  static const char* const kUnits[] = {"T", "G", "M", "k", ""};
  static const double kScales[] = {1e12, 1e9, 1e6, 1e3, 1};
  if (value == 0) return "0";
  if (std::fabs(value) < 1000 && value == std::floor(value)) return FormatInt(value);
  std::string s = Scaled(value, kUnits, kScales, 5);
  if (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string FormatBytes(double bytes) {
  static const char* const kUnits[] = {"GiB", "MiB", "KiB", "B"};
  static const double kScales[] = {1024.0 * 1024 * 1024, 1024.0 * 1024, 1024.0, 1};
  if (bytes == 0) return "0 B";
  if (std::fabs(bytes) < 1024) return FormatInt(bytes) + " B";
  return Scaled(bytes, kUnits, kScales, 4);
}

std::string FormatEnergy(double joules) {
  static const char* const kUnits[] = {"J", "mJ", "µJ", "nJ", "pJ"};
  static const double kScales[] = {1, 1e-3, 1e-6, 1e-9, 1e-12};
  if (joules == 0) return "0 J";
  return Scaled(joules, kUnits, kScales, 5);
}

std::string FormatSqnr(double db) {
  if (db >= kExactSqnrDb) return "exact";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f dB", db);
  return buf;
}

RoundCounts CountRounds(const std::vector<TimingRound>& rounds) {
  RoundCounts counts;
  for (const TimingRound& r : rounds) ++(r.clean ? counts.clean : counts.dropped);
  return counts;
}

std::string FormatRounds(const std::vector<TimingRound>& rounds) {
  if (rounds.empty()) return {};
  const RoundCounts counts = CountRounds(rounds);
  return FormatInt(counts.clean) + " clean / " + FormatInt(counts.dropped) + " dropped";
}

std::string FormatAttribution(const TimeAttribution& a) {
  // Σ layers above end to end: each layer's time carries its timer's cost (and each median its own
  // slow runs), so the rest is an excess to name, not a negative time.
  if (a.unexplained_ms < 0) {
    return "Σ layers " + FormatDuration(a.attributed_ms) + " · above the " + FormatDuration(a.end_to_end_ms) +
           " end to end by " + FormatDuration(-a.unexplained_ms) + " (per-layer timing's own cost)";
  }
  return "Σ layers " + FormatDuration(a.attributed_ms) + " · between kernels " + FormatDuration(a.between_ms) +
         " · unexplained " + FormatDuration(a.unexplained_ms) + " of " + FormatDuration(a.end_to_end_ms) +
         " end to end";
}

std::string FormatCeilingConditions(const CeilingReport& c) {
  std::string text;
  if (c.threads > 0) text = FormatInt(c.threads) + (c.threads == 1 ? " thread" : " threads");
  if (c.MeasuredWhileBusy()) {
    if (!text.empty()) text += "; ";
    text +=
        "measured while busy (other processes used " + FormatSig(*c.other_cpu_share * 100, 2) + " % of the CPUs): low";
  }
  return text;
}

}  // namespace chipfit::formats
