#include "tests/notify_preview/preview.h"

#include <array>
#include <cstdio>

#include "reconciler/features/notify/message_format.h"
#include "tests/notify_preview/sample_notification.h"
#include "tests/notify_preview/text_box.h"

namespace tr::notify_preview {
namespace {

using Json = nlohmann::json;
using Rows = std::vector<std::pair<std::string, std::string>>;

// Text as the chat tools show *bold* and `code`: the marks go (a text preview has no bold).
std::string WithoutMarks(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c != '*' && c != '`') out += c;
  }
  return out;
}

void Append(std::vector<std::string>& to, const std::vector<std::string>& lines) {
  to.insert(to.end(), lines.begin(), lines.end());
}

// Every leaf of `value` as "a.b" and its value, in the body's order.
void Flatten(const Json& value, const std::string& path, Rows& rows) {
  if (!value.is_object()) {
    rows.emplace_back(path, value.is_string() ? value.get<std::string>() : value.dump());
    return;
  }
  for (const auto& [key, child] : value.items()) {
    Flatten(child, path.empty() ? key : path + "." + key, rows);
  }
}

// Your receiver's view: the signed POST and what its fields hold.
std::string JsonPreview(const Json& payload) {
  Rows rows;
  Flatten(payload, "", rows);
  std::vector<std::string> top{"POST application/json",
                               "webhook-id, webhook-timestamp, webhook-signature", "---"};
  Append(top, Table(rows));
  return Boxed(top);
}

std::string SlackPreview(const Json& payload) {
  return Boxed({"<your webhook's app>  APP", WithoutMarks(payload.at("text"))});
}

// Block Kit sections and context as Slack stacks them; the one message of the rollout.
std::string SlackBotPreview(const Json& payload) {
  std::vector<std::string> lines{"<your bot>  APP"};
  for (const Json& block : payload.at("blocks")) {
    if (block.at("type") == "section") {
      Append(lines, {WithoutMarks(block.at("text").at("text"))});
    } else if (block.at("type") == "context") {
      for (const Json& element : block.at("elements")) lines.push_back(WithoutMarks(element.at("text")));
    }
  }
  return Boxed(lines) + "one message per rollout, edited as it goes (chat.update of its ts)\n";
}

// An embed: colour bar marked ┃, title, description, inline fields in a row, footer and time.
std::string DiscordPreview(const Json& payload) {
  const Json& embed = payload.at("embeds").at(0);
  std::vector<std::string> edged{embed.value("title", ""), embed.value("description", ""), ""};
  std::string names, values;
  const size_t column = (kBoxWidth - 2) / 3;
  for (const Json& field : embed.at("fields")) {
    names += PadRight(field.value("name", ""), column);
    values += PadRight(field.value("value", ""), column);
  }
  edged.push_back(names);
  edged.push_back(values);
  edged.push_back("");
  edged.push_back(embed.at("footer").value("text", "") + " • " + embed.value("timestamp", ""));
  char colour[16];
  std::snprintf(colour, sizeof colour, "#%06X", embed.value("color", 0u));
  return Boxed({"<your webhook's name>  APP"}, edged, "┃ ") + "┃ colour bar " + colour +
         "; one message per rollout, edited as it goes\n";
}

// An Adaptive Card's body: a container's band (marked ▓, its style named below the box),
// text blocks, fact sets as a table.
std::string TeamsPreview(const Json& payload) {
  const Json& card = payload.at("attachments").at(0).at("content");
  std::vector<std::string> lines{"Workflows  (posted by your flow)"};
  std::string legend;
  for (const Json& element : card.at("body")) {
    const std::string type = element.at("type");
    if (type == "Container") {
      lines.push_back("---");
      for (const Json& item : element.at("items")) lines.push_back("▓ " + item.value("text", ""));
      lines.push_back("---");
      legend = "▓ band: container style \"" + element.value("style", "default") + "\"";
    } else if (type == "TextBlock") {
      lines.push_back(element.at("text"));
    } else if (type == "FactSet") {
      Rows rows;
      for (const Json& fact : element.at("facts")) rows.emplace_back(fact.at("title"), fact.at("value"));
      lines.push_back("");
      Append(lines, Table(rows));
    }
  }
  return Boxed(lines) + legend + ", card version " + card.value("version", "?") + "\n";
}

// One attachment: title, text, short fields two to a row; its colour bar marked ┃.
std::string MattermostPreview(const Json& payload) {
  const Json& attachment = payload.at("attachments").at(0);
  std::vector<std::string> edged{attachment.value("title", ""), attachment.value("text", "")};
  const Json& fields = attachment.at("fields");
  const size_t column = (kBoxWidth - 2) / 2;
  for (size_t i = 0; i < fields.size(); i += 2) {
    const Json* right = i + 1 < fields.size() ? &fields[i + 1] : nullptr;
    edged.push_back("");
    edged.push_back(PadRight(fields[i].value("title", ""), column) +
                    (right ? right->value("title", "") : ""));
    edged.push_back(PadRight(fields[i].value("value", ""), column) +
                    (right ? right->value("value", "") : ""));
  }
  return Boxed({payload.value("username", "") + "  BOT"}, edged, "┃ ") + "┃ colour bar " +
         attachment.value("color", "") + "\n";
}

// The text, then the card: header, text paragraphs, decorated texts as a table.
std::string GoogleChatPreview(const Json& payload) {
  std::vector<std::string> lines{"<your webhook's name>  App", WithoutMarks(payload.at("text"))};
  for (const Json& with_id : payload.at("cardsV2")) {
    const Json& card = with_id.at("card");
    lines.push_back("---");
    lines.push_back(card.at("header").value("title", ""));
    lines.push_back(card.at("header").value("subtitle", ""));
    for (const Json& section : card.at("sections")) {
      lines.push_back("---");
      Rows rows;
      for (const Json& widget : section.at("widgets")) {
        if (widget.contains("textParagraph")) lines.push_back(widget["textParagraph"].at("text"));
        if (widget.contains("decoratedText")) {
          rows.emplace_back(widget["decoratedText"].value("topLabel", ""),
                            widget["decoratedText"].value("text", ""));
        }
      }
      Append(lines, Table(rows));
    }
  }
  return Boxed(lines) + "in the thread \"" + payload.at("thread").value("threadKey", "") +
         "\" (every message of this rollout)\n";
}

constexpr std::array<FormatPreview, 7> kPreviews{{
    {"json", "your receiver", JsonPreview},
    {"slack", "Slack (incoming webhook)", SlackPreview},
    {"slack-bot", "Slack (bot)", SlackBotPreview},
    {"teams", "Microsoft Teams", TeamsPreview},
    {"discord", "Discord", DiscordPreview},
    {"mattermost", "Mattermost", MattermostPreview},
    {"googlechat", "Google Chat", GoogleChatPreview},
}};

}  // namespace

std::span<const FormatPreview> Previews() { return kPreviews; }

std::string PreviewSection() {
  std::string out;
  for (const FormatPreview& p : Previews()) {
    const auto format = reconciler::notify::MessageFormatNamed(p.format);
    const Json payload = Json::parse(format->Render(SampleNotification(), kSampleDeliveryId));
    out += "`format=" + std::string(p.format) + "`, as " + std::string(p.tool) + " shows it:\n\n";
    out += "```text\n" + p.preview(payload) + "```\n\n";
    out += "<details><summary>The <code>" + std::string(p.format) +
           "</code> body</summary>\n\n```json\n" + payload.dump(2) + "\n```\n\n</details>\n\n";
  }
  return out;
}

}  // namespace tr::notify_preview
