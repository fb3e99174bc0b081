// Ops the CPU device leaves to the reference kernels on purpose, each with the reason a user reads
// in the fallback list (instead of "no kernel"): random sampling and the ops of sequence and optional
// values, which live on the host.
#include <string>
#include <utility>
#include <vector>

#include "devices/cpu/ops/kernel_groups.h"

namespace chipfit::cpu {
namespace {

// A table entry that never runs: its refusal is the stated reason.
template <const char* const* kReason>
Result<std::unique_ptr<IKernel>> Refuse(const KernelInit& /*init*/) {
  return Unsupported(*kReason);
}

constexpr const char* kRandom =
    "random sampling runs on the reference kernels, so that a seed gives the same values on every target and drift "
    "compares like with like";
constexpr const char* kSequence =
    "sequence and optional values live on the host; their ops run on the reference kernels (the tensors they hold "
    "are not copied to a device)";

}  // namespace

void AddReferenceOnlyReasons(KernelTable& t) {
  const std::vector<std::pair<const char*, Result<std::unique_ptr<IKernel>> (*)(const KernelInit&)>> ops = {
      {"Bernoulli", Refuse<&kRandom>},
      {"RandomUniform", Refuse<&kRandom>},
      {"RandomUniformLike", Refuse<&kRandom>},
      {"RandomNormal", Refuse<&kRandom>},
      {"RandomNormalLike", Refuse<&kRandom>},
      {"Multinomial", Refuse<&kRandom>},
      {"SequenceEmpty", Refuse<&kSequence>},
      {"SequenceConstruct", Refuse<&kSequence>},
      {"SequenceInsert", Refuse<&kSequence>},
      {"SequenceAt", Refuse<&kSequence>},
      {"SequenceErase", Refuse<&kSequence>},
      {"SequenceLength", Refuse<&kSequence>},
      {"SplitToSequence", Refuse<&kSequence>},
      {"ConcatFromSequence", Refuse<&kSequence>},
      {"SequenceMap", Refuse<&kSequence>},
      {"Optional", Refuse<&kSequence>},
      {"OptionalHasElement", Refuse<&kSequence>},
      {"OptionalGetElement", Refuse<&kSequence>},
  };
  for (const auto& [op, refuse] : ops) t.Add(op, "", DeviceKind::kCpu, Precision::kFp32, {"cpu:none", refuse});
}

}  // namespace chipfit::cpu
