// The SDK's infer thunk, called through the C descriptor as the core calls it, with the program's
// declaration in an OUT entry (ABI 2.18): an operation that gives its result gets it checked and
// written; one that forgets it fails as a bug in the operation, and the core's entries stay untouched.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <fugue/sdk.hpp>

namespace {

using namespace fugue::sdk;

constexpr uint32_t kFloats = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32);

// p = (a, a): a "pair" made from one array; `forget` leaves p's type unset.
class MakePair : public Operation {
 public:
  explicit MakePair(bool forget) : forget_(forget) {
    name = "test.make_pair";
    doc = "a pair";
    operands = {out_kind("p", "pair", kFloats, "the pair"), in("a", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloats, "an array")};
  }
  void infer(const Call& call, std::vector<Type>& types) const override {
    if (forget_) return;
    Type p(FUGUE_KIND_PLUGIN, call.operand(1).dtype, shape_of(call.operand(1)));
    p.kind_name = "pair";
    types[0] = p;
  }
  Plan plan(const Call& call) const override { return elementwise_plan(call, FUGUE_LEVEL_DEVICE, 0); }
  void execute(const Call&, const fugue_device_services&) const override {}
  fugue_cost cost(const Call&) const override { return {sizeof(fugue_cost), 0, 0}; }
  void reference(const Call&, fugue_host_array*) const override {}

 private:
  bool forget_;
};

struct InferCall {
  int64_t a_shape[1] = {6};
  int64_t declared_shape[1] = {6};
  int64_t out_shape[4] = {-1, -1, -1, -1};
  fugue_type operands[2]{};  // what the core hands over: p as the program declared it, then a
  fugue_type types[2]{};     // where infer writes: p's room, then a
  fugue_call call{};
  char message[512] = {};
  fugue_error error{sizeof(fugue_error), sizeof message, message};

  InferCall() {
    fugue_type& declared = operands[0];
    declared.struct_size = sizeof(fugue_type);
    declared.kind = FUGUE_KIND_PLUGIN;
    declared.dtype = FUGUE_DTYPE_F32;
    declared.rank = 1;
    declared.shape = declared_shape;
    declared.kind_name = "pair";
    fugue_type& a = operands[1];
    a.struct_size = sizeof(fugue_type);
    a.kind = FUGUE_KIND_ARRAY;
    a.dtype = FUGUE_DTYPE_F32;
    a.rank = 1;
    a.shape = a_shape;
    types[0].struct_size = sizeof(fugue_type);
    types[0].shape = out_shape;
    types[0].shape_capacity = 4;
    types[1] = a;
    call.struct_size = sizeof(fugue_call);
    call.num_operands = 2;
    call.operands = operands;
  }
  fugue_status infer(Operation& op) {
    const fugue_op_desc* d = op.descriptor();
    return d->infer(d, &call, types, &error);
  }
};

TEST(SdkInfer, AResultInferGivesIsWritten) {
  MakePair op(false);
  InferCall c;
  ASSERT_EQ(c.infer(op), FUGUE_OK) << c.message;
  EXPECT_EQ(c.types[0].kind, FUGUE_KIND_PLUGIN);
  EXPECT_EQ(c.types[0].dtype, FUGUE_DTYPE_F32);
  ASSERT_EQ(c.types[0].rank, 1u);
  EXPECT_EQ(c.out_shape[0], 6);
  ASSERT_NE(c.types[0].kind_name, nullptr);
  EXPECT_STREQ(c.types[0].kind_name, "pair");
}

TEST(SdkInfer, AResultInferForgetsFailsAsABugEvenWhenTheProgramDeclaredIt) {
  MakePair op(true);
  InferCall c;
  EXPECT_EQ(c.infer(op), FUGUE_ERROR_INTERNAL);
  const std::string message = c.message;
  EXPECT_NE(message.find("operand p: infer produced"), std::string::npos) << message;
  EXPECT_NE(message.find("a bug in the operation"), std::string::npos) << message;
  // Nothing was written: the core's room for p is as it was.
  EXPECT_EQ(c.types[0].kind, FUGUE_KIND_NONE);
  EXPECT_EQ(c.types[0].rank, 0u);
  EXPECT_EQ(c.out_shape[0], -1);
  EXPECT_EQ(c.types[0].kind_name, nullptr);
}

}  // namespace
