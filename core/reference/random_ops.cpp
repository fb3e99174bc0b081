// Reference RandomUniform, RandomNormal (+Like), Bernoulli.
#include "core/reference/ops.h"

namespace chipfit {

std::vector<OpEntry> RandomOps() { return {}; }

}  // namespace chipfit
