// SPDX-License-Identifier: MIT
// serve.mjs ROOT PORTFILE - a static HTTP server on 127.0.0.1 (an ephemeral
// port, written to PORTFILE once listening) for the browser tests: serves
// the files under ROOT, nothing else.  The test that starts it stops it by
// its pid; it also stops by itself after 10 minutes (a hang guard).
import { createServer } from "node:http";
import { readFile, writeFile } from "node:fs/promises";
import { join, normalize, extname } from "node:path";

const [root, portfile] = process.argv.slice(2);
const types = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".json": "application/json",
  ".wasm": "application/wasm", ".png": "image/png", ".woff2": "font/woff2", ".txt": "text/plain", ".ico": "image/x-icon" };
const server = createServer(async (req, res) => {
  const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname)).replace(/^(\.\.[/\\])+/, "");
  try {
    const body = await readFile(join(root, path.endsWith("/") ? path + "index.html" : path));
    res.writeHead(200, { "content-type": types[extname(path)] || "application/octet-stream" });
    res.end(body);
  } catch {
    res.writeHead(404);
    res.end("not found");
  }
});
server.listen(0, "127.0.0.1", async () => {
  await writeFile(portfile + ".tmp", String(server.address().port));
  const { rename } = await import("node:fs/promises");
  await rename(portfile + ".tmp", portfile);
});
setTimeout(() => process.exit(0), 600000).unref();
