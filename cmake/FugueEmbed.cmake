# fugue_embed_kernels(TARGET FILES...): turns each OpenCL source into a C++ header holding it as a
# string (kernels/x.cl -> x_cl.h defining `kernel_source_x`), so a plugin carries its device code inside
# the library. Relative paths are taken from the calling CMakeLists.txt's folder. The headers go into a
# folder of the target's own (added to its include path), so two plugins of one folder never collide.
# Used in Fugue's tree and, through find_package(Fugue), by plugins built out of tree.
include_guard(GLOBAL)

function(fugue_embed_kernels target)
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/${target}_embedded")
  # CMAKE_CURRENT_FUNCTION_LIST_DIR: this file's folder wherever the function is called from (the
  # source tree's cmake/, or <prefix>/lib/cmake/Fugue of an installed package).
  set(script "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/embed_file.cmake")
  set(stems "")
  foreach(cl ${ARGN})
    get_filename_component(input "${cl}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    get_filename_component(stem "${input}" NAME_WE)
    if(stem IN_LIST stems)
      message(FATAL_ERROR "fugue_embed_kernels(${target}): two kernel files are named '${stem}'; "
                          "each becomes ${stem}_cl.h, so their names must differ")
    endif()
    list(APPEND stems "${stem}")
    string(MAKE_C_IDENTIFIER "${stem}" symbol)
    set(header "${out_dir}/${stem}_cl.h")
    add_custom_command(OUTPUT "${header}"
      COMMAND "${CMAKE_COMMAND}" "-DINPUT=${input}" "-DOUTPUT=${header}" "-DSTEM=${symbol}"
              -P "${script}"
      DEPENDS "${input}" "${script}"
      COMMENT "Embedding ${stem}.cl as kernel_source_${symbol}" VERBATIM)
    target_sources(${target} PRIVATE "${header}")
  endforeach()
  target_include_directories(${target} PRIVATE "${out_dir}")
endfunction()
