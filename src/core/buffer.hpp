// An owning array that reports allocation failure instead of throwing (std::vector cannot, in a
// build without exceptions: it would abort the module). For trivially copyable element types.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>

#include "status.hpp"

namespace posenc {

template <class T>
class Buffer {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      std::free(data_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ~Buffer() { std::free(data_); }

  // Replaces the contents by n zero-initialised values; `what` names them in the out-of-memory message.
  // n = the product of `factors` (checked_product: refused, not wrapped, past size_t).
  Status allocate(std::initializer_list<std::size_t> factors, const char* what) {
    std::size_t n = 0;
    POSENC_TRY(checked_product(n, factors, what));
    return allocate(n, what);
  }
  Status allocate(std::size_t n, const char* what) {
    std::free(std::exchange(data_, nullptr));
    size_ = 0;
    if (n > SIZE_MAX / sizeof(T)) return out_of_memory(what, double(n) * sizeof(T));
    if (n == 0) return {};
    if (!heap_can_hold(n * sizeof(T))) return out_of_memory(what, double(n) * sizeof(T));
    data_ = static_cast<T*>(std::calloc(n, sizeof(T)));
    if (!data_) return out_of_memory(what, double(n) * sizeof(T));
    size_ = n;
    return {};
  }

  // n copies of `value`.
  Status assign(std::size_t n, T value, const char* what) {
    POSENC_TRY(allocate(n, what));
    for (std::size_t i = 0; i < n; ++i) data_[i] = value;
    return {};
  }

  // A copy of `values`.
  Status assign(std::span<const T> values, const char* what) {
    POSENC_TRY(allocate(values.size(), what));
    if (!values.empty()) std::memcpy(data_, values.data(), values.size() * sizeof(T));
    return {};
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  std::span<T> span() { return {data_, size_}; }
  std::span<const T> span() const { return {data_, size_}; }
  operator std::span<T>() { return span(); }
  operator std::span<const T>() const { return span(); }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace posenc
