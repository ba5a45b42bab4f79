// Rewrites harness-runtime/src/cassette/providers/catalog.json from the models.dev catalog that the
// pinned OpenCode binary bundles (a JavaScript object literal in the binary, not JSON), reduced
// to what the harness reads: each provider's id, npm package, key variables, API address and
// model ids (with per-model provider overrides). Run after `npm ci`:
//   node scripts/models-catalog.mjs
// Re-run when the pinned opencode-ai version changes (scripts/opencode-upgrade).
import { readFileSync, writeFileSync } from "node:fs";

const binary = process.argv[2] ?? "node_modules/opencode-linux-x64/bin/opencode";
const version = JSON.parse(readFileSync("node_modules/opencode-ai/package.json", "utf8")).version;
const buf = readFileSync(binary);
// The bundled snapshot is the fallback value of the catalog's loader.
const marker = Buffer.from('n.sync(()=>({deepinfra:{id:"deepinfra"');
const at = buf.indexOf(marker);
if (at < 0) throw new Error(`no bundled models catalog found in ${binary}: the marker moved; look for 'OPENCODE_MODELS_PATH' near a literal of providers`);
const start = at + "n.sync(()=>(".length;
let depth = 0, i = start, quote = null;
for (;; i++) {
  const c = String.fromCharCode(buf[i]);
  if (quote) { if (c === "\\") { i++; continue; } if (c === quote) quote = null; continue; }
  if (c === '"' || c === "'" || c === "`") { quote = c; continue; }
  if (c === "{") depth++;
  else if (c === "}" && --depth === 0) break;
}
const catalog = Function(`return (${buf.subarray(start, i + 1).toString("utf8")})`)();
const lines = Object.keys(catalog).sort().map((id) => {
  const p = catalog[id];
  const entry = { id, npm: p.npm, env: p.env };
  if (p.api) entry.api = p.api;
  entry.models = Object.keys(p.models).sort();
  const overrides = {};
  for (const model of entry.models) if (p.models[model].provider) overrides[model] = p.models[model].provider;
  if (Object.keys(overrides).length) entry.model_provider = overrides;
  return "  " + JSON.stringify(entry);
});
writeFileSync(
  "harness-runtime/src/cassette/providers/catalog.json",
  `{\n"source": "the models.dev catalog bundled in opencode-ai ${version}, reduced to what the harness reads (scripts/models-catalog.mjs makes it)",\n"opencode": "${version}",\n"providers": [\n${lines.join(",\n")}\n]\n}\n`,
);
console.log(`${lines.length} providers from opencode-ai ${version}`);
