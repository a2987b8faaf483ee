# fugue_add_plugin(NAME SOURCES src... [KERNELS file.cl...]): a plugin library `libfugue_<NAME>.so`
# (target fugue_<NAME>) with hidden visibility (only the entry point is exported), linked against
# Fugue::sdk, its .cl files embedded (kernels/x.cl -> x_cl.h defining `kernel_source_x`).
#
# The same function serves Fugue's own tree and plugins built out of tree after find_package(Fugue).
#   Build tree: the library goes to FUGUE_PLUGIN_OUTPUT_DIR if set, else (in Fugue's tree) the folder
#     the `fugue` of the build tree searches, else ${CMAKE_BINARY_DIR}/plugins; point FUGUE_PLUGIN_PATH
#     or `fugue --plugin` at it.
#   Install: into FUGUE_PLUGIN_INSTALL_DIR if set, else FUGUE_INSTALL_PLUGIN_DIR: the folder, relative
#     to the install prefix, that an installed `fugue` searches next to its bin/
#     (${CMAKE_INSTALL_LIBDIR}/fugue/plugins as Fugue was configured; FugueConfig.cmake records it).
#     Installing a plugin into Fugue's own prefix therefore makes `fugue` find it.
include_guard(GLOBAL)
include("${CMAKE_CURRENT_LIST_DIR}/FugueEmbed.cmake")

function(fugue_add_plugin name)
  cmake_parse_arguments(ARG "" "" "SOURCES;KERNELS" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "fugue_add_plugin(${name}): unexpected arguments ${ARG_UNPARSED_ARGUMENTS} "
                        "(expected SOURCES ... KERNELS ...)")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "fugue_add_plugin(${name}): no SOURCES")
  endif()
  if(NOT TARGET Fugue::sdk)
    message(FATAL_ERROR "fugue_add_plugin(${name}): no target Fugue::sdk; call find_package(Fugue) first")
  endif()

  if(FUGUE_PLUGIN_OUTPUT_DIR)
    set(output_dir "${FUGUE_PLUGIN_OUTPUT_DIR}")
  elseif(FUGUE_BUILD_PLUGIN_DIR)
    set(output_dir "${FUGUE_BUILD_PLUGIN_DIR}")
  else()
    set(output_dir "${CMAKE_BINARY_DIR}/plugins")
  endif()
  if(FUGUE_PLUGIN_INSTALL_DIR)
    set(install_dir "${FUGUE_PLUGIN_INSTALL_DIR}")
  elseif(FUGUE_INSTALL_PLUGIN_DIR)
    set(install_dir "${FUGUE_INSTALL_PLUGIN_DIR}")
  else()
    include(GNUInstallDirs)
    set(install_dir "${CMAKE_INSTALL_LIBDIR}/fugue/plugins")
  endif()

  set(target fugue_${name})
  # MODULE: loaded with dlopen, never linked against.
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES
    CXX_VISIBILITY_PRESET hidden C_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    PREFIX "lib" OUTPUT_NAME "fugue_${name}"
    # A generator expression keeps multi-configuration generators from adding a per-configuration folder.
    LIBRARY_OUTPUT_DIRECTORY "$<1:${output_dir}>")
  target_link_libraries(${target} PRIVATE Fugue::sdk)
  # Every symbol resolved at link time: a missing one fails the build, not the first dlopen. Libraries
  # the plugin does not use (OpenCL for one that enqueues nothing) are not recorded as needed.
  target_link_options(${target} PRIVATE -Wl,--no-undefined -Wl,--as-needed)
  if(ARG_KERNELS)
    fugue_embed_kernels(${target} ${ARG_KERNELS})
  endif()
  install(TARGETS ${target} LIBRARY DESTINATION "${install_dir}")
endfunction()
