// The manual says one thing once: where several pages state the same fact, they agree with each
// other and with the code.
//  - what a snapshot or a checkout reads: every page that lists it names schematics/ too;
//  - force pushes: the status branch never, the proposal branches with force-with-lease;
//  - durations: the units a page calls an error are refused by the parser, and a unit the
//    manual's own examples use (minimumReleaseAge: 7d) is named as the exception;
//  - one namespace for the reconciler, and every `helm install` has it created.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "core/duration.h"
#include "core/update_policy.h"
#include "gitsource/status_refspec.h"
#include "tests/support/manual_pages.h"

namespace tr {
namespace {

const std::string kManualSource = TR_SOURCE_DIR;

struct Sentence {
  std::string page;
  std::string text;  // line breaks joined with spaces
};

// The sentences of every page, fenced blocks left out: a sentence ends at ". " or at the end
// of a paragraph.
std::vector<Sentence> Sentences() {
  std::vector<Sentence> sentences;
  for (const std::string& page : test_support::ManualPages(kManualSource)) {
    std::string paragraph;
    bool fenced = false;
    auto flush = [&] {
      size_t from = 0;
      for (size_t end; (end = paragraph.find(". ", from)) != std::string::npos; from = end + 2) {
        sentences.push_back({page, paragraph.substr(from, end + 1 - from)});
      }
      if (from < paragraph.size()) sentences.push_back({page, paragraph.substr(from)});
      paragraph.clear();
    };
    for (const std::string& line : std::vector<std::string>(
             absl::StrSplit(test_support::ReadPage(kManualSource, page), '\n'))) {
      if (line.starts_with("```")) fenced = !fenced;
      if (fenced || line.starts_with("```") || line.empty()) {
        flush();
        continue;
      }
      paragraph += (paragraph.empty() ? "" : " ") + line;
    }
    flush();
  }
  return sentences;
}

bool Has(const std::string& text, const char* what) { return text.find(what) != std::string::npos; }

// A sentence that lists what is read ("reads `reconciler.yaml`, `clusters/*.yaml` ...", "Only
// ... are read") names the three places a snapshot and a checkout read (gitsource/snapshot.cc,
// gitsource/commit_snapshot.cc).
TEST(OneVoiceTest, EveryListOfWhatIsReadNamesSchematics) {
  static const std::regex kReadList(R"re(\b([Rr]eads?( only)? `|are read\b))re");
  size_t lists = 0;
  for (const Sentence& s : Sentences()) {
    if (!Has(s.text, "`reconciler.yaml`") || !Has(s.text, "`clusters/")) continue;
    if (!std::regex_search(s.text, kReadList)) continue;
    ++lists;
    EXPECT_TRUE(Has(s.text, "`schematics/")) << s.page << ": " << s.text;
  }
  EXPECT_GE(lists, 4u) << "git-source, architecture, validate-and-plan and profiles each list it";
}

// The reconciler force-pushes its proposal branches (the refspec starts with '+'): no page may
// say it never force-pushes without saying which branch it means, and docs/git-source.md says
// how the proposal branches are pushed.
TEST(OneVoiceTest, ForcePushesAreSaidForWhatTheyAre) {
  const absl::StatusOr<std::string> refspec = gitsource::ProposalPushRefspec(
      "talos-reconciler/update/prod", "main", "talos-reconciler/status");
  ASSERT_TRUE(refspec.ok()) << refspec.status();
  ASSERT_TRUE(refspec->starts_with("+")) << "proposal branches are no longer forced: update the "
                                            "manual and this test";
  bool git_source_says_it = false;
  for (const Sentence& s : Sentences()) {
    if (std::regex_search(s.text, std::regex(R"re(\bnever (force|forces\b))re"))) {
      EXPECT_TRUE(Has(s.text, "status branch")) << s.page << ": " << s.text;
    }
    git_source_says_it =
        git_source_says_it || (s.page == "docs/git-source.md" && Has(s.text, "force-with-lease") &&
                               Has(s.text, "proposal"));
  }
  EXPECT_TRUE(git_source_says_it);
}

// docs/profiles.md names the units a profile's durations refuse; the parser refuses each, and a
// refused unit that the manual's minimumReleaseAge examples use is named there as the exception.
TEST(OneVoiceTest, DurationUnitsCalledErrorsAreErrorsAndTheExceptionIsSaid) {
  std::string units;
  for (const Sentence& s : Sentences()) {
    if (s.page == "docs/profiles.md" && Has(s.text, "another unit") && Has(s.text, "is an error")) {
      units = s.text;
    }
  }
  ASSERT_FALSE(units.empty()) << "docs/profiles.md no longer says which units are refused";
  static const std::regex kExample("`([0-9][0-9a-z]*)`");
  size_t refused = 0;
  for (std::sregex_iterator it(units.begin(), units.end(), kExample), end; it != end; ++it) {
    const std::string example = (*it)[1];
    if (core::ParseDuration(example).ok()) continue;  // an example of what is accepted
    ++refused;
    if (core::ParseReleaseAge(example).ok()) {
      EXPECT_TRUE(Has(units, "minimumReleaseAge"))
          << example << " is a valid release age: " << units;
    }
  }
  EXPECT_GE(refused, 2u) << units;
  // Every release age the manual writes parses.
  static const std::regex kAge(R"re(minimumReleaseAge: ([0-9a-z]+))re");
  for (const std::string& page : test_support::ManualPages(kManualSource)) {
    const std::string text = test_support::ReadPage(kManualSource, page);
    for (std::sregex_iterator it(text.begin(), text.end(), kAge), end; it != end; ++it) {
      EXPECT_TRUE(core::ParseReleaseAge((*it)[1].str()).ok()) << page << ": " << (*it)[0];
    }
  }
}

// The reconciler lives in one namespace on every page (an application's chart, with the
// sidecar, in its own); a `helm install` into a namespace creates it or follows a page's
// `kubectl create namespace`.
TEST(OneVoiceTest, OneNamespaceAndEveryInstallHasIt) {
  static const std::regex kNamespace(R"re((?:^|\s)(?:-n|--namespace)[ =]([a-z0-9-]+))re");
  size_t commands = 0;
  for (const std::string& page : test_support::ManualPages(kManualSource)) {
    bool created = false;
    for (const std::string& line : std::vector<std::string>(
             absl::StrSplit(test_support::ReadPage(kManualSource, page), '\n'))) {
      if (!line.starts_with("kubectl ") && !line.starts_with("helm ")) continue;
      created = created || line.starts_with("kubectl create namespace talos-system");
      std::smatch m;
      if (!std::regex_search(line, m, kNamespace)) continue;
      ++commands;
      if (!Has(line, "app-with-sidecar")) {
        EXPECT_EQ(m[1], "talos-system") << page << ": " << line;
      }
      if (line.starts_with("helm install ")) {
        EXPECT_TRUE(created || Has(line, "--create-namespace")) << page << ": " << line;
      }
    }
  }
  EXPECT_GE(commands, 10u);
}

}  // namespace
}  // namespace tr
