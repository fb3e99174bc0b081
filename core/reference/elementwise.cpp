// Reference kernels: ElementwiseOps (being written).
#include "core/reference/ops.h"

namespace chipfit {

std::vector<OpEntry> ElementwiseOps() { return {}; }

}  // namespace chipfit
