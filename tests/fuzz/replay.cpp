// A main() for the fuzz targets where libFuzzer is not available (the wasm builds): runs each target's
// LLVMFuzzerTestOneInput once on every file named on the command line, in order, and prints how many
// it ran. Built with Emscripten's AddressSanitizer and UndefinedBehaviorSanitizer (CMake preset
// wasm-sanitize), it replays the committed corpus on wasm32, where size_t is 32 bits and a size
// product that is fine natively can wrap.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  int ran = 0;
  for (int i = 1; i < argc; ++i) {
    std::FILE* f = std::fopen(argv[i], "rb");
    if (!f) {
      std::fprintf(stderr, "replay: cannot open %s\n", argv[i]);
      return 2;
    }
    std::vector<std::uint8_t> bytes;
    std::uint8_t buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;) bytes.insert(bytes.end(), buffer, buffer + n);
    std::fclose(f);
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    ++ran;
  }
  std::printf("replay: %d inputs\n", ran);
  return 0;
}
