// Reference kernels: MatMulOps (being written).
#include "core/reference/ops.h"

namespace chipfit {

std::vector<OpEntry> MatMulOps() { return {}; }

}  // namespace chipfit
