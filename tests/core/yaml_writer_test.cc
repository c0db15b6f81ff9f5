#include "core/yaml_writer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "yaml-cpp/yaml.h"

namespace tr::core {
namespace {

// Pieces of text that exercise every branch of the escaping: printable ASCII, what has a short
// escape, other controls, DEL, the C1 range and the non-breaking space, the byte order mark,
// UTF-8 of two, three and four bytes, and bytes that are not UTF-8 (a stray continuation byte,
// sequences cut short, an encoded surrogate, a noncharacter, a code point above U+10FFFF, a
// five-byte lead).
const std::vector<std::string> kPieces = {"a",
                                          "Z",
                                          "7",
                                          " ",
                                          ":",
                                          "#",
                                          "- ",
                                          "{",
                                          "}",
                                          "null",
                                          "~",
                                          "\"",
                                          "\\",
                                          "\n",
                                          "\t",
                                          "\r",
                                          "\b",
                                          "\f",
                                          "\x01",
                                          "\x1f",
                                          "\x7f",
                                          "\xc2\x80",
                                          "\xc2\xa0",
                                          "\xc2\xa1",
                                          "\xc3\xbf",
                                          "\xc4\x80",
                                          "\xef\xbb\xbf",
                                          "\xe2\x80\xa8",
                                          "\xf0\x9f\x98\x80",
                                          "\xff",
                                          "\x80",
                                          "\xc3",
                                          "\xe2\x82",
                                          "\xed\xa0\x80",
                                          "\xef\xbf\xbe",
                                          "\xef\xb7\x90",
                                          "\xf4\x90\x80\x80",
                                          "\xf8\x88\x80\x80"};

std::string YamlCppDoubleQuoted(const std::string& text) {
  YAML::Emitter out;
  out << YAML::DoubleQuoted << text;
  return out.c_str();
}

TEST(YamlWriterTest, DoubleQuotesEveryTextExactlyAsYamlCppDoes) {
  std::mt19937 random(53);
  for (int i = 0; i < 5000; ++i) {
    std::string text;
    const int pieces = static_cast<int>(random() % 12);
    for (int p = 0; p < pieces; ++p) text += kPieces[random() % kPieces.size()];
    std::string quoted;
    AppendDoubleQuoted(quoted, text);
    ASSERT_EQ(quoted, YamlCppDoubleQuoted(text)) << "text: " << testing::PrintToString(text);
  }
}

// Every shape the status file uses, written by both.
TEST(YamlWriterTest, WritesADocumentExactlyAsYamlCppsEmitterDoes) {
  YamlWriter mine;
  mine.Plain("apiVersion", "example.dev/v1");
  mine.String("cluster", "prod: \"eu\"");
  mine.Flow("fence", FlowMap().Number("generation", 4).String("holder", "r-0").Take());
  mine.BeginMap("labels");
  mine.String("app.kubernetes.io/name", "web");
  mine.EndMap();
  mine.BeginMap("talos");
  mine.String("current", "1.11.6");
  mine.BeginMap("schematic");
  mine.String("target", "abc");
  mine.EndMap();
  mine.Word("status", "idle");
  mine.EndMap();
  mine.BeginSeq("conditions", false);
  for (const bool ready : {true, false}) {
    mine.BeginItem();
    mine.Word("type", "Ready");
    mine.Bool("healthy", ready);
    mine.Number("seconds", int64_t{-3});
    mine.EndItem();
  }
  mine.EndSeq();
  mine.BeginSeq("history", false);
  mine.FlowItem(FlowMap().String("at", "2026-12-05T00:00:00Z").String("event", "up").Take());
  mine.EndSeq();
  mine.BeginSeq("nodes", true);
  mine.EndSeq();
  mine.BeginMap("rollout");
  mine.BeginSeq("images", false);
  mine.StringItem("img:v1");
  mine.EndSeq();
  mine.BeginSeq("staged", true);
  mine.EndSeq();
  mine.EndMap();

  YAML::Emitter theirs;
  const auto quoted = [&](const char* key, const std::string& value) {
    theirs << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << value;
  };
  theirs << YAML::BeginMap;
  theirs << YAML::Key << "apiVersion" << YAML::Value << "example.dev/v1";
  quoted("cluster", "prod: \"eu\"");
  theirs << YAML::Key << "fence" << YAML::Value << YAML::Flow << YAML::BeginMap;
  theirs << YAML::Key << "generation" << YAML::Value << 4;
  quoted("holder", "r-0");
  theirs << YAML::EndMap;
  theirs << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
  quoted("app.kubernetes.io/name", "web");
  theirs << YAML::EndMap;
  theirs << YAML::Key << "talos" << YAML::Value << YAML::BeginMap;
  quoted("current", "1.11.6");
  theirs << YAML::Key << "schematic" << YAML::Value << YAML::BeginMap;
  quoted("target", "abc");
  theirs << YAML::EndMap;
  theirs << YAML::Key << "status" << YAML::Value << "idle";
  theirs << YAML::EndMap;
  theirs << YAML::Key << "conditions" << YAML::Value << YAML::BeginSeq;
  for (const bool ready : {true, false}) {
    theirs << YAML::BeginMap;
    theirs << YAML::Key << "type" << YAML::Value << "Ready";
    theirs << YAML::Key << "healthy" << YAML::Value << ready;
    theirs << YAML::Key << "seconds" << YAML::Value << -3;
    theirs << YAML::EndMap;
  }
  theirs << YAML::EndSeq;
  theirs << YAML::Key << "history" << YAML::Value << YAML::BeginSeq;
  theirs << YAML::Flow << YAML::BeginMap;
  quoted("at", "2026-12-05T00:00:00Z");
  quoted("event", "up");
  theirs << YAML::EndMap << YAML::EndSeq;
  theirs << YAML::Key << "nodes" << YAML::Value << YAML::BeginSeq << YAML::EndSeq;
  theirs << YAML::Key << "rollout" << YAML::Value << YAML::BeginMap;
  theirs << YAML::Key << "images" << YAML::Value << YAML::BeginSeq << YAML::DoubleQuoted << "img:v1"
         << YAML::EndSeq;
  theirs << YAML::Key << "staged" << YAML::Value << YAML::BeginSeq << YAML::EndSeq;
  theirs << YAML::EndMap;
  theirs << YAML::EndMap;

  EXPECT_EQ(mine.Take(), std::string(theirs.c_str()) + "\n");
}

// A key or a word it cannot write as it is goes double-quoted, and reads back as what it was.
TEST(YamlWriterTest, WhatIsNotPlainIsQuotedAndReadsBackUnchanged) {
  const std::vector<std::string> texts = {"null",
                                          "~",
                                          "",
                                          "a: b",
                                          "#x",
                                          "-a",
                                          "a b",
                                          "[x]",
                                          "x\ny",
                                          "ünicode",
                                          "team.example.com/owner"};
  for (const std::string& text : texts) {
    YamlWriter out;
    out.Word(text, text);
    const YAML::Node read = YAML::Load(out.Take());
    ASSERT_TRUE(read.IsMap()) << text;
    ASSERT_EQ(read.size(), 1u) << text;
    EXPECT_EQ(read.begin()->first.as<std::string>(), text);
    EXPECT_EQ(read.begin()->second.as<std::string>(), text);
  }
}

TEST(YamlWriterTest, AWordIsALetterThenLettersAndDigitsButNoNullWord) {
  for (const char* word : {"a", "Z", "current", "apiVersion", "v1", "k8s", "true"}) {
    EXPECT_TRUE(IsPlainYamlWord(word)) << word;
  }
  for (const char* other :
       {"", "1a", "_a", "a_b", "a-b", "a.b", "a b", "null", "Null", "NULL", "~", "\xc3\xbc"}) {
    EXPECT_FALSE(IsPlainYamlWord(other)) << other;
  }
}

TEST(YamlWriterTest, APlainKeyIsWhatALabelKeyMayBe) {
  for (const char* key : {"env", "app.kubernetes.io/name", "a-b_c", "9lives"}) {
    EXPECT_TRUE(IsPlainKey(key)) << key;
  }
  for (const char* other : {"", "-a", ".a", "/a", "a b", "a:b", "null", "~", "\xc3\xbc"}) {
    EXPECT_FALSE(IsPlainKey(other)) << other;
  }
}

}  // namespace
}  // namespace tr::core
