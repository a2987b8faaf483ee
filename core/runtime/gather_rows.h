// gather_rows.h: an array split by rows across devices that an operation also reads whole (x of a
// sparse product y = A x, where x is a vector the program computes, element by element, on the split
// rows). Each device's program gets a whole copy of it, "<name>.whole", read by the operations that
// read the array whole; after every operation writing the array, the core's operation core.gather_rows
// fills every device's copy with every device's rows. Being an operation of the program, it orders the
// copy after the writes and before the reads for the planner (nothing fuses across it).
// Where every operation reading the array whole reads it only at the columns of a split matrix's
// entries (fugue_plan.read_at_columns: x of y = A x), a device keeps current only its window of the copy
// (the rows its rows of the matrix reach), and a gather moves only those rows between devices.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <set>
#include <string>
#include <vector>

#include "fugue_plugin.h"
#include "passes/placement.h"
#include "plugins/operation.h"
#include "program/program.h"

namespace fugue {

// Rows [begin, end) of an array's whole.
struct RowWindow {
  int64_t begin = 0, end = 0;
  int64_t rows() const { return end > begin ? end - begin : 0; }
};

// Each device's window of every gathered array of `placement`: the rows of its whole copy that it keeps
// current: its own rows, and the columns its rows of the matrices in placement.windows hold entries in
// (`columns(matrix, device)`); the whole for an array some operation reads whole otherwise.
using GatherWindows = std::map<std::string, std::vector<RowWindow>>;
GatherWindows gather_windows(const Placement& placement, const std::function<RowWindow(const std::string& matrix, size_t device)>& columns);

// The rows device `from` sends device `to` at each gather of an array whose windows are `windows`: to's
// window within from's own rows (none for from == to).
RowWindow rows_sent(const Placement& placement, const std::vector<RowWindow>& windows, size_t from, size_t to);
// The rows that cross between devices at each gather of an array, all devices together.
int64_t crossing_rows(const Placement& placement, const std::vector<RowWindow>& windows);

// Why gathering these windows would cost more than the split saves, or "": the rows crossing between
// devices at each gather, over all gathered arrays of `program` (the whole), moving more than 1/64 of the
// bytes the split arrays hold (a matrix whose rows reach every column, as a power-law graph's).
std::string gathers_too_wide(const Program& program, const Placement& placement, const GatherWindows& windows);

// A split run that declines, before anything runs, to be split (gathers_too_wide): the caller runs the
// program on one device instead, saying why.
class SplitDeclined : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The name of an array's whole copy (the operation's, kGatherRowsOp, is placement.h's).
std::string whole_copy_name(const std::string& array);

// Device d's part of a gather: `symbol`'s rows on the device are in `rows` (its buffer), the whole copy
// to fill in `whole`, both through `services` (its queue).
using GatherRows = std::function<void(const std::string& symbol, const fugue_device_services& services, cl_mem rows, cl_mem whole)>;

// The gathering operation for one device's program, calling `gather`. Its statements name the array and
// its copy, in and out; attributes "symbol" (the array) and "rows" (the whole's).
std::shared_ptr<const Operation> gather_rows_operation(GatherRows gather);

// Rewrites `program` (one device's, its split arrays already cut to the device's rows) for the arrays in
// `gathered`, each of `whole_rows` rows: their whole copies as symbols (initial values from the arrays'
// own sources), read where `whole_reads` says (statement, operand: the operations that read the array
// whole, placement.h), and a gather after every statement that writes one.
void add_gathers(Program& program, const std::vector<std::string>& gathered, int64_t whole_rows,
                 const std::set<std::pair<std::string, size_t>>& whole_reads, const std::shared_ptr<const Operation>& gather);

}  // namespace fugue
