// Bounds of integer graph inputs that index a table (token ids into an embedding): seeded random inputs
// stay inside them, so a language model profiles without data instead of failing on an id past its table.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "core/graph/graph.h"
#include "core/tensor/tensor.h"

namespace chipfit {

// Graph input name → the number of rows it may index: the rows of a constant table a Gather reads with it
// (directly or through Cast/Reshape/Squeeze/Unsqueeze/Flatten/Identity), the embedding tables and mask of
// com.microsoft::EmbedLayerNormalization. Inputs that index nothing are absent.
std::map<std::string, int64_t> InputIndexBounds(const Graph& graph);

// Folds each bounded integer input of `sample` into [0, bound): seeded values are small non-negative
// integers, so the fold keeps them varied. Other inputs are left as they are.
void BoundIndexInputs(const std::map<std::string, int64_t>& bounds, std::map<std::string, Tensor>& sample);

// A decoder's length inputs made to agree with the seeded cache and tokens, as a generation loop feeds them:
// com.microsoft::GroupQueryAttention's seqlens_k (past + new − 1 per batch row) and total_sequence_length
// (past + new), and RotaryEmbedding's position_ids (past … past + new − 1), where they are graph inputs.
// The past length is dim 2 of the graph input GQA reads as past_key (0 without one), the new tokens dim 1 of
// the token-id input (one that InputIndexBounds bounds); nothing changes when there is none. Inputs named in
// `given` (the user's own arrays) are read but never written (a Tensor copy shares its data).
void SeedSequenceLengths(const Graph& graph, std::map<std::string, Tensor>& sample,
                         const std::set<std::string>& given = {});

}  // namespace chipfit
