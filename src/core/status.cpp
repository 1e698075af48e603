#include "status.hpp"

namespace posenc {
namespace {
thread_local char g_message[detail::kMessageCapacity + 1];
thread_local std::size_t g_length = 0;
}  // namespace

char* detail::message_buffer() {
  return g_message;
}

void detail::set_message_length(std::size_t n) {
  g_length = n;
  g_message[n] = '\0';
}

std::string_view message() {
  return {g_message, g_length};
}

Status out_of_memory(const char* what, double bytes) {
  return fail_with(Code::out_of_memory, "out of wasm memory: ", what, " needs ", bytes,
                   " bytes (a wasm module has at most 2 GiB); use smaller arguments");
}

}  // namespace posenc
