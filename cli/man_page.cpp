#include "man_page.h"

#include <iostream>
#include <string>

#include "request_options.h"
#include "trainfit/admission.h"

namespace trainfit::cli {
namespace {

std::string roff(const std::string& text, bool flag) {
  std::string out;
  for (const char c : text) {
    if (c == '\\') out += "\\e";
    else if (c == '-' && flag) out += "\\-";
    else out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

}  // namespace

int run_help_man(int argc, char** argv) {
  const std::string section = argc > 1 ? argv[1] : "";
  if (section == "request-groups") {
    for (const std::string& group : request_option_groups()) std::cout << group << "\n";
    return 0;
  }
  if (section != "llm-options") {
    std::cerr << "trainfit: --help-man: unknown section '" << section << "'; accepted: llm-options|request-groups\n";
    return 2;
  }
  for (const admission::OptionSpec& o : admission::llm_options()) {
    std::cout << ".TP\n.B \\-\\-llm\\-" << roff(o.option, true);
    if (o.arginfo[0] != '\0') std::cout << "=\\fI" << roff(o.arginfo, false) << "\\fR";
    std::cout << "\n" << roff(o.usage, false);
    if (o.field[0] != '\0') std::cout << " (request field \\fB" << roff(o.field, false) << "\\fR)";
    std::cout << "\n";
  }
  return 0;
}

}  // namespace trainfit::cli
