// The independent sender of test deliveries: signs with GitHub's own library
// (@octokit/webhooks, and @octokit/webhooks-methods for the unprefixed signature of Gitea and
// Forgejo) and
// POSTs to the receiver over real HTTP.
//
//   node send_webhooks.mjs <node_modules> <base-url> <secret> <forge> <event> <source> [repeat]
//
// <source> is `examples:<event name>` (every payload of that event in
// @octokit/webhooks-examples) or a JSON file. Each payload is sent <repeat> times (default 1)
// with the same delivery id. Prints one JSON line per request: {index, action, ref, status}.
import { readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, baseUrl, secret, forge, event, source, repeatText] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(join(modules, p)).href);
const { Webhooks } = await load("@octokit/webhooks/dist-bundle/index.js");
const { sign } = await load("@octokit/webhooks-methods/dist-node/index.js");
const webhooks = new Webhooks({ secret });

function payloads() {
  if (!source.startsWith("examples:")) return [readFileSync(source, "utf8")];
  const name = source.slice("examples:".length);
  const all = JSON.parse(
    readFileSync(join(modules, "@octokit/webhooks-examples/api.github.com/index.json"), "utf8"));
  const found = all.find((e) => e.name === name);
  if (!found) throw new Error(`no examples of ${name}`);
  return found.examples.map((e) => JSON.stringify(e));
}

async function headersFor(body, delivery) {
  const h = { "content-type": "application/json", "user-agent": "talos-reconciler-test-sender" };
  if (forge === "github") {
    h["x-github-event"] = event;
    h["x-github-delivery"] = delivery;
    h["x-hub-signature-256"] = await webhooks.sign(body);
  } else if (forge === "gitea") {
    const signature = await sign(secret, body);
    h["x-gitea-event"] = event;
    h["x-gitea-delivery"] = delivery;
    h["x-gitea-signature"] = signature.replace(/^sha256=/, "");
    h["x-hub-signature-256"] = signature;
  } else if (forge === "forgejo") {
    // Forgejo signs in its own headers and sends Gitea's alongside.
    const signature = (await sign(secret, body)).replace(/^sha256=/, "");
    for (const prefix of ["x-forgejo", "x-gitea"]) {
      h[`${prefix}-event`] = event;
      h[`${prefix}-delivery`] = delivery;
      h[`${prefix}-signature`] = signature;
    }
  } else if (forge === "gitlab") {
    h["x-gitlab-event"] = event;
    h["x-gitlab-event-uuid"] = delivery;
    h["x-gitlab-token"] = secret;
  } else {
    throw new Error(`unknown forge ${forge}`);
  }
  return h;
}

const repeat = Number(repeatText || "1");
let index = 0;
for (const body of payloads()) {
  const delivery = randomUUID();
  const parsed = JSON.parse(body);
  const action = parsed.action ?? parsed.object_attributes?.action ?? null;
  for (let i = 0; i < repeat; ++i) {
    const response = await fetch(`${baseUrl}/hooks/${forge}`, {
      method: "POST", headers: await headersFor(body, delivery), body });
    await response.text();
    console.log(JSON.stringify({ index, action, ref: parsed.ref ?? null, status: response.status }));
  }
  ++index;
}
