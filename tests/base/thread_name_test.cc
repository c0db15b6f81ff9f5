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

// The name a new thread has after naming itself `name`.
std::string NamedOnAThread(const char* name) {
  std::string named;
  std::thread([&] {
    NameThisThread(name);
    named = OwnName();
  }).join();
  return named;
}

TEST(ThreadNameTest, NamesTheCallingThreadOnly) {
  const std::string before = OwnName();
  EXPECT_EQ(NamedOnAThread("reconcile"), "reconcile");
  EXPECT_EQ(OwnName(), before);
}

TEST(ThreadNameTest, ALongNameKeepsItsFirstFifteenCharacters) {
  EXPECT_EQ(NamedOnAThread("background-step-of-a-cluster"), "background-step");
}

}  // namespace
}  // namespace tr
