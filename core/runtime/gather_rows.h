// gather_rows.h: an array split by rows across devices that an operation also reads whole (x of a
// sparse product y = A x, where x is a vector the program computes, element by element, on the split
// rows). Each device's program gets a whole copy of it, "<name>.whole", read by the operations that
// read the array whole; after every operation writing the array, the core's operation core.gather_rows
// fills every device's copy with every device's rows. Being an operation of the program, it orders the
// copy after the writes and before the reads for the planner (nothing fuses across it).
#pragma once
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fugue_plugin.h"
#include "passes/placement.h"
#include "plugins/operation.h"
#include "program/program.h"

namespace fugue {

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
