// slurm.conf's line syntax, shared by the readers of its partitions and nodes
// (slurm_conf.cpp, slurm_nodes.cpp): src/common/parse_config.c's rules.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace trainfit::admission {

// Lines with their continuations (a trailing backslash) joined and "#" comments dropped.
std::vector<std::string> logical_lines(const std::string& text);
// "Key=Value" words of a line, keys lower-cased (Slurm's keys are case-insensitive), a
// quoted value with its spaces and without its quotes.
std::vector<std::pair<std::string, std::string>> words_of(const std::string& line);
// A hostlist's items: the commas outside brackets separate them ("n[1,2],m1" -> n[1,2] m1).
std::vector<std::string> hostlist_items(const std::string& expression);
// Hosts of a hostlist expression as src/common/hostlist.c expands it ("n[1-3,07],login1"
// -> n1 n2 n3 n07 login1, brackets multiplying: "r[1-2]n[1-2]" is 4), zero padding kept.
// Empty when it is not one this reader expands or when it names more than `most` hosts.
std::vector<std::string> expand_hostlist(const std::string& expression, size_t most);

}  // namespace trainfit::admission
