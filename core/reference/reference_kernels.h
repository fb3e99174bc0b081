// The reference op table: shape function + naive kernel for every op chipfit knows.
#pragma once

#include <string>
#include <vector>

#include "core/runtime/kernel.h"

namespace chipfit {

const std::vector<OpEntry>& ReferenceOps();
// nullptr when chipfit has no reference kernel for the op (domain "" or "ai.onnx" is the default).
const OpEntry* FindReferenceOp(const std::string& op_type, const std::string& domain);

// Ops whose values come from a random stream (random_ops.cpp): never folded at compile time, and checked
// by property, not value, against the ONNX suite (numpy's stream cannot be reproduced).
bool IsRandomOp(const std::string& op_type);

}  // namespace chipfit
