// Prepended to every chipfit OpenCL program (OpenCL C 1.2). Float tensors are read and written
// through LOADF/STOREF so one kernel source serves fp32 (float buffers) and fp16 (half buffers):
// CF_HALF_STORAGE stores half through vload_half/vstore_half, which core OpenCL C 1.2 has on every
// device, and computes in float; CF_NATIVE_HALF (only where the device has cl_khr_fp16) also makes
// real_t half for elementwise arithmetic. Accumulations (GEMM, reductions) always use float.
#ifdef CF_NATIVE_HALF
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif

#ifdef CF_HALF_STORAGE
typedef half store_t;
#define LOADF(p, i) vload_half((i), (p))
#define STOREF(p, i, v) vstore_half_rte((float)(v), (i), (p))
#else
typedef float store_t;
#define LOADF(p, i) ((p)[i])
#define STOREF(p, i, v) ((p)[i] = (float)(v))
#endif

#ifdef CF_NATIVE_HALF
typedef half real_t;
#else
typedef float real_t;
#endif
