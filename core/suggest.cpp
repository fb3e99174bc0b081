// Edit distance by one row of the dynamic programme; nearest-name rules of suggest.h.
#include "core/suggest.h"

#include <algorithm>
#include <numeric>

namespace chipfit {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

namespace {

// `w` abbreviates `c`: the same first three letters, and every letter of `w` in `c` in order
// ("iters" of "iterations", "warm" of "warmup").
bool Abbreviates(const std::string& w, const std::string& c) {
  if (w.size() < 3 || c.size() <= w.size() || c.compare(0, 3, w, 0, 3) != 0) return false;
  size_t at = 0;
  for (char ch : w) {
    at = c.find(ch, at);
    if (at == std::string::npos) return false;
    ++at;
  }
  return true;
}

}  // namespace

std::optional<std::string> NearestName(const std::string& word, const std::vector<std::string>& candidates) {
  // Dashes are how flags start, not what tells them apart.
  auto bare = [](const std::string& s) { return s.substr(std::min(s.find_first_not_of('-'), s.size())); };
  const std::string w = bare(word);
  if (w.empty()) return std::nullopt;
  const size_t allowed = std::clamp<size_t>(w.size() / 3, 1, 3);
  std::optional<std::string> best;
  size_t best_distance = allowed + 1;
  for (const std::string& candidate : candidates) {
    const std::string c = bare(candidate);
    if (c.empty()) continue;
    const bool prefix = w.size() >= 3 && (c.rfind(w, 0) == 0 || w.rfind(c, 0) == 0);
    const size_t distance = prefix ? 0 : Abbreviates(w, c) ? 1 : EditDistance(w, c);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace chipfit
