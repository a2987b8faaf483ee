# fugue_add_plugin(NAME SOURCES ... KERNELS ...): a plugin library `libfugue_<NAME>.so` with hidden
# visibility (only the entry point is exported), its .cl files embedded, placed where `fugue` finds it.
function(fugue_add_plugin name)
  cmake_parse_arguments(ARG "" "" "SOURCES;KERNELS" ${ARGN})
  set(target fugue_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES
    CXX_VISIBILITY_PRESET hidden C_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    PREFIX "lib" OUTPUT_NAME "fugue_${name}"
    LIBRARY_OUTPUT_DIRECTORY "${FUGUE_BUILD_PLUGIN_DIR}")
  target_link_libraries(${target} PRIVATE fugue_sdk)
  target_link_options(${target} PRIVATE -Wl,--no-undefined)
  if(ARG_KERNELS)
    fugue_embed_kernels(${target} ${ARG_KERNELS})
  endif()
  install(TARGETS ${target} LIBRARY DESTINATION "${FUGUE_INSTALL_PLUGIN_DIR}")
endfunction()
