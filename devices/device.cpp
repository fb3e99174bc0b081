// DeviceInfo helpers.
#include "devices/device.h"

namespace chipfit {

Support DeviceInfo::SupportFor(Precision precision) const {
  for (const auto& entry : precisions) {
    if (entry.precision == precision) return entry.support;
  }
  return Support::No(std::string(PrecisionName(precision)) + " is not offered on " + Id());
}

}  // namespace chipfit
