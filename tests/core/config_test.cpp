#include <cppless/config.hpp>

#include <gtest/gtest.h>

TEST(Config, DefaultsAndOverrides) {
  using none = cppless::config<>;
  static_assert(none::memory_mb == 1024 && none::timeout_s == 0 && none::ephemeral_storage_mb == 512);
  using c = cppless::config<cppless::with_memory<512>, cppless::with_timeout<30>, cppless::with_ephemeral_storage<1024>,
                            cppless::with_architecture<cppless::architecture::arm64>>;
  static_assert(c::memory_mb == 512 && c::timeout_s == 30 && c::ephemeral_storage_mb == 1024);
  static_assert(c::arch == cppless::architecture::arm64);
  EXPECT_EQ(c::values().describe(), "memory=512,timeout=30,storage=1024,arch=arm64");
}
