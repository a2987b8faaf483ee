# Installs the SDK as a CMake package, so plugins build out of tree with find_package(Fugue):
#   <prefix>/include/fugue/{fugue_plugin.h, sdk.hpp, sdk_device.hpp}   (headers: sdk/CMakeLists.txt)
#   <prefix>/${CMAKE_INSTALL_LIBDIR}/cmake/Fugue/
#     FugueConfig.cmake, FugueConfigVersion.cmake (SameMajorVersion), FugueTargets*.cmake
#     (Fugue::plugin_api, Fugue::sdk), FuguePlugin.cmake, FugueEmbed.cmake, embed_file.cmake
# The executable (host/) and the bundled plugins (fugue_add_plugin) install themselves.
include(CMakePackageConfigHelpers)

set(FUGUE_PACKAGE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/Fugue")

# The installed `fugue` searches <its folder>/../${FUGUE_INSTALL_PLUGIN_DIR}; that holds only when the
# executable sits one folder below the prefix, as with the default bin/.
if(IS_ABSOLUTE "${CMAKE_INSTALL_BINDIR}" OR CMAKE_INSTALL_BINDIR MATCHES "/")
  message(WARNING "CMAKE_INSTALL_BINDIR is '${CMAKE_INSTALL_BINDIR}': an installed fugue looks for its "
                  "plugins in <bindir>/../${FUGUE_INSTALL_PLUGIN_DIR}, which is then not where they are "
                  "installed; set FUGUE_PLUGIN_PATH, or keep the default bin")
endif()

install(TARGETS fugue_plugin_api fugue_sdk EXPORT FugueTargets)
install(EXPORT FugueTargets NAMESPACE Fugue:: DESTINATION "${FUGUE_PACKAGE_DIR}")

configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/FugueConfig.cmake.in"
  "${CMAKE_CURRENT_BINARY_DIR}/FugueConfig.cmake"
  INSTALL_DESTINATION "${FUGUE_PACKAGE_DIR}"
  PATH_VARS CMAKE_INSTALL_BINDIR FUGUE_INSTALL_PLUGIN_DIR)
# 0.x: a plugin asking for 0.1 accepts any 0.y >= 0.1 (the ABI's own version guards the boundary).
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/FugueConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMajorVersion)
install(FILES
  "${CMAKE_CURRENT_BINARY_DIR}/FugueConfig.cmake"
  "${CMAKE_CURRENT_BINARY_DIR}/FugueConfigVersion.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/FuguePlugin.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/FugueEmbed.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/embed_file.cmake"
  DESTINATION "${FUGUE_PACKAGE_DIR}")
