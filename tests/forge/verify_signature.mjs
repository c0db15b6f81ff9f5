// Checks a notification signature independently of the reconciler, with GitHub's own
// verifier (@octokit/webhooks-methods): HMAC-SHA256(secret, message) as "sha256=<hex>".
//
//   node verify_signature.mjs <node_modules> <secret> <message file> <signature>
// Exits 0 when the signature is right, 1 when not.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, secret, messageFile, signature] = process.argv.slice(2);
const { verify } = await import(
  pathToFileURL(join(modules, "@octokit/webhooks-methods/dist-node/index.js")).href);
process.exit((await verify(secret, readFileSync(messageFile, "utf8"), signature)) ? 0 : 1);
