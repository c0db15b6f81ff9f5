// A thread's name as /proc shows it: what `top -H` and fleet_scale_bench read.
#include "base/thread_name.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

namespace tr {
namespace {

// The calling thread's name, from /proc.
std::string OwnName() {
  std::ifstream comm("/proc/self/task/" + std::to_string(syscall(SYS_gettid)) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

TEST(ThreadNameTest, NamesTheCallingThreadOnly) {
  const std::string before = OwnName();
  std::string named;
  std::thread([&] {
    NameThisThread("reconcile");
    named = OwnName();
  }).join();
  EXPECT_EQ(named, "reconcile");
  EXPECT_EQ(OwnName(), before);
}

TEST(ThreadNameTest, ALongNameKeepsItsFirstFifteenCharacters) {
  std::string named;
  std::thread([&] {
    NameThisThread("background-step-of-a-cluster");
    named = OwnName();
  }).join();
  EXPECT_EQ(named, "background-step");
}

}  // namespace
}  // namespace tr
