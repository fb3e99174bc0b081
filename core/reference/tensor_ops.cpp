// Reference kernels: TensorOps (being written).
#include "core/reference/ops.h"

namespace chipfit {

std::vector<OpEntry> TensorOps() { return {}; }

}  // namespace chipfit
