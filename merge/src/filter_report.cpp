#include "mpe/filter_report.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace mpe::format {

namespace {

// "exclude routine MPI_Iprobe\nonly ranks 0-3\n" as "exclude routine MPI_Iprobe; only ranks 0-3".
std::string one_line(const std::string& rules) {
  std::string out;
  size_t start = 0;
  while (start < rules.size()) {
    size_t end = rules.find('\n', start);
    if (end == std::string::npos) end = rules.size();
    if (end > start) out += (out.empty() ? "" : "; ") + rules.substr(start, end - start);
    start = end + 1;
  }
  return out;
}

std::string left_out_list(const FilterReport& r, size_t most) {
  std::string out;
  for (size_t i = 0; i < r.left_out.size() && i < most; ++i)
    out += (i ? ", " : "") + r.left_out[i].first + " " + std::to_string(r.left_out[i].second);
  if (r.left_out.size() > most) out += ", ...";
  return out;
}

}  // namespace

FilterReport filter_report(const Definitions& d) {
  FilterReport r;
  std::unordered_map<uint32_t, const std::string*> names;
  for (const Category& c : d.categories) names.emplace(c.id, &c.name);
  std::map<std::string, uint64_t> calls;
  for (const RankMeta& m : d.ranks) {
    if (m.filter.empty()) continue;
    ++r.ranks_filtered;
    if (std::find(r.filters.begin(), r.filters.end(), m.filter) == r.filters.end())
      r.filters.push_back(m.filter);
    for (const LeftOut& l : m.left_out) {
      const auto it = names.find(l.category);
      calls[it != names.end() ? *it->second : "category " + std::to_string(l.category)] += l.calls;
      r.calls_left_out += l.calls;
    }
  }
  r.left_out.assign(calls.begin(), calls.end());
  std::stable_sort(r.left_out.begin(), r.left_out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return r;
}

std::string filter_lines(const FilterReport& r, int indent) {
  if (!r.any()) return {};
  const auto label = [indent](const char* name) {
    std::string s = name;
    s.resize(static_cast<size_t>(std::max<int>(indent, static_cast<int>(s.size()) + 1)), ' ');
    return s;
  };
  std::string out;
  for (const std::string& f : r.filters)
    out += label("filter:") + one_line(f) + " (on " + std::to_string(r.ranks_filtered) + " ranks)\n";
  out += label("left out:") + std::to_string(r.calls_left_out) + " calls" +
         (r.left_out.empty() ? std::string() : ": " + left_out_list(r, 8)) +
         " (their states are not in the log)\n";
  return out;
}

std::string filter_note(const FilterReport& r) {
  if (!r.any()) return {};
  std::string rules;
  for (const std::string& f : r.filters) rules += (rules.empty() ? "" : " | ") + one_line(f);
  return "filtered (" + rules + "): " + std::to_string(r.calls_left_out) + " calls left out" +
         (r.left_out.empty() ? std::string() : " (" + left_out_list(r, 3) + ")");
}

}  // namespace mpe::format
