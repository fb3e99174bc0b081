// KernelTable lookups.
#include "core/runtime/kernel_table.h"

namespace chipfit {

void KernelTable::Add(const std::string& op_type, const std::string& domain, DeviceKind device, Precision precision,
                      KernelImpl impl) {
  impls_[{op_type, domain, device, precision}].push_back(impl);
}

const std::vector<KernelImpl>& KernelTable::Find(const std::string& op_type, const std::string& domain,
                                                 DeviceKind device, Precision precision) const {
  static const std::vector<KernelImpl> kNone;
  auto it = impls_.find({op_type, domain, device, precision});
  return it == impls_.end() ? kNone : it->second;
}

}  // namespace chipfit
