// convert_device.h: the conversions sparse.convert makes on the device (kernels/convert.cl) rather than
// on the host: between csr, coo, ell, sell, dia, bdia, hyb, bcsr, bell and sbell, each way, and from a
// cocktail into any of them (from a csr; into a csr; between the others through a csr of the device's
// own; a cocktail's parts each into a csr of the device's own, merged by row). Each stores every
// entry where the host's conversion (layouts.cpp) stores it, so the result is the host's byte for byte;
// each first checks the source as the host reads it and counts what B's declaration must give, and
// where either does not hold, writes nothing and leaves the pair to the host, which names the fault.
#pragma once

#include <cstdint>

#include <fugue/sdk_device.hpp>

#include "layouts.h"

namespace fugue::sparse {

// Whether a matrix of `from`'s facts converts into `to`'s on the device.
bool converts_on_device(const Facts& from, const Facts& to);

// Converts operand "A" of `call` into operand "B" on the device: false, with B untouched, where A is not
// a matrix as the host reads it, B's declared counts are not A's, or B shares a buffer with A.
bool convert_on_device(const sdk::Call& call, const fugue_device_services& s);

}  // namespace fugue::sparse
