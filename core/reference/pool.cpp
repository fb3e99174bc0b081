// Reference kernels: PoolOps (being written).
#include "core/reference/ops.h"

namespace chipfit {

std::vector<OpEntry> PoolOps() { return {}; }

}  // namespace chipfit
