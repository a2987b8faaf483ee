# fugue_embed_kernels(TARGET FILES...): turns each OpenCL source into a C++ header holding it as a
# string (kernels/<family>/x.cl -> <build>/embedded/x_cl.h defining `kernel_source_x`), so plugins carry
# their device code inside the library.
function(fugue_embed_kernels target)
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/embedded")
  foreach(cl ${ARGN})
    get_filename_component(stem "${cl}" NAME_WE)
    set(header "${out_dir}/${stem}_cl.h")
    add_custom_command(OUTPUT "${header}"
      COMMAND ${CMAKE_COMMAND} -DINPUT=${cl} -DOUTPUT=${header} -DSTEM=${stem}
              -P "${FUGUE_EMBED_SCRIPT}"
      DEPENDS "${cl}" "${FUGUE_EMBED_SCRIPT}" VERBATIM)
    target_sources(${target} PRIVATE "${header}")
  endforeach()
  target_include_directories(${target} PRIVATE "${out_dir}")
endfunction()
set(FUGUE_EMBED_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/embed_file.cmake" CACHE INTERNAL "")
