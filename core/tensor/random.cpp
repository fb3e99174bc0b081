// Seeded tensors for `run --seed`, calibration stand-ins and tests.
#include "core/tensor/random.h"

#include <type_traits>

namespace chipfit {

Tensor SeededTensor(DType dtype, const Shape& shape, uint64_t seed) {
  Tensor t(dtype, shape);
  SplitMix64 rng(seed);
  VisitDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, std::nullptr_t>) {
      T* data = t.data<T>();
      for (int64_t i = 0; i < t.numel(); ++i) {
        const double u = rng.Unit();
        if constexpr (std::is_same_v<T, bool>) {
          data[i] = u < 0.5;
        } else if constexpr (std::is_integral_v<T>) {
          data[i] = static_cast<T>(u * 10);
        } else {
          data[i] = static_cast<T>(static_cast<float>(2 * u - 1));
        }
      }
    }
    return 0;
  });
  return t;
}

}  // namespace chipfit
