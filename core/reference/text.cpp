// Reference TfIdfVectorizer (integer n-grams; string inputs need string tensors, which chipfit lacks).
#include "core/reference/ops.h"

namespace chipfit {

std::vector<OpEntry> TextOps() { return {}; }

}  // namespace chipfit
