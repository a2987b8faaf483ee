// sparse_kind.h: the kinds csr, coo, ell, sell, dia, bdia, hyb, bcsr, bell, sbell and cocktail (layouts.h draws
// them), the kind sparse that chooses among them (format_choice.h), and what a declaration of one says.
// {"kind": "csr", "dtype": "f32", "from": "A.mtx"} reads a file (the format converts, and checks any of
// the keys below that the declaration also gives); without "from", an operation or "parts" gives the
// value and the declaration must fix its type: "shape" [rows, cols] and the layout's count ("nnz" for csr
// and coo, or {"capacity": n} there for an operation's result whose entries are counted as it runs, "width" for ell and bell, "stored" for sell, "diagonals" for dia and bdia (with "bands"),
// "blocks" for bcsr and sbell; hyb: "width" and "nnz"; cocktail: its parts' "diagonals", "blocks", "stored",
// "csr_rows" and "nnz", with "block", "block_slice" and "slice"). A cocktail read from a file is split for the device
// (format_choice.h) unless "diagonal_fill", "block_fill" or "width" fix the split (layouts.h's Cut).
#pragma once

#include <memory>
#include <optional>

#include <fugue/sdk.hpp>

#include "format_choice.h"
#include "layouts.h"

namespace fugue::sparse {

// A declaration's keys, checked.
struct Requested {
  Layout layout = Layout::Csr;
  std::optional<fugue_dtype> dtype, index;
  std::optional<int64_t> rows, cols, count;  // count: nnz, width, stored or diagonals, by layout (hyb: width)
  bool counted = false;                      // the run count (layouts.h) given as {"capacity": n}: left to the run
  std::optional<int64_t> hyb_nnz;            // hyb: its coo part's entries
  std::optional<int64_t> bands;              // bdia
  std::optional<int64_t> diagonals, blocks, stored;  // cocktail: its dia's, sbell's and sell's counts (count: its csr's nnz)
  std::optional<int64_t> csr_rows;                   // cocktail: the rows its csr holds
  Cut cut;                                   // slice, sigma, hyb's width, bcsr's block, a cocktail's split
  bool split_given = false;                  // cocktail: "diagonal_fill", "block_fill" or "width" given
  SplitKeys given;                           // cocktail: its slices and block as given (the rest chosen)
};

// The keys of `declaration` (JSON text) for `layout`; InvalidArgument with a pointer inside it.
Requested requested(Layout layout, const std::string& declaration);
// The keys a declaration of the layout's kind may give: dtype, shape, index, its counts, its cut.
std::vector<std::string> declaration_keys(Layout layout);
// The chooser kind's ("sparse"): every kind's keys, "format" and "reads".
std::vector<std::string> sparse_chooser_keys();
// bcsr, bell and sbell: the layouts of dense blocks ("block": [h, w]).
bool blocked(Layout layout);
// The declaration keys that cut a layout ("slice", "sigma", "block"): the kind's own and the chooser's
// with "format" naming it.
const std::vector<std::string>& cut_keys(Layout layout);
// `facts` (from a file) against what the declaration asked: InvalidArgument naming the key that differs.
void check_requested(const Requested& r, const Facts& facts);

std::unique_ptr<sdk::Kind> sparse_kind(Layout layout);

// `m` as `declaration` (JSON text with "kind") declares it, for `device` (null: none): the facts of its
// type, any count or shape the declaration gives checked; for the chooser kind "sparse", the layout its
// "format" names or the choice for the device ("auto"), and why. Formats and generators share these.
Facts facts_as_declared(const Coordinates& m, const std::string& declaration, const fugue_device_desc* device,
                        std::string* note = nullptr);
// The type of that value (a chosen layout named, with the note).
sdk::Declared declared_as(const Coordinates& m, const std::string& declaration, const fugue_device_desc* device);
// Fills `value` (allocated with the type declared_as gave) with `m`; InvalidArgument saying `what`
// changed when the type no longer matches.
void store_as_declared(const Coordinates& m, const std::string& declaration, const fugue_device_desc* device, fugue_host_array& value,
                       const std::string& what);
// The chooser kind "sparse": {"kind": "sparse", "format": "auto" or a layout's name, "from": ...}.
std::unique_ptr<sdk::Kind> sparse_chooser_kind();

// A declaration (JSON text) of `m` in `layout` with its parts given inline: the kinds' examples and the
// conformance cases. Small matrices only (every part's values are written out).
std::string inline_declaration(const Coordinates& m, Layout layout, fugue_dtype dtype, const Cut& cut = {});
// A declaration (JSON text) of a value with `facts`, cut as `cut` says, without its parts: its shape, counts
// and index dtype, what an operation's result of that type is declared with.
std::string counts_declaration(const Facts& facts, const Cut& cut = {});
// The seed's matrix B (layouts.h).
Coordinates seed_matrix_b();

}  // namespace fugue::sparse
