#include "status.hpp"

namespace posenc {
namespace {
thread_local char g_message[detail::kMessageCapacity + 1];
thread_local std::size_t g_length = 0;
}  // namespace

Status detail::fail_parts(Code code, std::initializer_list<Part> parts) {
  char* p = g_message;
  char* const end = g_message + kMessageCapacity;
  const auto put = [&](std::string_view v) {
    for (char ch : v)
      if (p < end) *p++ = ch;
  };
  for (const Part& part : parts) {
    char buf[32];
    int n = 0;
    switch (part.kind) {
      case Part::Kind::text:
        put(part.text);
        continue;
      case Part::Kind::boolean:
        put(part.integer ? "true" : "false");
        continue;
      case Part::Kind::integer:
        n = std::snprintf(buf, sizeof buf, "%lld", part.integer);
        break;
      case Part::Kind::real:
        if (std::isnan(part.real))
          n = std::snprintf(buf, sizeof buf, "NaN");
        else if (std::isinf(part.real))
          n = std::snprintf(buf, sizeof buf, "%sInfinity", part.real < 0 ? "-" : "");
        else
          n = std::snprintf(buf, sizeof buf, "%.10g", part.real);
        break;
    }
    put(std::string_view(buf, n > 0 ? std::size_t(n) : 0));
  }
  g_length = std::size_t(p - g_message);
  g_message[g_length] = '\0';
  return Status(code);
}

std::string_view message() {
  return {g_message, g_length};
}

Status out_of_memory(const char* what, double bytes) {
  return fail_with(Code::out_of_memory, "out of wasm memory: ", what, " needs ", bytes,
                   " bytes (a wasm module has at most 2 GiB); use smaller arguments");
}

}  // namespace posenc
