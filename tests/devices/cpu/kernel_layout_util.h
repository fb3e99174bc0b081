// Creates a CPU kernel for a KernelCase the way placement does and reports the memory orders it
// asks for and writes, so tests can check that activations stay in the order they arrive in.
#pragma once

#include <vector>

#include "tests/devices/cpu/cpu_kernel_test_util.h"

namespace chipfit::testing {

struct KernelLayouts {
  std::vector<Layout> inputs;
  Layout output = Layout::kPlain;
};

inline Result<KernelLayouts> LayoutsOf(KernelFactory factory, const KernelCase& c) {
  std::vector<ValueInfo> infos(c.inputs.size());
  std::vector<const ValueInfo*> ptrs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i].defined()) {
      ptrs.push_back(nullptr);
      continue;
    }
    const bool constant = i < c.constant.size() && c.constant[i];
    const Layout layout = i < c.layouts.size() ? c.layouts[i] : Layout::kPlain;
    infos[i] = {c.inputs[i].dtype(), c.inputs[i].shape(), constant ? &c.inputs[i] : nullptr, layout};
    ptrs.push_back(&infos[i]);
  }
  ASSIGN_OR_RETURN(auto kernel, factory(KernelInit{c.node, ptrs, c.opset, c.precision, c.quant}));
  KernelLayouts layouts;
  for (size_t i = 0; i < c.inputs.size(); ++i) layouts.inputs.push_back(kernel->InputLayout(i));
  layouts.output = kernel->OutputLayout(0);
  return layouts;
}

// The refusal message of `factory` for `c`; empty (and a test failure) when it accepts.
inline std::string RefusalOf(KernelFactory factory, const KernelCase& c) {
  auto out = RunCpuKernel(factory, c);
  EXPECT_FALSE(out.ok()) << "the kernel accepted the case";
  if (out.ok()) return "";
  EXPECT_EQ(out.status().code(), StatusCode::kUnsupported) << out.status().ToString();
  return out.status().message();
}

}  // namespace chipfit::testing
