// Reference DFT, STFT, Hann/Hamming/BlackmanWindow, MelWeightMatrix.
#include "core/reference/ops.h"

namespace chipfit {

std::vector<OpEntry> SignalOps() { return {}; }

}  // namespace chipfit
