# Where Slurm loads plugins from, and which Slurm release the plugins are built against
# (plugin_version must equal it: docs/slurm.md). Sets, from the installed Slurm:
#   TRAINFIT_SLURM_VERSION         "22.05.8", from slurm/slurm_version.h
#   TRAINFIT_SLURM_PLUGIN_DIR_ABS  the directory the installed Slurm loads plugins from
#   TRAINFIT_SLURM_PLUGIN_DIR      (cache) the install destination of the plugins: relative to
#                                  CMAKE_INSTALL_PREFIX, as GNUInstallDirs' dirs are, or absolute
# Detection: pkg-config `slurm` when it names a plugin dir (variables plugindir or
# pkglibdir); else next to libslurm: <libdir>/slurm-wlm (Debian, multiarch) or <libdir>/slurm
# (RHEL, SchedMD's RPMs), whichever holds Slurm's own plugins.
# The default destination is that directory relative to Slurm's prefix (the parent of the
# include dir), so `cmake --install build --prefix /usr` puts the plugins where Slurm looks,
# and `--prefix /tmp/x` stays inside /tmp/x.
function(trainfit_detect_slurm include_dir)
  file(STRINGS "${include_dir}/slurm/slurm_version.h" number_line REGEX "^#define SLURM_VERSION_NUMBER ")
  string(REGEX REPLACE ".*SLURM_VERSION_NUMBER +(0x[0-9a-fA-F]+).*" "\\1" number "${number_line}")
  math(EXPR major "(${number} >> 16) & 255")
  math(EXPR minor "(${number} >> 8) & 255")
  math(EXPR micro "${number} & 255")
  if(minor LESS 10)
    set(minor "0${minor}")
  endif()
  set(TRAINFIT_SLURM_VERSION "${major}.${minor}.${micro}" PARENT_SCOPE)

  get_filename_component(slurm_prefix "${include_dir}" DIRECTORY)
  set(dir "")
  set(how "")
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    foreach(variable plugindir pkglibdir)
      execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --variable=${variable} slurm
                      OUTPUT_VARIABLE value OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
      if(rc EQUAL 0 AND NOT value STREQUAL "" AND IS_DIRECTORY "${value}")
        set(dir "${value}")
        set(how "pkg-config slurm, ${variable}")
        break()
      endif()
    endforeach()
  endif()
  if(dir STREQUAL "")
    find_library(TRAINFIT_LIBSLURM NAMES slurm HINTS "${slurm_prefix}/lib64" "${slurm_prefix}/lib")
    if(TRAINFIT_LIBSLURM)
      get_filename_component(libdir "${TRAINFIT_LIBSLURM}" DIRECTORY)
      foreach(candidate slurm-wlm slurm)
        file(GLOB own "${libdir}/${candidate}/auth_*.so" "${libdir}/${candidate}/select_*.so")
        if(own)
          set(dir "${libdir}/${candidate}")
          set(how "beside ${TRAINFIT_LIBSLURM}")
          break()
        endif()
      endforeach()
      if(dir STREQUAL "")  # libslurm without its plugins here (a build host): the distribution's name
        if(libdir MATCHES "/lib/[^/]+-linux-gnu[^/]*$")
          set(dir "${libdir}/slurm-wlm")
        else()
          set(dir "${libdir}/slurm")
        endif()
        set(how "guessed from ${TRAINFIT_LIBSLURM}; no Slurm plugins found there")
      endif()
    endif()
  endif()
  if(dir STREQUAL "")
    set(dir "${slurm_prefix}/lib/slurm")
    set(how "guessed: libslurm not found")
  endif()
  set(TRAINFIT_SLURM_PLUGIN_DIR_ABS "${dir}" PARENT_SCOPE)
  set(relative "${dir}")
  string(LENGTH "${slurm_prefix}/" length)
  string(SUBSTRING "${dir}" 0 ${length} head)
  if(head STREQUAL "${slurm_prefix}/")
    string(SUBSTRING "${dir}" ${length} -1 relative)
  endif()
  set(TRAINFIT_SLURM_PLUGIN_DIR "${relative}" CACHE STRING
      "Install destination of the Slurm plugins: relative to CMAKE_INSTALL_PREFIX, or absolute (detected: ${dir})")
  if(IS_ABSOLUTE "${TRAINFIT_SLURM_PLUGIN_DIR}")
    set(destination "${TRAINFIT_SLURM_PLUGIN_DIR}")
  else()
    set(destination "${CMAKE_INSTALL_PREFIX}/${TRAINFIT_SLURM_PLUGIN_DIR}")
  endif()
  message(STATUS "trainfit: Slurm ${major}.${minor}.${micro}; its plugin dir: ${dir} (${how}); "
                 "plugins install to ${destination} (TRAINFIT_SLURM_PLUGIN_DIR=${TRAINFIT_SLURM_PLUGIN_DIR})")
  if(NOT destination STREQUAL dir)
    message(STATUS "trainfit: note: Slurm will not find the plugins there unless installed with --prefix ${slurm_prefix} "
                   "or TRAINFIT_SLURM_PLUGIN_DIR=${dir}")
  endif()
endfunction()
