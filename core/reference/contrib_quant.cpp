// Reference kernels of ONNX Runtime's contrib quantized ops.
#include "core/reference/ops.h"

namespace chipfit {

std::vector<OpEntry> ContribQuantOps() { return {}; }

}  // namespace chipfit
