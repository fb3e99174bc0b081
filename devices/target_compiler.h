// Compiling a model for a target with that device's kernels: the one place that knows which kernel
// table serves which device kind, and that calibrates before an int8 compile.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/runtime/compiled_model.h"

namespace chipfit {

// The kernel table of a device kind in this binary; nullptr for the reference and for devices
// without kernels yet (every node then falls back to the reference, each with its reason).
const KernelTable* KernelsFor(DeviceKind kind);

Result<std::unique_ptr<CompiledModel>> CompileForTarget(const Graph& graph, const Target& target,
                                                        CompileOptions options = {});

}  // namespace chipfit
