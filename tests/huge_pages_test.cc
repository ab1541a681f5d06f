// Tests of kvprefix/huge_pages.h: large blocks are advised (the kernel
// reports their memory eligible for transparent huge pages), small ones are
// left alone, and the allocator and the containers built on it behave as
// the standard ones.
#include "kvprefix/huge_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kvprefix/sequence_list.h"

namespace kvprefix {
namespace {

// The THP mode the kernel runs in: "[always]", "[madvise]", "[never]", or
// "" without THP.
std::string ThpMode() {
  std::ifstream file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(file, modes);
  for (const char* mode : {"[always]", "[madvise]", "[never]"}) {
    if (modes.find(mode) != std::string::npos) return mode;
  }
  return "";
}

// True when THP can back advised memory.
bool ThpAvailable() {
  return ThpMode() == "[always]" || ThpMode() == "[madvise]";
}

// The THPeligible field of /proc/self/smaps for the mapping holding
// `address`: 1 when the kernel may back it with huge pages. -1 if not found.
int ThpEligible(const void* address) {
  const auto target = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= target && target < end;
    } else if (inside && line.starts_with("THPeligible:")) {
      return std::atoi(line.c_str() + 12);
    }
  }
  return -1;
}

// A huge page inside [data, data + bytes): the first 2 MiB-aligned one.
const char* FirstWholeHugePage(const void* data) {
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  return reinterpret_cast<const char*>((begin + kHugePageBytes - 1) &
                                       ~(kHugePageBytes - 1));
}

TEST(HugePagesTest, AdvisedBlockIsEligibleWhereThpIsOn) {
  if (!ThpAvailable()) GTEST_SKIP() << "transparent huge pages are off";
  // Above glibc's largest mmap threshold (32 MiB): always a fresh mapping.
  constexpr std::size_t kBytes = 32 * kHugePageBytes;
  const std::unique_ptr<char[]> block(new char[kBytes]);
  const char* page = FirstWholeHugePage(block.get());
  if (ThpMode() == "[madvise]") {
    EXPECT_EQ(ThpEligible(page), 0) << "eligible before the advice";
  }
  AdviseHugePages(block.get(), kBytes);
  EXPECT_EQ(ThpEligible(page), 1);
}

TEST(HugePagesTest, AllocatorAdvisesLargeBlocks) {
  if (!ThpAvailable()) GTEST_SKIP() << "transparent huge pages are off";
  HugePageVector<std::int32_t> tokens(4 * kHugePageBytes / 4, 7);
  EXPECT_EQ(ThpEligible(FirstWholeHugePage(tokens.data())), 1);
  EXPECT_EQ(tokens[12345], 7);
}

TEST(HugePagesTest, SmallOrEmptyBlocksAreLeftAlone) {
  // Nothing to advise, and no crash on null or on a block below 2 MiB.
  AdviseHugePages(nullptr, 0);
  std::vector<char> small(kHugePageBytes - 1, 'x');
  AdviseHugePages(small.data(), small.size());
  EXPECT_EQ(small.back(), 'x');
}

TEST(HugePagesTest, ContainersBehaveAsTheStandardOnes) {
  HugePageVector<int> numbers = {3, 1, 2};
  numbers.resize(1 << 20, 9);  // 4 MiB: a large block
  EXPECT_EQ(numbers[0], 3);
  EXPECT_EQ(numbers[2], 2);
  EXPECT_EQ(numbers.back(), 9);
  HugePageHashMap<std::uint64_t, int> map;
  for (int i = 0; i < 300000; ++i) map.emplace(std::uint64_t(i) << 32, i);
  EXPECT_EQ(map.size(), 300000u);
  EXPECT_EQ(map.at(std::uint64_t{4321} << 32), 4321);
  EXPECT_EQ(HugePageAllocator<int>(), HugePageAllocator<char>());
}

TEST(HugePagesTest, SequenceListKeepsItsTokens) {
  SequenceList list;
  for (Token t = 0; t < 1 << 20; ++t) list.PushToken(t);  // 4 MiB of tokens
  list.CloseSequence();
  list.Append(std::vector<Token>{-1, -2});
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].size(), std::size_t{1} << 20);
  EXPECT_EQ(list[0][999999], 999999);
  EXPECT_EQ(list[1][1], -2);
  EXPECT_GE(list.memory_bytes(), (std::size_t{1} << 20) * sizeof(Token));
}

}  // namespace
}  // namespace kvprefix
