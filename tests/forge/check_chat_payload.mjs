// Checks a notification body of a chat format against what the chat tool's own published code
// says it accepts, as its receiver would read it:
//   teams       the Adaptive Cards library (npm adaptivecards) parses the card: no parse
//               error, no property it drops (a misspelt or unknown one), a version Teams renders
//               (at most 1.5); the Workflows envelope is checked field by field
//   mattermost  Mattermost's own attachment check (isMessageAttachmentArray of @mattermost/types)
//               and TypeScript checking the attachments against its MessageAttachment type
//               (an unknown field fails); the top level against the documented webhook keys
//   googlechat  TypeScript checking the body against the Chat API's Message type of
//               @googleapis/chat (an unknown or mistyped field fails), and the documented
//               limits: 32,000 bytes a message, 4,000 characters a thread key
//
//   node check_chat_payload.mjs <node_modules> <format> <body file>...
// Exits 0 when every body passes, 1 when not (every reason on stderr). TypeScript runs once for
// all the bodies (it takes seconds to load a package's types).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";

const [modules, format, ...bodyFiles] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const problems = [];
// TypeScript to check once all bodies are read: imports, and one declaration per body.
const imports = new Set();
const declarations = [];
let raw = "";
let body = {};

function typeCheck(importLine, type, value) {
  imports.add(importLine);
  declarations.push(`export const body${declarations.length}: ${type} = ${value};`);
}

// Adds a problem for each TypeScript error in `source`, with `modules` to resolve its imports;
// the module is virtual, nothing is written.
function typeChecks(source) {
  const ts = require(join(modules, "typescript"));
  const file = join(modules, "..", "chat-payload-check.ts");
  const options = { strict: true, noEmit: true, skipLibCheck: true, types: [],
                    module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16,
                    target: ts.ScriptTarget.ES2020 };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, version, ...rest) =>
    name === file ? ts.createSourceFile(name, source, version) : getSourceFile(name, version, ...rest);
  host.fileExists = (name) => name === file || fileExists(name);
  host.readFile = (name) => (name === file ? source : readFile(name));
  const program = ts.createProgram([file], options, host);
  for (const d of ts.getPreEmitDiagnostics(program)) {
    // Line n (0-based) after the imports declares the n-th body.
    const line = d.file ? d.file.getLineAndCharacterOfPosition(d.start).line : 0;
    const where = d.file?.fileName === file ? `${bodyFiles[line - imports.size]}: ` : "";
    problems.push(`${where}TypeScript: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
  }
}

function onlyKeys(object, allowed, where) {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) problems.push(`${where}: unknown key "${key}"`);
  }
}

// Where `written` and `understood` differ: the paths of keys or values not taken as written.
function differences(written, understood, path) {
  if (typeof written !== "object" || written === null) {
    return isDeepStrictEqual(written, understood) ? [] : [path];
  }
  if (typeof understood !== "object" || understood === null) return [path];
  const keys = new Set([...Object.keys(written), ...Object.keys(understood)]);
  return [...keys].flatMap((key) => differences(written[key], understood[key], `${path}.${key}`));
}

function checkTeams() {
  // The Workflows trigger takes a Bot Framework message whose attachments are cards.
  onlyKeys(body, ["type", "attachments"], "message");
  if (body.type !== "message") problems.push(`type is ${body.type}, not "message"`);
  if (!Array.isArray(body.attachments) || body.attachments.length !== 1) {
    problems.push("attachments is not one attachment");
    return;
  }
  const attachment = body.attachments[0];
  onlyKeys(attachment, ["contentType", "contentUrl", "content"], "attachment");
  if (attachment.contentType !== "application/vnd.microsoft.card.adaptive") {
    problems.push(`contentType is ${attachment.contentType}`);
  }
  const AC = require(join(modules, "adaptivecards/dist/adaptivecards.js"));
  const content = attachment.content;
  const card = new AC.AdaptiveCard();
  const context = new AC.SerializationContext(AC.Versions.v1_5);
  card.parse(content, context);
  for (let i = 0; i < context.eventCount; i++) {
    problems.push(`Adaptive Cards: ${context.getEventAt(i).message}`);
  }
  for (const e of card.validateProperties().validationEvents) {
    problems.push(`Adaptive Cards: ${e.message}`);
  }
  if (content.type !== "AdaptiveCard") problems.push(`card type is ${content.type}`);
  if (!card.version || card.version.compareTo(AC.Versions.v1_5) > 0) {
    problems.push(`card version ${content.version} is not one Teams renders (up to 1.5)`);
  }
  // What the library writes back is what it understood: a property it dropped is one it
  // does not know. The version and $schema it writes its own way.
  const strip = ({ version, $schema, ...rest }) => rest;
  const understood = strip(card.toJSON(new AC.SerializationContext(AC.Versions.v1_5)));
  for (const path of differences(strip(content), understood, "card")) {
    problems.push(`Adaptive Cards did not take ${path} as written`);
  }
}

function checkMattermost() {
  // Mattermost publishes no type of the incoming-webhook request: its documented keys.
  onlyKeys(body, ["text", "channel", "username", "icon_url", "icon_emoji", "attachments",
                  "type", "props", "priority"], "webhook body");
  if (!body.text && !body.attachments) problems.push("neither text nor attachments");
  const { isMessageAttachmentArray } = require(join(modules, "@mattermost/types/lib/message_attachments.js"));
  if (body.attachments && !isMessageAttachmentArray(body.attachments)) {
    problems.push("Mattermost's isMessageAttachmentArray refuses the attachments");
  }
  for (const a of body.attachments ?? []) {
    if (typeof a.fallback !== "string" || a.fallback === "") problems.push("an attachment without fallback");
  }
  typeCheck(`import type { MessageAttachment } from "@mattermost/types/message_attachments";`,
            "MessageAttachment[]", JSON.stringify(body.attachments ?? []));
}

function checkGoogleChat() {
  if (Buffer.byteLength(raw) > 32000) problems.push(`${Buffer.byteLength(raw)} bytes, over 32,000`);
  const key = body.thread?.threadKey ?? "";
  if (key.length > 4000) problems.push(`thread key of ${key.length} characters, over 4,000`);
  typeCheck(`import type { chat_v1 } from "@googleapis/chat";`, "chat_v1.Schema$Message",
            JSON.stringify(body));
}

const checks = { teams: checkTeams, mattermost: checkMattermost, googlechat: checkGoogleChat };
if (!checks[format] || bodyFiles.length === 0) problems.push(`no check for format ${format}`);
for (const file of checks[format] ? bodyFiles : []) {
  raw = readFileSync(file, "utf8");
  body = JSON.parse(raw);
  const before = problems.length;
  checks[format]();
  for (let i = before; i < problems.length; i++) problems[i] = `${file}: ${problems[i]}`;
}
if (declarations.length > 0) typeChecks([...imports, ...declarations].join("\n") + "\n");
for (const problem of problems) console.error(`${format}: ${problem}`);
process.exit(problems.length === 0 ? 0 : 1);
