// Reference kernels: ControlFlowOps (being written).
#include "core/reference/ops.h"

namespace chipfit {

std::vector<OpEntry> ControlFlowOps() { return {}; }

}  // namespace chipfit
