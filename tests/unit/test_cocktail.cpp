// The sparse plugin's cocktail split (plugins/sparse/cocktail.h), without a device: which entries each
// part takes under the fills and the width, the parts' facts, and that the parts hold every entry once.
#include <gtest/gtest.h>

#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "cocktail.h"

namespace fugue::sparse {
namespace {

// 8 x 12: the main diagonal full; diagonal 3 at rows 0 and 2; a 2 x 4 block at rows 4-5, columns 8-11
// with 7 of its 8 places; row 1 with 4 more entries at columns 5, 6, 7 and 11 ((1, 11) alone on diagonal
// 10, which a dia would store 8 places for, as every diagonal).
Coordinates example() {
  Coordinates m;
  m.rows = 8, m.cols = 12;
  for (int64_t i = 0; i < 8; ++i) {
    m.add(i, i, 1.0 + static_cast<double>(i));
    if (i == 1)
      for (int64_t j : {5, 6, 7, 11}) m.add(i, j, -static_cast<double>(j));
    if (i % 2 == 0 && i + 3 < 8 && !(i == 4)) m.add(i, i + 3, 0.5);
    if (i == 4 || i == 5)
      for (int64_t j = 8; j < 12; ++j)
        if (!(i == 5 && j == 11)) m.add(i, j, 10.0 * static_cast<double>(i) + static_cast<double>(j));
  }
  m.sort_unique([](int64_t k) { return "entry " + std::to_string(k); }, 0);
  return m;
}

// The type a declaration describes, as the core hands it to the plugin.
class TypeOf {
 public:
  explicit TypeOf(sdk::Declared d, const char* kind) : declared_(std::move(d)), parts_(declared_.parts.size()) {
    for (size_t k = 0; k < parts_.size(); ++k) {
      fugue_type& t = parts_[k];
      t.struct_size = sizeof(fugue_type), t.kind = FUGUE_KIND_ARRAY, t.dtype = declared_.parts[k].dtype;
      t.rank = static_cast<uint32_t>(declared_.parts[k].shape.size()), t.shape = declared_.parts[k].shape.data();
    }
    whole_.struct_size = sizeof(fugue_type), whole_.kind = FUGUE_KIND_PLUGIN, whole_.kind_name = kind, whole_.dtype = declared_.dtype;
    whole_.rank = static_cast<uint32_t>(declared_.shape.size()), whole_.shape = declared_.shape.data();
    whole_.metadata = declared_.metadata.data(), whole_.metadata_bytes = declared_.metadata.size();
    whole_.num_parts = static_cast<uint32_t>(parts_.size()), whole_.parts = parts_.data();
  }
  const fugue_type& type() const { return whole_; }

 private:
  sdk::Declared declared_;
  std::vector<fugue_type> parts_;
  fugue_type whole_{};
};

std::vector<std::tuple<int64_t, int64_t, double>> triplets(const Coordinates& m) {
  std::vector<std::tuple<int64_t, int64_t, double>> t;
  for (int64_t e = 0; e < m.entries(); ++e) t.push_back({m.row[e], m.col[e], m.value[e]});
  return t;
}

std::vector<std::pair<int64_t, int64_t>> places(const Coordinates& m) {
  std::vector<std::pair<int64_t, int64_t>> p;
  for (int64_t e = 0; e < m.entries(); ++e) p.push_back({m.row[e], m.col[e]});
  return p;
}

TEST(Cocktail, EachPartTakesWhatItsRuleSays) {
  const Coordinates m = example();
  Cut cut;
  cut.diagonal_fill = 1.0;  // the main diagonal alone is full
  cut.block_fill = 0.75, cut.block_rows = 2, cut.block_cols = 4, cut.block_slice = 2;
  cut.width = 2, cut.slice = 4;
  const std::array<Coordinates, 4> parts = cocktail_split(m, cut);
  std::vector<std::pair<int64_t, int64_t>> diagonal;
  for (int64_t i = 0; i < 8; ++i) diagonal.push_back({i, i});
  EXPECT_EQ(places(parts[0]), diagonal);
  // The block's 7 entries (7/8 >= 0.75); diagonal 3's entry at (4, 7) is not in it (columns 4-7 hold one).
  EXPECT_EQ(places(parts[1]), (std::vector<std::pair<int64_t, int64_t>>{{4, 8}, {4, 9}, {4, 10}, {4, 11}, {5, 8}, {5, 9}, {5, 10}}));
  // Each row's first two entries left: row 0 (0, 3), row 1 (1, 5) (1, 6), row 2 (2, 5); row 1's (1, 7) and
  // (1, 11) go to the csr.
  EXPECT_EQ(places(parts[2]), (std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {1, 5}, {1, 6}, {2, 5}}));
  EXPECT_EQ(places(parts[3]), (std::vector<std::pair<int64_t, int64_t>>{{1, 7}, {1, 11}}));
  // 3 of 8 places: diagonals 3 ((0, 3), (2, 5), (5, 8)), 4 ((1, 5), (4, 8), (5, 9)) and 5 ((1, 6), (4, 9),
  // (5, 10)) too; not 6 (2 entries) nor 10, whose one entry is all its length holds but 1 of the 8 places.
  cut.diagonal_fill = 0.3;
  EXPECT_EQ(places(cocktail_split(m, cut)[0]),
            (std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {0, 3}, {1, 1}, {1, 5}, {1, 6}, {2, 2}, {2, 5}, {3, 3}, {4, 4}, {4, 8}, {4, 9},
                                                      {5, 5}, {5, 8}, {5, 9}, {5, 10}, {6, 6}, {7, 7}}));
  // Fills above 1 and no width: everything in the sell.
  Cut none;
  const std::array<Coordinates, 4> flat = cocktail_split(m, none);
  EXPECT_EQ(flat[0].entries() + flat[1].entries() + flat[3].entries(), 0);
  EXPECT_EQ(places(flat[2]), places(m));
}

TEST(Cocktail, FactsCountEachPartAsItsLayout) {
  const Coordinates m = example();
  Cut cut;
  cut.diagonal_fill = 1.0, cut.block_fill = 0.75, cut.block_rows = 2, cut.block_cols = 4, cut.block_slice = 2, cut.width = 2, cut.slice = 4;
  cut.sigma = 8;
  Facts f = facts_for(m, Layout::Cocktail, FUGUE_DTYPE_F32, FUGUE_DTYPE_NONE, cut);
  f.split_declared = true;
  ASSERT_EQ(f.components.size(), 4u);
  EXPECT_EQ(f.components[0].layout, Layout::Dia);
  EXPECT_EQ(f.components[0].diagonals, 1);
  EXPECT_EQ(f.components[1].layout, Layout::Sbell);
  EXPECT_EQ(f.components[1].blocks, 2);  // slices of 2 super-rows: super-rows 0-1 none, 2-3 one block wide
  EXPECT_EQ(f.components[2].layout, Layout::Sell);
  EXPECT_EQ(f.components[2].stored, 4 * 2);  // slice 0 (rows 0-3) 2 wide, slice 1 (rows 4-7) empty
  EXPECT_EQ(f.components[3].nnz, 2);
  EXPECT_EQ(f.components[3].rows, 1);  // row 1 alone, listed
  EXPECT_EQ(f.nnz, 2);
  // The type's parts are the four layouts' in order, the split as the metadata (the sbell's block and
  // slice first, as a sbell's type holds them); the facts of the type give the split back.
  const sdk::Declared type = declared_type(f);
  EXPECT_EQ(type.parts.size(), part_names(Layout::Cocktail).size());
  EXPECT_EQ(type.parts[1].shape[0], 8 * 1);  // the dia's data: one diagonal of 8 rows
  EXPECT_EQ(type.parts.back().shape[0], 2);  // the csr's data
  EXPECT_EQ(type.metadata.size(), 9 * sizeof(int64_t));
  EXPECT_EQ(type.parts[kCocktailRowsPart].shape[0], 1);  // csr_rows
  EXPECT_EQ(cocktail_first_part(3), kCocktailRowsPart + 1);
  const TypeOf typed(type, "cocktail");
  const Facts back = facts_of(typed.type());
  EXPECT_EQ(std::tie(back.split.diagonal_fill, back.split.block_fill, back.split.width, back.split.slice, back.split.sigma),
            std::tie(cut.diagonal_fill, cut.block_fill, cut.width, cut.slice, cut.sigma));
  EXPECT_EQ(std::tie(back.split.block_rows, back.split.block_cols, back.split.block_slice), std::tie(cut.block_rows, cut.block_cols, cut.block_slice));
  EXPECT_TRUE(back.split_declared);
  ASSERT_EQ(back.components.size(), 4u);
  EXPECT_EQ(back.components[0].diagonals, 1);
  EXPECT_EQ(std::tie(back.components[1].blocks, back.components[1].block_rows, back.components[1].slice), std::tie(f.components[1].blocks, cut.block_rows, cut.block_slice));
  EXPECT_EQ(std::tie(back.components[2].stored, back.components[2].slice, back.components[2].sigma), std::tie(f.components[2].stored, cut.slice, cut.sigma));
  EXPECT_EQ(std::tie(back.components[3].rows, back.components[3].nnz), std::tie(f.components[3].rows, f.components[3].nnz));
  // The same type again: its metadata, compared byte for byte where a value is stored, is the split's alone.
  EXPECT_EQ(declared_type(back).metadata, type.metadata);
}

TEST(Cocktail, PartsHoldEveryEntryOnce) {
  std::mt19937_64 rng(11);
  Coordinates m;
  m.rows = 300, m.cols = 250;
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j)
      if (std::abs(i - j) <= 2 || rng() % 40 == 0 || (i / 8 == 3 && j / 4 == 10)) m.add(i, j, static_cast<double>(rng() % 1000) + 1);
  for (double fill : {0.2, 0.6, 1.0, 2.0})
    for (int64_t width : {-1, 0, 1, 5}) {
      Cut cut;
      cut.diagonal_fill = fill, cut.block_fill = fill, cut.block_rows = 8, cut.block_cols = 4, cut.width = width;
      const std::array<Coordinates, 4> parts = cocktail_split(m, cut);
      Coordinates all;
      all.rows = m.rows, all.cols = m.cols;
      for (const Coordinates& p : parts)
        for (int64_t e = 0; e < p.entries(); ++e) all.add(p.row[e], p.col[e], p.value[e]);
      all.sort_unique([](int64_t k) { return "entry " + std::to_string(k); }, 0);  // throws on an entry in two parts
      EXPECT_EQ(triplets(all), triplets(m)) << fill << " " << width;
      if (width == 0) EXPECT_EQ(parts[2].entries(), 0);
      if (width == -1) EXPECT_EQ(parts[3].entries(), 0);
    }
}

}  // namespace
}  // namespace fugue::sparse
