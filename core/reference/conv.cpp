// Reference kernels: ConvOps (being written).
#include "core/reference/ops.h"

namespace chipfit {

std::vector<OpEntry> ConvOps() { return {}; }

}  // namespace chipfit
