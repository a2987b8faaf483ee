// fugue_plan.variant (ABI 2.5) through the SDK's plan values: a plan's variant text crosses the C
// boundary and comes back, a longer one than the core's buffer is cut to it (never past it), and a plan
// the size of 2.3's carries none.
#include <gtest/gtest.h>

#include <string>

#include "fugue/abi_values.hpp"


TEST(PlanVariant, CrossesTheBoundaryAndIsCutToTheBuffer) {
  fugue::abi::Plan plan;
  plan.partitions.resize(1);
  plan.variant = "rows: a row per work-item, teams of 16 (order 12 in 9..16); NVIDIA GPU table";
  fugue::abi::PlanBuffer buffer(std::vector<uint32_t>{2});
  buffer.write(plan);
  EXPECT_EQ(fugue::abi::PlanBuffer::read(*buffer.get()).variant, plan.variant);

  plan.variant = std::string(1000, 'x');
  buffer.write(plan);
  const fugue_plan& c = *buffer.get();
  EXPECT_EQ(c.variant_capacity, fugue::abi::PlanBuffer::kVariantCapacity);
  EXPECT_EQ(c.variant[c.variant_capacity - 1], '\0');
  EXPECT_EQ(fugue::abi::PlanBuffer::read(c).variant, std::string(fugue::abi::PlanBuffer::kVariantCapacity - 1, 'x'));
}

TEST(PlanVariant, APlanOfAnEarlierMinorVersionCarriesNone) {
  fugue::abi::Plan plan;
  plan.partitions.resize(1);
  plan.variant = "registers";
  fugue::abi::PlanBuffer buffer(std::vector<uint32_t>{1});
  fugue_plan& c = *buffer.get();
  const char before = c.variant[0];
  c.struct_size = FUGUE_SIZE_UP_TO(fugue_plan, entry_teams);  // as a 2.3 core builds it
  buffer.write(plan);
  EXPECT_EQ(c.variant[0], before) << "nothing written past a 2.3 plan's end";
  EXPECT_EQ(fugue::abi::PlanBuffer::read(c).variant, "");
}

// fugue_plan.reads_once (ABI 2.17) crosses the boundary; a plan the size of 2.16's carries none and has
// nothing written past its end.
TEST(PlanVariant, ReadsOnceCrossesTheBoundaryFrom217) {
  fugue::abi::Plan plan;
  plan.partitions.resize(3);
  plan.reads_once = 0b101;
  fugue::abi::PlanBuffer buffer(std::vector<uint32_t>{3, 3, 1});
  buffer.write(plan);
  EXPECT_EQ(fugue::abi::PlanBuffer::read(*buffer.get()).reads_once, 0b101u);
  fugue_plan& c = *buffer.get();
  c.reads_once = 0;
  c.struct_size = FUGUE_SIZE_UP_TO(fugue_plan, columns_of);  // as a 2.16 core builds it
  buffer.write(plan);
  EXPECT_EQ(c.reads_once, 0u) << "nothing written past a 2.16 plan's end";
  c.reads_once = 0b11;  // what lies past a 2.16 plugin's plan is not read
  EXPECT_EQ(fugue::abi::PlanBuffer::read(c).reads_once, 0u);
}

// fugue_plan.own_kernels_alone (ABI 2.19) crosses the boundary; a plan the size of 2.17's carries none.
TEST(PlanVariant, OwnKernelsAloneCrossesTheBoundaryFrom219) {
  fugue::abi::Plan plan;
  plan.partitions.resize(2);
  plan.own_kernels_alone = true;
  fugue::abi::PlanBuffer buffer(std::vector<uint32_t>{1, 1});
  buffer.write(plan);
  EXPECT_TRUE(fugue::abi::PlanBuffer::read(*buffer.get()).own_kernels_alone);
  fugue_plan& c = *buffer.get();
  c.own_kernels_alone = 0;
  c.struct_size = FUGUE_SIZE_UP_TO(fugue_plan, reads_once);  // as a 2.17 core builds it
  buffer.write(plan);
  EXPECT_EQ(c.own_kernels_alone, 0u) << "nothing written past a 2.17 plan's end";
  c.own_kernels_alone = 1;  // what lies past a 2.17 plugin's plan is not read
  EXPECT_FALSE(fugue::abi::PlanBuffer::read(c).own_kernels_alone);
}
