// function_writer.h: a user function's body as an OpenCL C function, for the kernels whose operations
// call it (fugue_emit_api.call_function). Each body operation is planned for the device (it must be
// ELEMENT level, touching only its own element) and emitted through accessors that name the function's
// parameters and its values' registers.
#pragma once
#include <string>

#include "fugue_plugin.h"
#include "program/user_function.h"

namespace fugue {

// The definition of `name`, a function returning `typed.result` of `f`'s parameters typed `typed`, for
// `device`. Throws UserError when the body holds an operation that is not element-wise, DeviceError
// when a plugin misuses an accessor.
std::string write_function(const UserFunction& f, const TypedFunction& typed, const std::string& name,
                           const fugue_device_desc* device);

}  // namespace fugue
