// Checks on the core's `posenc::Status` results, for the Catch2 tests (the core reports failure
// without exceptions: a failed Status plus a message in posenc::message()).
//
//   REQUIRE_OK(call) / CHECK_OK(call)      the call succeeds (the failure's message is shown if not)
//   CHECK_RANGE(call)                      it fails with Code::range and a non-empty message
//                                          (what CHECK_THROWS_AS(call, posenc::range_error) was)
//   CHECK_RANGE_WITH(call, matcher)        ... and the message matches, e.g. Contains("dModel")
//   CHECK_FAILS_WITH(call, code, matcher)  any failure code
#pragma once
#include <catch2/catch.hpp>

#include <string>

#include "status.hpp"

namespace test {

// A call's outcome, with the message copied at once (the next failure overwrites the buffer).
struct Outcome {
  bool ok;
  posenc::Code code;
  std::string message;
};

inline Outcome outcome(posenc::Status s) {
  return {s.ok(), s.code(), s.ok() ? std::string() : std::string(posenc::message())};
}

inline const char* code_name(posenc::Code c) {
  switch (c) {
    case posenc::Code::ok:
      return "ok";
    case posenc::Code::range:
      return "range";
    case posenc::Code::out_of_memory:
      return "out_of_memory";
  }
  return "unknown code";
}

}  // namespace test

namespace Catch {
template <>
struct StringMaker<posenc::Code> {
  static std::string convert(posenc::Code c) { return test::code_name(c); }
};
}  // namespace Catch

#define POSENC_CHECK_STATUS_(macro, ...)                                  \
  do {                                                                    \
    const ::test::Outcome posenc_outcome_ = ::test::outcome(__VA_ARGS__); \
    INFO(#__VA_ARGS__ << " failed: " << posenc_outcome_.message);         \
    macro(posenc_outcome_.ok);                                            \
  } while (false)

#define REQUIRE_OK(...) POSENC_CHECK_STATUS_(REQUIRE, __VA_ARGS__)
#define CHECK_OK(...) POSENC_CHECK_STATUS_(CHECK, __VA_ARGS__)

#define CHECK_FAILS_WITH(call, expected_code, matcher)             \
  do {                                                             \
    const ::test::Outcome posenc_outcome_ = ::test::outcome(call); \
    INFO(#call);                                                   \
    CHECK(posenc_outcome_.code == (expected_code));                \
    CHECK_THAT(posenc_outcome_.message, matcher);                  \
  } while (false)

#define CHECK_RANGE_WITH(call, matcher) CHECK_FAILS_WITH(call, ::posenc::Code::range, matcher)

#define CHECK_RANGE(...)                                                  \
  do {                                                                    \
    const ::test::Outcome posenc_outcome_ = ::test::outcome(__VA_ARGS__); \
    INFO(#__VA_ARGS__ << " -> " << posenc_outcome_.message);              \
    CHECK(posenc_outcome_.code == ::posenc::Code::range);                 \
    CHECK_FALSE(posenc_outcome_.message.empty());                         \
  } while (false)
