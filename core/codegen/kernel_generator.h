// kernel_generator.h: turns a fused group of ELEMENT / ITEM / BLOCK operations into OpenCL C, calling
// each plugin's emit through the operand accessors. The accessors decide where a value lives: a
// register for a temporary the planner promoted, a kernel parameter (named after the program's
// symbol) for everything else. One kernel, plus a one-group finalize kernel when an op has a
// FINALIZE phase (reductions); consts, shapes and compile-time kinds are baked in, the element count is an
// argument.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/generated_kernel.h"
#include "passes/execution_plan.h"
#include "program/program.h"

namespace fugue {

GeneratedKernel generate_kernel(const Program& program, const FusedGroup& group, const Launch& launch,
                                const std::string& kernel_name);

// An OpenCL C identifier for a name, one-to-one: letters and digits stay, '_' doubles, anything else
// becomes '_' and two hex digits ("Q.second": "Q_2esecond", a part; "Q_second": "Q__second"), so that
// no two symbols, and no symbol and the suffixes the generator adds ("_next"), meet in one name.
std::string c_identifier(const std::string& text);

// An identifier for a stem an operation asks a name for (emit API's name, local_array): c_identifier,
// with "t" in front when that is empty or starts with a digit.
std::string stem_identifier(const char* stem);

// A double literal that OpenCL C parses exactly ("2.5", "1e+30", "INFINITY", "NAN").
std::string c_literal(double value);

}  // namespace fugue
