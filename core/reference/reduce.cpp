// Reference kernels: ReduceOps (being written).
#include "core/reference/ops.h"

namespace chipfit {

std::vector<OpEntry> ReduceOps() { return {}; }

}  // namespace chipfit
