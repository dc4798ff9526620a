// `trainfit --help-man SECTION`: roff for the parts of the man pages whose source is a
// table in the code (man/gen_man.sh assembles the pages at build time).
#pragma once

namespace trainfit::cli {

// llm-options: the SPANK plugin's --llm-* options (admission::llm_options()), as .TP
// entries for spank_trainfit(8); request-groups: the captions of the request options'
// groups, one a line, which trainfit(1) lists once. Exit 0, or 2 for an unknown section.
int run_help_man(int argc, char** argv);

}  // namespace trainfit::cli
