// The page's bundle (`make bundle`): static/js/main.js and home.js, with every module and
// the Socket.IO client they import, and static/css/page.css, with every component
// stylesheet it imports, built by esbuild into build/assets/, each file named by the hash
// of its content, so a deploy can never mix old and new. build/assets/manifest.json maps
// each source name to its built one; app/web/pages.py reads it. The modules stay the
// source: the unit tests (tests/js) and a page without a bundle use them as they are.

import { build } from "esbuild";
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";

const OUT = "build/assets";
const ENTRIES = ["static/js/main.js", "static/js/home.js", "static/js/event.js", "static/css/page.css"];

// The page imports its vendored client by its URL (/static/vendor/...): the same file here.
const staticUrls = {
  name: "static-urls",
  setup(builder) {
    builder.onResolve({ filter: /^\/static\// }, (args) => ({ path: path.resolve(args.path.slice(1)) }));
  },
};

await rm(OUT, { recursive: true, force: true });
const result = await build({
  entryPoints: ENTRIES,
  bundle: true,
  format: "esm",
  minify: true,
  target: "es2020",
  entryNames: "[name]-[hash]",
  outdir: OUT,
  metafile: true,
  plugins: [staticUrls],
  logLevel: "warning",
});
const manifest = {};
for (const [file, output] of Object.entries(result.metafile.outputs)) {
  if (output.entryPoint) manifest[path.basename(output.entryPoint)] = path.basename(file);
}
await writeFile(path.join(OUT, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
