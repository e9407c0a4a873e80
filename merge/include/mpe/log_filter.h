// What a filter file leaves out of a log (`mpe run --log --filter FILE`, MPE_LOG_FILTER): the one
// parser and the one set of matching rules, shared by liblog, liblive and `mpe cut`. No MPI.
//
// One rule a line; `#` starts a comment. Rules:
//   exclude routine GLOB...   leave these routines' states out (fnmatch globs: MPI_Iprobe, MPI_Test*)
//   include routine GLOB...   take them back; routine rules apply in order, the last that matches wins
//   exclude site FILE:LINE    leave out the calls made at that line (FILE: the file's name or a path
//                             suffix of it)
//   exclude site FUNC-GLOB    leave out the calls made from functions matching the glob (any frame
//                             of the call site, so MPE_CALLSITE_DEPTH=N reaches through wrappers)
//   only ranks LIST           record on these ranks only: 0-3,8,16-63:4 (A-B:K every K-th, A- open)
//   only pcontrol LEVELS      record only while the last MPI_Pcontrol level is one of these (1,2);
//                             logging starts at level 1 (the MPI standard's default level);
//                             without the rule, any level but 0 records
//   drop messages             a left-out call's message records go too; by default they are kept,
//                             so that messages are never broken by a filter
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mpe/frame.h"
#include "mpe/status.h"

namespace mpe::format {

// A set of ranks (or Pcontrol levels): "0-3,8,16-63:4". Default-constructed: every one.
class RankSet {
 public:
  static StatusOr<RankSet> parse(std::string_view text);
  bool contains(int64_t rank) const;
  bool every_rank() const { return ranges_.empty(); }
  // The largest rank the list names (-1 for every rank; an open range names its first).
  int64_t largest_named() const;

 private:
  struct Range {
    int64_t first, last, step;  // last: INT64_MAX for an open end
  };
  std::vector<Range> ranges_;
};

class LogFilter {
 public:
  // Errors name the origin and line: "filter.txt:3: unknown rule 'exclud routine'".
  static StatusOr<LogFilter> parse(std::string_view text, std::string_view origin);
  static StatusOr<LogFilter> read(const std::string& path);

  // The rules, one a line, without comments: what a log records as its filter.
  const std::string& text() const { return text_; }
  bool empty() const { return text_.empty(); }

  // Whether a routine's (or user category's) state is left out, by name.
  bool excludes_routine(std::string_view name) const;
  // Whether calls from this call site (frames innermost first) are left out.
  bool excludes_site(const std::vector<Frame>& frames) const;
  bool has_site_rules() const { return !sites_.empty(); }
  bool has_routine_rules() const { return !routines_.empty(); }
  bool records_rank(int64_t rank) const { return ranks_.contains(rank); }
  bool has_rank_rule() const { return !ranks_.every_rank(); }
  // Whether logging is on after MPI_Pcontrol(level).
  bool records_at_level(int level) const;
  bool has_pcontrol_rule() const { return !levels_.every_rank(); }
  bool drops_messages() const { return drop_messages_; }

 private:
  struct RoutineRule {
    bool exclude;
    std::vector<std::string> globs;
  };
  struct SiteRule {
    std::string file;  // FILE:LINE, or empty for a function glob
    int line = 0;
    std::string function_glob;
  };
  Status add_rule(std::string_view line);

  std::string text_;
  std::vector<RoutineRule> routines_;
  std::vector<SiteRule> sites_;
  RankSet ranks_;
  RankSet levels_;  // only pcontrol: the same list syntax as ranks
  bool drop_messages_ = false;
};

}  // namespace mpe::format
