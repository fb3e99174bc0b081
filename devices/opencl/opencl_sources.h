// The OpenCL C sources (devices/opencl/common.cl and ops/*.cl), embedded at build time.
#pragma once

#include <string_view>

namespace chipfit::ocl {

// The source of the .cl file with this stem ("common", "eltwise"); empty when there is none.
std::string_view ClProgramSource(std::string_view stem);

}  // namespace chipfit::ocl
