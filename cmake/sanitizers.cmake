# -DTRAINFIT_SANITIZE=ON: AddressSanitizer + UndefinedBehaviorSanitizer on everything built.
option(TRAINFIT_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
if(TRAINFIT_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# -DTRAINFIT_TSAN=ON: ThreadSanitizer (not combinable with the above): the audit writer, the
# catalog/policy watcher, concurrent decisions and the service's threads (scripts/test.sh).
option(TRAINFIT_TSAN "Build with ThreadSanitizer" OFF)
if(TRAINFIT_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
