# Writes OUTPUT: a header with the contents of INPUT as a raw string named kernel_source_${STEM}.
file(READ "${INPUT}" content)
file(WRITE "${OUTPUT}" "// Generated from ${INPUT}; do not edit.\n#pragma once\nstatic const char kernel_source_${STEM}[] = R\"fugue_cl(${content})fugue_cl\";\n")
