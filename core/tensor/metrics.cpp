// SqnrDb.
#include "core/tensor/metrics.h"

#include <cmath>

namespace chipfit {

double SqnrDb(const Tensor& actual, const Tensor& reference) {
  if (actual.shape() != reference.shape()) return -200.0;
  double signal = 0, noise = 0;
  for (int64_t i = 0; i < reference.numel(); ++i) {
    const double a = actual.GetAsDouble(i), r = reference.GetAsDouble(i);
    if (!std::isfinite(r) || !std::isfinite(a)) {
      if (!(a == r || (std::isnan(a) && std::isnan(r)))) return -200.0;
      continue;
    }
    signal += r * r;
    noise += (a - r) * (a - r);
  }
  if (noise == 0) return 200.0;
  return signal == 0 ? -200.0 : 10.0 * std::log10(signal / noise);
}

}  // namespace chipfit
