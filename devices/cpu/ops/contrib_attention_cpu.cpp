// ONNX Runtime's contrib attention operators on the CPU (kernel_groups.h).
#include "devices/cpu/ops/kernel_groups.h"

namespace chipfit::cpu {

void AddContribAttentionKernels(KernelTable& /*t*/) {}

}  // namespace chipfit::cpu
