// slurm.conf as slurmctld reads it from disk: each `Include FILE` line replaced by FILE's text,
// read the same way (src/common/parse_config.c at slurm-22-05-8-1, _parse_include_directive:
// "Include" in any case at the line's start, FILE relative to the including file's directory,
// %c standing for the ClusterName set before it). Sites keep their NodeName= and PartitionName=
// lines in included files: without them a partition's nodes, GPUs and Default=YES go unseen.
#include <cctype>

#include "slurm_conf_lines.h"
#include "trainfit/admission.h"
#include "trainfit/util/file.h"
#include "trainfit/util/text.h"

namespace trainfit::admission {
namespace {

constexpr int kMaxIncludeDepth = 16;                      // a loop of Includes stops here
constexpr size_t kMaxSlurmConfTotalBytes = 16 * kMaxConfBytes;  // every file read, together

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// The file an "Include FILE" line names ("" when the line is not one), %c replaced.
std::string included_path(const std::string& raw_line, const std::string& cluster) {
  std::string line = raw_line.substr(0, raw_line.find('#'));
  line = trim(line);
  constexpr size_t kWord = 7;  // "include"
  if (line.size() <= kWord || lower(line.substr(0, kWord)) != "include" ||
      !std::isspace(static_cast<unsigned char>(line[kWord]))) {
    return "";
  }
  std::string path = trim(line.substr(kWord));
  for (size_t at = path.find("%c"); at != std::string::npos; at = path.find("%c", at + cluster.size())) {
    path.replace(at, 2, cluster);
  }
  return path;
}

Result<bool> append_file(const std::string& path, int depth, std::string* cluster, std::string* out,
                         std::vector<std::string>* files_read) {
  if (depth > kMaxIncludeDepth) {
    return make_error(ErrorCode::kInvalidValue, "Include", path + ": Include nested deeper than " +
                                                               std::to_string(kMaxIncludeDepth) + " files");
  }
  Result<std::string> text = read_regular_file(path, kMaxConfBytes);
  if (!text) return text.error();
  if (files_read != nullptr) files_read->push_back(path);
  for (const std::string& line : split(text.value(), '\n')) {
    for (const auto& [key, value] : words_of(line.substr(0, line.find('#')))) {
      if (key == "clustername") *cluster = lower(value);  // Slurm keeps ClusterName in lower case
    }
    std::string included = included_path(line, *cluster);
    if (included.empty()) {
      out->append(line).push_back('\n');
    } else {
      if (included.front() != '/') included = directory_of(path) + "/" + included;
      Result<bool> appended = append_file(included, depth + 1, cluster, out, files_read);
      if (!appended) return appended;
    }
    if (out->size() > kMaxSlurmConfTotalBytes) {
      return make_error(ErrorCode::kInvalidValue, "Include", path + ": slurm.conf with its Includes is over " +
                                                                 std::to_string(kMaxSlurmConfTotalBytes) + " bytes");
    }
  }
  return true;
}

}  // namespace

Result<std::string> slurm_conf_text(const std::string& path, std::vector<std::string>* files_read) {
  std::string out, cluster;
  Result<bool> read = append_file(path, 0, &cluster, &out, files_read);
  if (!read) return read.error();
  return out;
}

}  // namespace trainfit::admission
