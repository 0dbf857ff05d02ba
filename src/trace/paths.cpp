#include "trace/paths.hpp"

#include "trace/merge.hpp"

namespace hytask::trace {

namespace {

std::string replace_rank(const std::string& path, const std::string& with) {
  auto p = path.find("%r");
  return path.substr(0, p) + with + path.substr(p + 2);
}

}  // namespace

std::string rank_path(const std::string& path, int rank, int size) {
  const bool otf2 = format_of(path) == format::otf2;
  std::string p = otf2 ? path.substr(0, path.size() - 5) + ".json" : path;
  if (p.find("%r") != std::string::npos) return replace_rank(p, std::to_string(rank));
  if (size <= 1 && !otf2) return p;
  auto slash = p.find_last_of('/');
  auto dot = p.find_last_of('.');
  std::string suffix = ".rank" + std::to_string(rank);
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return p + suffix;
  return p.substr(0, dot) + suffix + p.substr(dot);
}

std::string job_path(const std::string& path) {
  return path.find("%r") != std::string::npos ? replace_rank(path, "all") : path;
}

bool merged(const std::string& path, int size) { return size > 1 || format_of(path) == format::otf2; }

}  // namespace hytask::trace
