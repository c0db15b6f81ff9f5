#include "core/yaml_word.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "yaml-cpp/yaml.h"

namespace tr::core {
namespace {

// What yaml-cpp makes of `text` as a key and a value, in a block map and in a flow map, written
// through YamlWord (`word`) or as a string.
std::string Document(const std::string& text, bool word) {
  YAML::Emitter out;
  auto scalar = [&] {
    if (word) {
      out << YamlWord{text};
    } else {
      out << text;
    }
  };
  out << YAML::BeginMap;
  out << YAML::Key;
  scalar();
  out << YAML::Value;
  scalar();
  out << YAML::Key << "flow" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key;
  scalar();
  out << YAML::Value;
  scalar();
  out << YAML::EndMap << YAML::EndMap;
  return out.c_str();
}

TEST(YamlWordTest, WritesExactlyWhatYamlCppWritesForAString) {
  const std::vector<std::string> texts = {
      // words: written as they are, without yaml-cpp's check
      "current", "apiVersion", "lastUpgradeSeconds", "v1", "UpgradingTalos", "ClusterStatus",
      "true", "yes", "Off", "x",
      // not words: yaml-cpp's own check decides
      "null", "Null", "NULL", "~", "", "1abc", "9", "a-b", "a b", "a:b", "a: b", "a,b", "#a",
      "a #b", "team.example.com/owner", "-a", "b ", " b", "ünicode", "a\nb", "[a]", "{a}", "a]"};
  for (const std::string& text : texts) {
    EXPECT_EQ(Document(text, true), Document(text, false)) << "'" << text << "'";
  }
}

TEST(YamlWordTest, AWordIsALetterThenLettersAndDigitsButNoNullWord) {
  for (const char* word : {"a", "Z", "current", "apiVersion", "v1", "k8s", "true"}) {
    EXPECT_TRUE(IsPlainYamlWord(word)) << word;
  }
  for (const char* other :
       {"", "1a", "_a", "a_b", "a-b", "a.b", "a b", "null", "Null", "NULL", "~", "\xc3\xbc"}) {
    EXPECT_FALSE(IsPlainYamlWord(other)) << other;
  }
}

}  // namespace
}  // namespace tr::core
