#include "core/text.h"

#include <algorithm>

namespace tr::core {

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    if (end == std::string_view::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
}

bool IsDigits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

namespace {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      const size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitution});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string ClosestSpelling(std::string_view word,
                            const std::vector<std::string_view>& candidates) {
  std::string_view best;
  size_t best_distance = 3;  // suggest only close spellings
  if (word.size() > 64) return "";
  for (std::string_view candidate : candidates) {
    // A known word and a prefix of it ("maxParallel", "kubeletVersion") count as close.
    const bool prefix = (word.size() >= 4 && candidate.starts_with(word)) ||
                        (candidate.size() >= 4 && word.starts_with(candidate));
    const size_t d = prefix ? 1 : EditDistance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return std::string(best);
}

}  // namespace tr::core
