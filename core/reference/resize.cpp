// Reference kernels: ResizeOps (being written).
#include "core/reference/ops.h"

namespace chipfit {

std::vector<OpEntry> ResizeOps() { return {}; }

}  // namespace chipfit
