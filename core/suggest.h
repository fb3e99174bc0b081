// "Did you mean …?": the known name nearest to a misspelt one (CLI flags and subcommands, manifest keys).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace chipfit {

// Levenshtein distance, case-sensitive.
size_t EditDistance(const std::string& a, const std::string& b);

// The candidate nearest to `word`, when it is near enough to be what the user meant: at most a third
// of the word's length in edits (at least 1, at most 3), a candidate that starts with `word` or that
// `word` starts with, or one `word` abbreviates ("--iters" → "--iterations"). Leading dashes are
// ignored. Ties: the first candidate.
std::optional<std::string> NearestName(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace chipfit
