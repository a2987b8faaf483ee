// geqrf.h: linalg.geqrf, the Householder QR factorization of a batch of m x n matrices as LAPACK's
// geqrf: QR holds R on and above the diagonal and the reflectors' vectors below it; tau their scalars
// (householder.h has the algorithm). linalg.orgqr forms Q; linalg.gels solves least squares with it.
//
// Plans: one matrix per work-item in registers for m, n <= 8 (fully unrolled); above, on GPUs up to the
// table's qr_column_order (64 on NVIDIA's, half for complex values), a team with a column of the matrix in each work-item's
// registers; above that, a team of work-items owning columns, the matrix in a local array of the team's
// where it fits (above the row order: smaller teams share work-groups, and the core holds their QR in
// local memory already), else in QR's storage; one barrier a step. CPUs keep their loops, and large
// orders the blocked plan (blocked_qr.h).
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

std::unique_ptr<sdk::Operation> geqrf_operation();
// linalg.geqrf_vbatched: the same of square matrices of different orders (n [...], i32), padded to the
// largest (matrices.h's VariableOrder: the factors of diag(A_e, I); info -1 for an order outside 0..N).
std::unique_ptr<sdk::Operation> geqrf_vbatched_operation();

// LAPACK's flop count of the QR factorization of an m x n matrix.
double geqrf_flops(double m, double n);

}  // namespace fugue::linalg
