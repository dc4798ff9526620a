# -DTRAINFIT_FUZZ=ON (clang only): every target is compiled with libFuzzer's coverage
# hooks and ASan + UBSan, and tests/fuzz adds one fuzz target per parser
# (tests/fuzz/README.md). Included before lib/ so that the library is instrumented too.
option(TRAINFIT_FUZZ "Build the libFuzzer targets (clang; tests/fuzz)" OFF)
if(TRAINFIT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TRAINFIT_FUZZ needs clang (CC=clang CXX=clang++), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
