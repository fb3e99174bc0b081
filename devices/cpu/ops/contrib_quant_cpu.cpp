// ONNX Runtime's contrib quant operators on the CPU (kernel_groups.h).
#include "devices/cpu/ops/kernel_groups.h"

namespace chipfit::cpu {

void AddContribQuantKernels(KernelTable& /*t*/) {}

}  // namespace chipfit::cpu
