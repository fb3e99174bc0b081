// CompileForTarget: kernel table per device kind.
#include "devices/target_compiler.h"

#include "devices/cpu/cpu_kernels.h"

namespace chipfit {

const KernelTable* KernelsFor(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu: return &CpuKernels();
    default: return nullptr;
  }
}

Result<std::unique_ptr<CompiledModel>> CompileForTarget(const Graph& graph, const Target& target,
                                                        CompileOptions options) {
  options.kernels = KernelsFor(target.kind);
  return Compile(graph, target, options);
}

}  // namespace chipfit
