// Checks a notification delivery as a receiver would, with the Standard Webhooks library
// (standardwebhooks): the three headers, the timestamp within the library's tolerance, and the
// signature with the whsec_ secret.
//
//   node verify_standard_webhook.mjs <node_modules> <secret> <body file> <webhook-id> \
//     <webhook-timestamp> <webhook-signature>
// Exits 0 when the delivery verifies, 1 when not (the library's reason on stderr).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const [modules, secret, bodyFile, id, timestamp, signature] = process.argv.slice(2);
const { Webhook } = createRequire(import.meta.url)(join(modules, "standardwebhooks"));
try {
  new Webhook(secret).verify(readFileSync(bodyFile, "utf8"), {
    "webhook-id": id,
    "webhook-timestamp": timestamp,
    "webhook-signature": signature,
  });
} catch (error) {
  console.error(`not verified: ${error.message}`);
  process.exit(1);
}
