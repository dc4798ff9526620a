# Project warnings as an interface target, linked PRIVATE.
add_library(trainfit_warnings INTERFACE)
target_compile_options(trainfit_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                       -Wno-sign-conversion -Wnon-virtual-dtor)
