// Reference Einsum, Det.
#include "core/reference/ops.h"

namespace chipfit {

std::vector<OpEntry> LinalgOps() { return {}; }

}  // namespace chipfit
