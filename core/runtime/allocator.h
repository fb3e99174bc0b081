// The process's allocator policy for running models: freed memory kept for the next run.
#pragma once

#include <malloc.h>

namespace chipfit {

// Tells glibc's malloc to keep freed memory in the process instead of returning it to the system after each
// run: the outputs of kernels whose shapes are known only at run time are allocated on every run, and a fresh
// mapping costs a page fault per 4 KiB (and the kernel's zeroing) each time. Blocks up to 32 MiB (glibc's
// largest mmap threshold) come from the heap, which is trimmed only past 1 GiB of free memory at its top and
// grows 256 MiB at a time. Measured on Faster R-CNN (MobileNetV3-FPN 320, cpu:fp32, `chipfit profile`, 2-core
// AMD EPYC Zen 4), whose box pooling writes several [150, 256, 7, 7] tensors per run: p50 83.2 -> 62.3 ms;
// any one of the three settings alone gave 75-78 ms. Call once at the start of main (the CLI, the GUI, the
// benchmark); the cost is that the process keeps its peak memory until it exits.
inline void KeepFreedMemoryForReuse() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 256 << 20);
}

}  // namespace chipfit
