// Per-kernel cost from op formulas: FLOPs (multiply and add counted separately, so a MAC is 2) and
// bytes each kernel reads and writes at its executed dtypes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/runtime/kernel.h"

namespace chipfit {

struct KernelCost {
  int64_t flops = 0;
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  bool known = true;  // false when shapes are only known at run time
  // The first output's shape at compile time (the projection reads a matrix layer's M × N from it);
  // empty when unknown.
  std::vector<int64_t> output_shape{};
};

// A gather (Gather, GatherElements, GatherND) reads the rows it selects, not its whole data input:
// an embedding table of 94 MB gathered into 128 rows reads 0.4 MB. Given the bytes counted for the
// data input, takes all but the output's worth of them back out of `cost.bytes_read` (after
// bytes_written is set); other ops are left as they are.
void CountGatheredReads(const std::string& op, int64_t data_bytes, KernelCost& cost);

// Conv 2·N·Cout·Hout·Wout·(Cin/g)·kh·kw (+ bias), MatMul 2·M·N·K, Gemm 2·M·N·K (+ M·N for C),
// pooling out·window, elementwise one op per output element (transcendental ones included),
// normalisations a few ops per element, data movement 0.
KernelCost EstimateCost(const Node& node, const std::vector<const ValueInfo*>& inputs,
                        const std::vector<ValueInfo>& outputs);

}  // namespace chipfit
