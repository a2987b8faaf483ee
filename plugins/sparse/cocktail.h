// cocktail.h: seed 003's cocktail format (layouts.h draws it): a matrix split into a dia, a sbell, a sell
// and a csr, each holding the entries its layout stores best. The split rules (which diagonals and
// blocks are dense, how wide the sell is) are the cut's; format_choice.h chooses them for a device.
// layouts.cpp hands its cocktail cases here: each works part by part through the parts' own layouts.
#pragma once

#include <array>
#include <utility>
#include <vector>

#include <fugue/sdk.hpp>

#include "coordinates.h"
#include "layouts.h"

namespace fugue::sparse {

// `m`'s entries as `cut` splits them: the dia's, the sbell's, the sell's and the csr's (kCocktailParts).
std::array<Coordinates, 4> cocktail_split(const Coordinates& m, const Cut& cut);
// The same in steps, so that a choice weighing several block sizes finds the dense diagonals once:
// a mark for each entry on a diagonal holding diagonal_fill of the places a dia stores for it (a row
// each, however short the diagonal) or more (none where the fill is above 1); among the entries not
// `taken`, a mark for each in an aligned h x w block holding block_fill of its places or more; the
// entries marked; the four parts, each row's first `width` entries left (-1: all) the sell's.
std::vector<char> dense_diagonal_entries(const Coordinates& m, double diagonal_fill);
std::vector<char> dense_block_entries(const Coordinates& m, const std::vector<char>& taken, int64_t h, int64_t w, double block_fill);
Coordinates entries_marked(const Coordinates& m, const std::vector<char>& marked);
std::array<Coordinates, 4> split_entries(const Coordinates& m, const std::vector<char>& on_diagonals, const std::vector<char>& in_blocks,
                                         int64_t width);
// The facts of `m` as a cocktail split by `cut` (each part's checked as its layout checks them; an error
// names the part).
Facts cocktail_facts_for(const Coordinates& m, fugue_dtype dtype, fugue_dtype index, const Cut& cut, bool limit_padding);
// The same from the parts cocktail_split gave for `cut`.
Facts cocktail_facts_of_parts(const std::array<Coordinates, 4>& parts, fugue_dtype dtype, fugue_dtype index, const Cut& cut,
                              bool limit_padding);
// The parts' types one after another; the sbell's block and slice as the metadata.
sdk::Declared cocktail_type(const Facts& f);
Facts cocktail_facts_of(const fugue_type& type);
// The number of parts before part `k` of the cocktail's (its first part's index in the whole).
uint32_t cocktail_first_part(size_t k);

// The four parts of a cocktail value, each a value of its own layout (its parts are the cocktail's).
class CocktailViews {
 public:
  CocktailViews(const Facts& f, fugue_host_array& value);
  CocktailViews(const CocktailViews&) = delete;
  CocktailViews& operator=(const CocktailViews&) = delete;
  sdk::HostView view(size_t k) { return sdk::HostView(values_[k]); }

 private:
  std::array<fugue_type, 4> types_{};
  std::array<fugue_host_array, 4> values_{};
  std::array<int64_t, 2> csr_shape_{};  // the csr's: its listed rows
};

std::vector<std::vector<double>> cocktail_stored_parts(const Facts& f, const Coordinates& m);
Coordinates cocktail_entries(const Facts& f, const sdk::HostView& value);
// Rows [first, first + count) part by part (layouts.h's rows_of for each): the rows' facts, their entries
// (all parts together) and, in `parts`, each part's.
std::pair<Facts, Coordinates> cocktail_rows(const Facts& f, const sdk::HostView& value, int64_t first, int64_t count,
                                            std::array<Coordinates, 4>* parts = nullptr);
// Fills `rows` (of the type cocktail_rows's facts give) with rows [first, first + count) of `value`.
void cocktail_store_rows(const Facts& f, const sdk::HostView& value, int64_t first, int64_t count, const sdk::HostView& rows);
// A line on the split: each part's entries and size ("dia 5 diagonals (20,480 entries) + ...").
std::string cocktail_summary(const Facts& f);

}  // namespace fugue::sparse
