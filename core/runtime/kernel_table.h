// The kernel table: {op, domain, device kind, precision} → implementations, best first. Each
// device fills it from its one explicit list (devices/<dev>/<dev>_kernels.cpp); the reference
// kernel is always the implicit last entry, so a node every device refuses still runs, and the
// refusals are recorded as the fallback's reason.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/runtime/kernel.h"
#include "core/runtime/target.h"

namespace chipfit {

class KernelTable {
 public:
  // Appends: implementations added first are tried first.
  void Add(const std::string& op_type, const std::string& domain, DeviceKind device, Precision precision,
           KernelImpl impl);
  // The implementations for this key, best first; empty when the device has none.
  const std::vector<KernelImpl>& Find(const std::string& op_type, const std::string& domain, DeviceKind device,
                                      Precision precision) const;

 private:
  using Key = std::tuple<std::string, std::string, DeviceKind, Precision>;
  std::map<Key, std::vector<KernelImpl>> impls_;
};

}  // namespace chipfit
