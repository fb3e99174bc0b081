// Precision mix of a target from its recorded kernels.
#include "profilers/precision_mix.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

namespace chipfit {

PrecisionMix ComputePrecisionMix(const TargetResult& result) {
  PrecisionMix mix;
  if ((result.status != "ok" && !result.partial) || result.layers.empty()) return mix;
  std::map<std::pair<std::string, std::string>, PrecisionShare> by_kind;
  bool any_flops = false;
  for (const LayerResult& layer : result.layers) {
    if (layer.precision.empty()) return PrecisionMix{};  // a run from before precisions were recorded
    any_flops = any_flops || layer.flops > 0;
  }
  for (const LayerResult& layer : result.layers) {
    PrecisionShare& share = by_kind[{layer.device, layer.precision}];
    share.device = layer.device;
    share.precision = layer.precision;
    ++share.kernels;
    share.time_ms += layer.time_p50_ms;
    if (layer.flops > 0 || !any_flops) share.compute_time_ms += layer.time_p50_ms;
  }
  const std::string device = result.target.DeviceId();
  const std::string precision(PrecisionName(result.target.precision));
  double compute = 0, own = 0;
  std::map<std::string, double> compute_by_precision;
  for (auto& [key, share] : by_kind) {
    mix.kernels += share.kernels;
    compute += share.compute_time_ms;
    compute_by_precision[share.precision] += share.compute_time_ms;
    if (share.device == device && share.precision == precision) {
      mix.own_kernels = share.kernels;
      own = share.compute_time_ms;
    }
    mix.shares.push_back(std::move(share));
  }
  std::stable_sort(mix.shares.begin(), mix.shares.end(),
                   [](const PrecisionShare& a, const PrecisionShare& b) { return a.time_ms > b.time_ms; });
  mix.own_time_share = compute > 0 ? own / compute : (mix.own_kernels == mix.kernels ? 1.0 : 0.0);
  if (result.target.precision != Precision::kFp32 && mix.own_time_share < kMinOwnPrecisionShare) {
    const auto most = std::max_element(compute_by_precision.begin(), compute_by_precision.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    if (most != compute_by_precision.end() && most->first != precision) mix.ran_as = device + ":" + most->first;
  }
  mix.text = fmt::format("{} {} of {} kernels, {:.0f} % of compute time", precision, mix.own_kernels, mix.kernels,
                         mix.own_time_share * 100);
  return mix;
}

}  // namespace chipfit
