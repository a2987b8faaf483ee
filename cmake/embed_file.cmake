# Writes OUTPUT: a header with the contents of INPUT as a raw string named kernel_source_${STEM}.
# Run by fugue_embed_kernels as `cmake -P`, at build time, whenever INPUT changes.
file(READ "${INPUT}" content)
string(FIND "${content}" ")fugue_cl\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains )fugue_cl\", which would end the raw string it is embedded in")
endif()
file(WRITE "${OUTPUT}" "// Generated from ${INPUT}; do not edit.\n#pragma once\nstatic const char kernel_source_${STEM}[] = R\"fugue_cl(${content})fugue_cl\";\n")
