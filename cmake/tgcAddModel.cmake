# tgc_add_model(<target> SOURCE <file.pt2|file.trace|file.mlir>
#               [TRAIN] [STATIC] [TARGET cpu] [NAME <c-identifier>]
#               [OPTIONS <tgc flags>...])
#
# Compiles SOURCE with `tgc compile` at build time into <name>.so, <name>.h and
# <name>.json in ${CMAKE_CURRENT_BINARY_DIR}/tgc_models/<target>/, and makes <target> an
# imported shared library for it: `target_link_libraries(app PRIVATE <target>)` links the
# model and puts <name>.h (and the DLPack header it includes) on app's include path.
#
#   TRAIN    a trainable model (`--train`: forward and backward entries).
#   STATIC   an archive, <name>.a (`--emit=static`), instead of <name>.so: <target> is an
#            imported static library that brings in tgc::runtime, the runtime every
#            static model of the program shares.
#   TARGET   what to generate code for; `cpu` (the default) is the one this tgc has.
#   NAME     the C identifier of the model's API (<name>_create); default <target>.
#   OPTIONS  further `tgc compile` flags (`--cpu x86-64-v3`, `--activation-budget N`, ...).
#
# The compile reruns when SOURCE, the tgc binary or the runtime it links changes (tgc
# writes a depfile, `--depfile`) and at no other time.
include_guard(GLOBAL)

function(tgc_add_model target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "TRAIN;STATIC" "SOURCE;NAME" "TARGET;OPTIONS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tgc_add_model(${target}): unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_SOURCE)
    message(FATAL_ERROR "tgc_add_model(${target}): SOURCE <file.pt2|file.trace> is required")
  endif()
  set(name "${target}")
  if(arg_NAME)
    set(name "${arg_NAME}")
  endif()
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "tgc_add_model(${target}): NAME '${name}' is not a C identifier "
                        "(give one with NAME)")
  endif()
  foreach(device IN LISTS arg_TARGET)
    if(NOT device STREQUAL "cpu")
      message(FATAL_ERROR "tgc_add_model(${target}): TARGET '${device}' is not supported by "
                          "this tgc (it generates code for: cpu)")
    endif()
  endforeach()
  if(NOT CMAKE_GENERATOR MATCHES "Ninja|Makefiles")
    message(FATAL_ERROR "tgc_add_model(${target}): needs a Ninja or Makefile generator "
                        "(depfiles), not ${CMAKE_GENERATOR}")
  endif()
  get_filename_component(source "${arg_SOURCE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")

  set(dir "${CMAKE_CURRENT_BINARY_DIR}/tgc_models/${target}")
  file(MAKE_DIRECTORY "${dir}")
  set(flags)
  if(arg_TRAIN)
    list(APPEND flags --train)
  endif()
  if(arg_STATIC)
    set(library "${dir}/${name}.a")
    list(APPEND flags --emit=static)
  else()
    set(library "${dir}/${name}.so")
  endif()
  get_filename_component(library_name "${library}" NAME)
  add_custom_command(
    OUTPUT "${library}" "${dir}/${name}.h" "${dir}/${name}.json"
    COMMAND tgc::tgc compile "${source}" -o "${library}" --name "${name}" ${flags}
            ${arg_OPTIONS} --depfile "${dir}/${name}.d"
    DEPENDS "${source}" tgc::tgc
    DEPFILE "${dir}/${name}.d"
    COMMENT "tgc: compiling ${arg_SOURCE} into ${library_name}"
    VERBATIM)
  add_custom_target(${target}_tgc_compile DEPENDS "${library}")

  if(arg_STATIC)
    add_library(${target} STATIC IMPORTED GLOBAL)
    set_target_properties(${target} PROPERTIES
      IMPORTED_LINK_INTERFACE_LANGUAGES C
      INTERFACE_LINK_LIBRARIES "tgc::headers;tgc::runtime")
  else()
    # model.so's SONAME is its file name: what links it records `${name}.so` and finds it
    # through its RPATH (CMake adds this directory in the build tree).
    add_library(${target} SHARED IMPORTED GLOBAL)
    set_target_properties(${target} PROPERTIES
      IMPORTED_SONAME "${name}.so"
      INTERFACE_LINK_LIBRARIES tgc::headers)
  endif()
  set_target_properties(${target} PROPERTIES
    IMPORTED_LOCATION "${library}"
    INTERFACE_INCLUDE_DIRECTORIES "${dir}")
  add_dependencies(${target} ${target}_tgc_compile)
endfunction()
