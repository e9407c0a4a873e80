#include "mpe/log_filter.h"

#include <fnmatch.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>

#include "mpe/file_io.h"

namespace mpe::format {

namespace {

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool parse_int(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && *out >= 0;
}

bool glob_matches(const std::string& glob, std::string_view name) {
  return fnmatch(glob.c_str(), std::string(name).c_str(), 0) == 0;
}

// "FILE" names a frame's file when it is the whole path or a suffix of it after a '/'.
bool file_matches(std::string_view want, std::string_view path) {
  if (path.size() < want.size() || path.substr(path.size() - want.size()) != want) return false;
  return path.size() == want.size() || path[path.size() - want.size() - 1] == '/';
}

Status bad(std::string_view what) { return Status(StatusCode::kInvalidArgument, std::string(what)); }

}  // namespace

StatusOr<RankSet> RankSet::parse(std::string_view text) {
  RankSet set;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(start, comma - start);
    start = comma + 1;
    if (item.empty()) {
      if (comma == text.size()) break;
      return bad("empty item in the rank list '" + std::string(text) + "'");
    }
    Range r{0, 0, 1};
    if (const size_t colon = item.find(':'); colon != std::string_view::npos) {
      if (!parse_int(item.substr(colon + 1), &r.step) || r.step == 0)
        return bad("bad step in '" + std::string(item) + "' (A-B:K, K at least 1)");
      item = item.substr(0, colon);
    }
    const size_t dash = item.find('-');
    const bool ok = dash == std::string_view::npos
                        ? parse_int(item, &r.first) && (r.last = r.first, true)
                        : parse_int(item.substr(0, dash), &r.first) &&
                              (dash + 1 == item.size() ? (r.last = std::numeric_limits<int64_t>::max(), true)
                                                       : parse_int(item.substr(dash + 1), &r.last));
    if (!ok || r.last < r.first)
      return bad("bad rank range '" + std::string(item) + "' (ranks: 0-3,8,16-63:4)");
    set.ranges_.push_back(r);
  }
  if (set.ranges_.empty()) return bad("an empty rank list");
  return set;
}

bool RankSet::contains(int64_t rank) const {
  if (ranges_.empty()) return true;
  for (const Range& r : ranges_)
    if (rank >= r.first && rank <= r.last && (rank - r.first) % r.step == 0) return true;
  return false;
}

int64_t RankSet::largest_named() const {
  int64_t most = -1;
  for (const Range& r : ranges_)
    most = std::max(most, r.last == std::numeric_limits<int64_t>::max() ? r.first : r.last);
  return most;
}

Status LogFilter::add_rule(std::string_view line) {
  const std::vector<std::string_view> w = words(line);
  const auto rest = [&](size_t from) { return std::vector<std::string_view>(w.begin() + from, w.end()); };
  if (w.size() >= 3 && (w[0] == "exclude" || w[0] == "include") && w[1] == "routine") {
    RoutineRule rule{w[0] == "exclude", {}};
    for (std::string_view g : rest(2)) rule.globs.emplace_back(g);
    routines_.push_back(std::move(rule));
    return Status();
  }
  if (w.size() == 3 && w[0] == "exclude" && w[1] == "site") {
    SiteRule rule;
    const size_t colon = w[2].rfind(':');
    int64_t line_no = 0;
    if (colon != std::string_view::npos && parse_int(w[2].substr(colon + 1), &line_no)) {
      if (colon == 0 || line_no <= 0 || line_no > std::numeric_limits<int>::max())
        return bad("a site is FILE:LINE with a line from 1, or a function glob");
      rule.file = std::string(w[2].substr(0, colon));
      rule.line = static_cast<int>(line_no);
    } else {
      rule.function_glob = std::string(w[2]);
    }
    sites_.push_back(std::move(rule));
    return Status();
  }
  if (w.size() == 3 && w[0] == "only" && w[1] == "ranks") {
    StatusOr<RankSet> set = RankSet::parse(w[2]);
    if (!set.ok()) return set.status();
    ranks_ = std::move(*set);
    return Status();
  }
  if (w.size() == 3 && w[0] == "only" && w[1] == "pcontrol") {
    StatusOr<RankSet> levels = RankSet::parse(w[2]);  // "1,2" or "1-3": the rank list's syntax
    if (!levels.ok()) return bad("bad Pcontrol levels '" + std::string(w[2]) + "' (levels: 1,2 or 1-3)");
    levels_ = std::move(*levels);
    return Status();
  }
  if (w.size() == 2 && w[0] == "drop" && w[1] == "messages") {
    drop_messages_ = true;
    return Status();
  }
  return bad("unknown rule '" + std::string(line) +
             "' (rules: exclude|include routine GLOB..., exclude site FILE:LINE|FUNCTION, only ranks LIST, "
             "only pcontrol LEVELS, drop messages)");
}

StatusOr<LogFilter> LogFilter::parse(std::string_view text, std::string_view origin) {
  LogFilter f;
  int line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
      line.remove_suffix(1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty()) continue;
    if (Status s = f.add_rule(line); !s.ok())
      return Status(StatusCode::kInvalidArgument,
                    std::string(origin) + ":" + std::to_string(line_no) + ": " + s.message());
    f.text_ += std::string(line) + "\n";
  }
  return f;
}

StatusOr<LogFilter> LogFilter::read(const std::string& path) {
  StatusOr<std::string> text = io::read_file(path);
  if (!text.ok()) return text.status();
  return parse(*text, path);
}

bool LogFilter::excludes_routine(std::string_view name) const {
  bool excluded = false;
  for (const RoutineRule& rule : routines_)
    for (const std::string& glob : rule.globs)
      if (glob_matches(glob, name)) {
        excluded = rule.exclude;
        break;
      }
  return excluded;
}

bool LogFilter::excludes_site(const std::vector<Frame>& frames) const {
  for (const SiteRule& rule : sites_)
    for (const Frame& f : frames) {
      if (rule.function_glob.empty() ? f.line == rule.line && file_matches(rule.file, f.file)
                                     : glob_matches(rule.function_glob, f.function))
        return true;
    }
  return false;
}

bool LogFilter::records_at_level(int level) const {
  return levels_.every_rank() ? level != 0 : levels_.contains(level);
}

}  // namespace mpe::format
