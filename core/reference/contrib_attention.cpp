// Reference kernels of ONNX Runtime's contrib attention ops.
#include "core/reference/ops.h"

namespace chipfit {

std::vector<OpEntry> ContribAttentionOps() { return {}; }

}  // namespace chipfit
