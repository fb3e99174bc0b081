// Reference LSTM, GRU, RNN.
#include "core/reference/ops.h"

namespace chipfit {

std::vector<OpEntry> RecurrentOps() { return {}; }

}  // namespace chipfit
