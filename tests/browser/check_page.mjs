// SPDX-License-Identifier: MIT
// check_page.mjs - opens a page in headless Chromium (Debian's, driven by
// playwright-core) and checks it, for the browser tests (tests/browser/README.md).
//
//   node check_page.mjs --url URL --ready EXPR [--check NAME=EXPR]... [--act JS]... [--wait EXPR]... [--print EXPR]...
//        [--screenshot FILE.png] [--width W] [--height H] [--timeout S] [--allow-host HOST]
//
// Waits until the JavaScript expression EXPR is true in the page (a DOM
// condition, polled; --timeout seconds is only the hang guard, default 60),
// then runs the --act and --check arguments in their order: an --act is
// JavaScript run in the page (e.g. typing into a search box), after which
// the page settles (two animation frames; an --act or a settle that does not
// return within --timeout fails: the page froze); a --wait EXPR polls until
// EXPR is true (for what the page does asynchronously); a --check is an expression that
// must be true; a --screenshot is taken where it stands (full page); a
// --print EXPR prints "print: " and the value as JSON (for the benchmark).  Fails on any console error, any
// uncaught exception in the page, and any request to a host other than
// file:// and --allow-host (the loopback server of a test): the pages must
// work offline.  Prints one line per check and the page's console; exit 0
// when everything held, 1 otherwise, 77 when Chromium or playwright-core is
// missing.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const args = process.argv.slice(2);
const opt = { steps: [], timeout: 60, width: 1400, height: 900, allow: [] };
for (let i = 0; i < args.length; i++) {
  const a = args[i], v = args[i + 1];
  if (a === "--url") opt.url = v;
  else if (a === "--ready") opt.ready = v;
  else if (a === "--check") opt.steps.push({ check: v });
  else if (a === "--act") opt.steps.push({ act: v });
  else if (a === "--wait") opt.steps.push({ wait: v });
  else if (a === "--print") opt.steps.push({ print: v });
  else if (a === "--screenshot") opt.steps.push({ shot: v });
  else if (a === "--timeout") opt.timeout = Number(v);
  else if (a === "--width") opt.width = Number(v);
  else if (a === "--height") opt.height = Number(v);
  else if (a === "--allow-host") opt.allow.push(v);
  else {
    console.error("check_page: unknown argument " + a);
    process.exit(2);
  }
  i++;
}
const CHROMIUM = process.env.TB_CHROMIUM || "/usr/bin/chromium";
if (!existsSync(CHROMIUM)) {
  console.log("SKIP: " + CHROMIUM + " is not installed (apt-get install chromium)");
  process.exit(77);
}
let chromium;
try {
  ({ chromium } = await import("playwright-core"));
} catch (e) {
  console.log("SKIP: playwright-core is not installed (npm ci in tests/browser; .ci/run does)");
  process.exit(77);
}

const problems = [];
const profile = mkdtempSync(join(tmpdir(), "tb-chromium-"));
// Debian's chromium: as root it needs --no-sandbox; the rest keeps it off
// the network (no Google services on this closed network) and quiet
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  viewport: { width: opt.width, height: opt.height },
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--enable-unsafe-swiftshader"],
});
let status = 0;
try {
  const page = context.pages()[0] || (await context.newPage());
  page.on("console", (m) => {
    console.log("console." + m.type() + ": " + m.text());
    if (m.type() === "error") problems.push("console error: " + m.text());
  });
  page.on("pageerror", (e) => problems.push("uncaught exception: " + e.message));
  page.on("request", (r) => {
    const u = new URL(r.url());
    if (u.protocol !== "file:" && u.protocol !== "data:" && u.protocol !== "blob:" && !opt.allow.includes(u.host))
      problems.push("a request to the network: " + r.url());
  });
  const t0 = Date.now();
  await page.goto(opt.url, { waitUntil: "load", timeout: opt.timeout * 1000 });
  await page.waitForFunction(opt.ready, null, { timeout: opt.timeout * 1000, polling: 50 });
  console.log(`ready after ${Date.now() - t0} ms`);
  // the hang guard of an --act: a page whose main thread is stuck never answers
  const guard = (what, p) => Promise.race([p, new Promise((_, no) => setTimeout(() =>
    no(new Error(what + " did not return within " + opt.timeout + " s: the page's main thread is stuck")), opt.timeout * 1000))]);
  const settle = () => guard("settling", page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))));
  await settle();
  for (const step of opt.steps) {
    if (step.shot) {
      await page.screenshot({ path: step.shot, fullPage: true });
      console.log("screenshot: " + step.shot);
      continue;
    }
    if (step.print) {
      console.log("print: " + JSON.stringify(await page.evaluate(step.print)));
      continue;
    }
    if (step.wait) {
      await page.waitForFunction(step.wait, null, { timeout: opt.timeout * 1000, polling: 50 });
      console.log("waited for: " + step.wait);
      continue;
    }
    if (step.act) {
      await guard("--act " + step.act, page.evaluate(step.act));
      await settle();
      continue;
    }
    const c = step.check;
    const eq = c.indexOf("=");
    const name = c.slice(0, eq), expr = c.slice(eq + 1);
    let v;
    try {
      v = await page.evaluate(expr);
    } catch (e) {
      v = "exception: " + e.message;
    }
    console.log(`${v === true ? "ok" : "FAILED"}: ${name}${v === true ? "" : " (" + JSON.stringify(v) + ")"}`);
    if (v !== true) status = 1;
  }
} catch (e) {
  problems.push(String(e.message || e).split("\n")[0]);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
for (const p of problems) console.log("FAILED: " + p);
process.exit(problems.length ? 1 : status);
