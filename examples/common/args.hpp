// Tiny "--name value" option reader shared by the examples (keeps them dependency-free).
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>

namespace example {

inline const char* option(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}

inline long option_long(int argc, char** argv, const char* name, long fallback) {
  const char* v = option(argc, argv, name, nullptr);
  return v ? std::strtol(v, nullptr, 10) : fallback;
}

}  // namespace example
