// The GoogleTest fixture of the end-to-end tests: one E2eWorld per test in a directory of its
// own under $TMPDIR (kept, with its logs, when the test fails or TR_E2E_KEEP is set), and
// assertion helpers.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "tests/support/e2e/e2e_world.h"
#include "tests/support/e2e/journal_checks.h"

#define E2E_CONCAT_INNER(a, b) a##b
#define E2E_CONCAT(a, b) E2E_CONCAT_INNER(a, b)
#define E2E_ASSERT_OK(expr)                       \
  do {                                            \
    const absl::Status e2e_status_ = (expr);      \
    ASSERT_TRUE(e2e_status_.ok()) << e2e_status_; \
  } while (false)
#define E2E_ASSIGN_IMPL(var, lhs, expr)  \
  auto var = (expr);                     \
  ASSERT_TRUE(var.ok()) << var.status(); \
  lhs = *std::move(var)
// `lhs = *expr` after asserting that `expr` (a StatusOr) is OK.
#define E2E_ASSERT_OK_AND_ASSIGN(lhs, expr) \
  E2E_ASSIGN_IMPL(E2E_CONCAT(e2e_status_or_, __LINE__), lhs, expr)

namespace tr::e2e {

using namespace std::chrono_literals;

class E2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const char* base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base != nullptr ? base : "/tmp") + "/tr-e2e-" + info->name() + "-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    world_ = std::make_unique<E2eWorld>(dir_);
  }

  void TearDown() override {
    if (HasFailure() && world_) {
      std::cerr << world_->Diagnostics() << "\n";
    }
    world_.reset();
    std::error_code ignored;
    if (HasFailure() || std::getenv("TR_E2E_KEEP") != nullptr) {
      std::cerr << "kept " << dir_.string() << "\n";
    } else {
      std::filesystem::remove_all(dir_, ignored);
    }
  }

  E2eWorld& world() { return *world_; }

  std::filesystem::path dir_;
  std::unique_ptr<E2eWorld> world_;
};

}  // namespace tr::e2e
