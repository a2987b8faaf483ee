#include "convert_device.h"

#include <CL/cl.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "convert_cl.h"  // kernel_source_convert, embedded from kernels/convert.cl

namespace fugue::sparse {

namespace {

using namespace fugue::sdk;

constexpr size_t kScanGroup = 256;  // SCAN_GROUP
const char* const kWhat = "sparse.convert";

std::string opencl_index(fugue_dtype index) { return index == FUGUE_DTYPE_I64 ? "long" : "int"; }

// The conversion's program and queue, with the helpers its steps share.
struct Device {
  const fugue_device_services& s;
  cl_program program = nullptr;

  Device(const fugue_device_services& services, const Facts& a, const Facts& b) : s(services) {
    require_dtype(s, a.dtype, kWhat);
    const bool f64 = a.dtype == FUGUE_DTYPE_F64;
    program = build_program(s, std::string(f64 ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "") + kernel_source_convert,
                            std::string("-DREAL=") + (f64 ? "double" : "float") + " -DA_INDEX=" + opencl_index(a.index) +
                                " -DB_INDEX=" + opencl_index(b.index) + " -DSCAN_GROUP=" + std::to_string(kScanGroup));
  }
  // Whether the sums' work-groups fit the device.
  bool scans() const { return Kernel(program, "scan_groups").work_group_size(s.device) >= kScanGroup; }
  void zero(cl_mem buffer, size_t bytes, const char* what) const {
    const cl_uint pattern = 0;  // every part's bytes are a multiple of 4
    if (bytes > 0)
      check_cl(clEnqueueFillBuffer(s.queue, buffer, &pattern, sizeof pattern, 0, bytes, 0, nullptr, nullptr), std::string(kWhat) + ": zeroing " + what);
  }
  template <class T>
  void read(cl_mem buffer, size_t offset, T* value, const char* what) const {
    check_cl(clEnqueueReadBuffer(s.queue, buffer, CL_TRUE, offset, sizeof(T), value, 0, nullptr, nullptr), std::string(kWhat) + ": reading " + what);
  }
  // values[0 .. n-1] replaced by their inclusive sums: a work-group's, then the groups' (recursively).
  void scan(cl_mem values, int64_t n) const {
    if (n <= 1) return;
    const int64_t groups = (n + static_cast<int64_t>(kScanGroup) - 1) / static_cast<int64_t>(kScanGroup);
    cl_mem totals = scratch(s, static_cast<size_t>(groups) * sizeof(cl_long));
    Kernel within(program, "scan_groups");
    within.args(cl_long{n}, values, totals).enqueue(s, static_cast<size_t>(n), kScanGroup, "convert: sums");
    if (groups == 1) return;
    scan(totals, groups);
    Kernel add(program, "scan_add");
    add.args(cl_long{n}, values, totals).enqueue(s, static_cast<size_t>(n), kScanGroup, "convert: sums");
  }
};

// The csr's pointers and columns as the host reads them (0 .. nnz, ascending columns within a row):
// false where they are not; `longest` its longest row.
bool csr_holds(const Device& d, const Facts& a, cl_mem row_ptr, cl_mem col, cl_int& longest) {
  cl_int verdict[2] = {0, 0};
  cl_mem verdict_buffer = scratch(d.s, sizeof verdict);
  check_cl(clEnqueueWriteBuffer(d.s.queue, verdict_buffer, CL_TRUE, 0, sizeof verdict, verdict, 0, nullptr, nullptr), std::string(kWhat) + ": the check");
  Kernel check(d.program, "csr_check");
  check.args(cl_long{a.rows}, cl_long{a.cols}, cl_long{a.nnz}, row_ptr, col, verdict_buffer)
      .enqueue(d.s, static_cast<size_t>(std::max(a.rows, a.nnz)), 0, "convert: csr check");
  check_cl(clEnqueueReadBuffer(d.s.queue, verdict_buffer, CL_TRUE, 0, sizeof verdict, verdict, 0, nullptr, nullptr), std::string(kWhat) + ": the check");
  longest = verdict[1];
  return verdict[0] == 0;
}

bool from_csr(const Device& d, const Facts& a, const Facts& b, const std::vector<cl_mem>& from, const std::vector<cl_mem>& to) {
  cl_int longest = 0;
  if (!csr_holds(d, a, from[0], from[1], longest)) return false;
  const cl_long m = a.rows;
  const size_t rows = static_cast<size_t>(m);
  switch (b.layout) {
    case Layout::Coo: {
      Kernel fill(d.program, "csr_to_coo");
      fill.args(m, from[0], from[1], from[2], to[0], to[1], to[2]).enqueue(d.s, rows, 0, "convert: csr -> coo");
      return true;
    }
    case Layout::Ell: {
      if (longest != b.width) return false;
      Kernel fill(d.program, "csr_to_ell");
      fill.args(m, cl_long{b.width}, from[0], from[1], from[2], to[0], to[1]).enqueue(d.s, rows, 0, "convert: csr -> ell");
      return true;
    }
    case Layout::Dia: {
      // The diagonals holding entries flagged by offset, their sums numbering them.
      const int64_t places = a.rows + a.cols - 1;
      cl_mem sums = scratch(d.s, static_cast<size_t>(places) * sizeof(cl_long));
      d.zero(sums, static_cast<size_t>(places) * sizeof(cl_long), "the diagonals' flags");
      Kernel flag(d.program, "csr_diagonals");
      flag.args(m, from[0], from[1], sums).enqueue(d.s, rows, 0, "convert: csr diagonals");
      d.scan(sums, places);
      cl_long diagonals = 0;
      d.read(sums, static_cast<size_t>(places - 1) * sizeof(cl_long), &diagonals, "the diagonals' count");
      if (diagonals != b.diagonals) return false;
      Kernel offsets(d.program, "dia_offsets");
      offsets.args(m, cl_long{places}, sums, to[0]).enqueue(d.s, static_cast<size_t>(places), 0, "convert: dia offsets");
      d.zero(to[1], static_cast<size_t>(b.diagonals * a.rows) * dtype_bytes(b.dtype), "B's data");
      Kernel fill(d.program, "csr_to_dia");
      fill.args(m, from[0], from[1], from[2], sums, to[1]).enqueue(d.s, rows, 0, "convert: csr -> dia");
      return true;
    }
    default: return false;
  }
}

bool dia_to_csr(const Device& d, const Facts& a, const Facts& b, const std::vector<cl_mem>& from, const std::vector<cl_mem>& to) {
  const cl_long m = a.rows;
  cl_int verdict = 0;
  cl_mem verdict_buffer = scratch(d.s, sizeof verdict);
  check_cl(clEnqueueWriteBuffer(d.s.queue, verdict_buffer, CL_TRUE, 0, sizeof verdict, &verdict, 0, nullptr, nullptr), std::string(kWhat) + ": the check");
  cl_mem sums = scratch(d.s, static_cast<size_t>(m) * sizeof(cl_long));
  Kernel check(d.program, "dia_check");
  check.args(m, cl_long{a.cols}, cl_long{a.diagonals}, from[0], from[1], sums, verdict_buffer)
      .enqueue(d.s, static_cast<size_t>(std::max(a.rows, a.diagonals)), 0, "convert: dia check");
  d.read(verdict_buffer, 0, &verdict, "the check");
  if (verdict != 0) return false;
  d.scan(sums, m);
  cl_long nnz = 0;
  d.read(sums, static_cast<size_t>(m - 1) * sizeof(cl_long), &nnz, "the entries' count");
  if (nnz != b.nnz) return false;
  Kernel fill(d.program, "dia_to_csr");
  fill.args(m, cl_long{a.cols}, cl_long{a.diagonals}, from[0], from[1], sums, to[0], to[1], to[2])
      .enqueue(d.s, static_cast<size_t>(m), 0, "convert: dia -> csr");
  return true;
}

// An index of `index` holds every row, column and offset of a matrix of `from`'s facts, and every
// entry's place up to `count`.
bool index_holds(fugue_dtype index, const Facts& from, int64_t count) {
  return index == FUGUE_DTYPE_I64 || std::max({from.rows, from.cols, count}) <= std::numeric_limits<int32_t>::max();
}

}  // namespace

bool converts_on_device(const Facts& from, const Facts& to) {
  if (from.rows == 0 || from.cols == 0 || !index_holds(to.index, from, 0)) return false;
  if (from.layout == Layout::Csr) {
    if (to.layout == Layout::Coo) return to.nnz == from.nnz;  // an ell's width and a dia's diagonals are counted as it runs
    return to.layout == Layout::Ell || to.layout == Layout::Dia;
  }
  return from.layout == Layout::Dia && to.layout == Layout::Csr && index_holds(to.index, from, to.nnz);
}

bool convert_on_device(const sdk::Call& call, const fugue_device_services& s) {
  const Facts a = facts_of(call.operand("A")), b = facts_of(call.operand("B"));
  std::vector<cl_mem> from, to;
  for (uint32_t k = 0; k < call.operand("A").num_parts; ++k) from.push_back(part(s, call, "A", k));
  for (uint32_t k = 0; k < call.operand("B").num_parts; ++k) to.push_back(part(s, call, "B", k));
  for (cl_mem m : to)
    if (std::find(from.begin(), from.end(), m) != from.end()) return false;
  const Device d(s, a, b);
  if (!d.scans()) return false;
  return a.layout == Layout::Csr ? from_csr(d, a, b, from, to) : dia_to_csr(d, a, b, from, to);
}

}  // namespace fugue::sparse
