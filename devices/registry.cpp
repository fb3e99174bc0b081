// Discovery over all backends compiled into this binary, in a fixed order: cpu, opencl, cuda.
#include "devices/registry.h"

#include "devices/cpu/cpu_device.h"
#include "devices/opencl/opencl_device.h"
#ifdef CHIPFIT_HAVE_CUDA
#include "devices/cuda/cuda_device.h"
#endif

namespace chipfit {

DiscoveryReport DiscoverDevices() {
  DiscoveryReport report;
  DiscoverCpu(report);
  DiscoverOpenCL(report);
#ifdef CHIPFIT_HAVE_CUDA
  DiscoverCuda(report);
#else
  report.notes.push_back(
      "CUDA: not built into this chipfit (CHIPFIT_CUDA=OFF, or no CUDA toolkit when it was "
      "configured)");
#endif
  return report;
}

}  // namespace chipfit
