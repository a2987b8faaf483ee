# flags.cmake: with FUGUE_FUZZ, everything the fuzz targets reach (the core, the bundled plugins, the
# stencil plugin's flow files) is compiled with libFuzzer's coverage instrumentation, AddressSanitizer
# and UndefinedBehaviorSanitizer. Included by the top CMakeLists.txt before any target is made.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "FUGUE_FUZZ needs clang (libFuzzer): configure with CC=clang CXX=clang++ "
                      "(found ${CMAKE_CXX_COMPILER_ID})")
endif()
# UBSan stays recoverable so that tests/sanitizers/ubsan.supp can suppress a known report;
# scripts/fuzz.sh sets UBSAN_OPTIONS=halt_on_error=1, so any other report stops the fuzzer (a finding).
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -gline-tables-only)
add_link_options(-fsanitize=address,undefined)
