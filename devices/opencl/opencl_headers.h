// The one place the Khronos C++ bindings are configured: OpenCL 3.0 API, no exceptions.
#pragma once

#define CL_HPP_TARGET_OPENCL_VERSION 300
// 110, not 120: the 2023.02.06 opencl.hpp (Debian 12) defines detail::getContextPlatformVersion only
// below 120 but calls it for every minimum below 200, so 120 does not compile.
#define CL_HPP_MINIMUM_OPENCL_VERSION 110
#include <CL/opencl.hpp>
