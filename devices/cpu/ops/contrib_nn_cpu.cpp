// ONNX Runtime's contrib nn operators on the CPU (kernel_groups.h).
#include "devices/cpu/ops/kernel_groups.h"

namespace chipfit::cpu {

void AddContribNnKernels(KernelTable& /*t*/) {}

}  // namespace chipfit::cpu
