// flow_arrays.h: host arrays for the tests of the stencil plugin's flow files (flow_files.h), seen
// through the ABI as the core hands them to a format (fugue_host_array), and what those tests share.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "fugue/sdk.hpp"

namespace flow_test {

namespace sdk = fugue::sdk;

// A zero-filled array of `dtype` and `shape` that owns its type and bytes.
class Array {
 public:
  Array(fugue_dtype dtype, std::vector<int64_t> shape)
      : type_(FUGUE_KIND_ARRAY, dtype, std::move(shape)),
        bytes_(static_cast<size_t>(sdk::elements(type_.shape)) * sdk::dtype_size(dtype)) {
    view_ = type_.view();
    host_ = fugue_host_array{sizeof(fugue_host_array), &view_, bytes_.empty() ? nullptr : bytes_.data(),
                             bytes_.size(), 0, 0, nullptr};
  }
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;

  const fugue_host_array& host() const { return host_; }
  const fugue_type& type() const { return view_; }
  const std::vector<int64_t>& shape() const { return type_.shape; }
  int64_t elements() const { return sdk::elements(type_.shape); }
  template <class T> T* data() { return reinterpret_cast<T*>(bytes_.data()); }
  template <class T> const T* data() const { return reinterpret_cast<const T*>(bytes_.data()); }
  const std::vector<unsigned char>& bytes() const { return bytes_; }
  double get(int64_t i) const { return sdk::HostView(const_cast<fugue_host_array&>(host_)).get(i); }
  void set(int64_t i, double v) { sdk::HostView(host_).set(i, v); }

 private:
  sdk::Type type_;
  fugue_type view_{};
  std::vector<unsigned char> bytes_;
  fugue_host_array host_{};
};

// The message of the sdk::InvalidArgument that f throws (a failure if it throws nothing or another).
template <class F>
std::string invalid_argument(F&& f) {
  try {
    f();
  } catch (const sdk::InvalidArgument& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected sdk::InvalidArgument, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected sdk::InvalidArgument, nothing thrown";
  return "";
}

inline bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace flow_test

#ifndef EXPECT_CONTAINS
#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)
#endif
