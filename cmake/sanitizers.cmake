# -DTRAINFIT_SANITIZE=ON: AddressSanitizer + UndefinedBehaviorSanitizer on everything built.
option(TRAINFIT_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
if(TRAINFIT_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
