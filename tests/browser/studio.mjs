// hark serve's page in headless Chromium, as a user drives it (tests/cli/test_studio.sh
// starts the servers and makes the CLI's files): upload, progress, transcript,
// playback, downloads, explain, keyboard, accessibility (axe-core), cancel, API key.
// Prints "ok WHAT" or "FAIL WHAT: why" a check.
import { readFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, basename } from "node:path";
import { launch } from "./cdp.mjs";

const E = process.env;
const expect = JSON.parse(readFileSync(join(E.EXPECT, basename(E.SAMPLE, ".wav") + ".json"), "utf8"));
const failures = [];
const ok = what => console.log("ok " + what);
const bad = (what, why) => { failures.push(what); console.log("FAIL " + what + ": " + why); };
const check = (what, cond, why) => (cond ? ok(what) : bad(what, why));
const sleep = ms => new Promise(r => setTimeout(r, ms));

// console errors and uncaught exceptions, whatever the page does
function watchConsole(page, errors) {
  page.on(m => {
    if (m.method === "Runtime.consoleAPICalled" && (m.params.type === "error" || m.params.type === "assert"))
      errors.push("console: " + m.params.args.map(a => a.value ?? a.description).join(" "));
    if (m.method === "Runtime.exceptionThrown")
      errors.push("exception: " + m.params.exceptionDetails.exception?.description);
    if (m.method === "Log.entryAdded" && m.params.entry.level === "error")
      errors.push("log: " + m.params.entry.text + " " + (m.params.entry.url || ""));
  });
}

async function open(page, url) {
  await page.send("Page.navigate", { url });
  await page.waitFor("document.body && document.body.dataset.state === 'idle' && " +
    "document.getElementById('beam').value !== ''", 20000);
}

async function setFile(page, path) {
  const { root } = await page.send("DOM.getDocument", {});
  const { nodeId } = await page.send("DOM.querySelector", { nodeId: root.nodeId, selector: "#file" });
  await page.send("DOM.setFileInputFiles", { nodeId, files: [path] });
}

// upload the sample, follow the progress, read the transcript
async function transcribe(page) {
  await setFile(page, E.SAMPLE);
  await page.evaluate(`window.seen = []; new MutationObserver(() => {
      const d = document.getElementById('status').dataset;
      window.seen.push([+d.windowsDone, +d.windowsTotal]);
    }).observe(document.getElementById('status'), {attributes: true}); true`);
  await page.evaluate("document.getElementById('go').click(), true");
  await page.waitFor("['done', 'failed'].includes(document.body.dataset.state)", 120000);
  const state = await page.evaluate("document.body.dataset.state + ' ' + document.getElementById('error').textContent");
  check("the job is done", state.startsWith("done"), state);
  const texts = await page.evaluate("[...document.querySelectorAll('.seg .text')].map(e => e.textContent)");
  const txt = readFileSync(join(E.EXPECT, basename(E.SAMPLE, ".wav") + ".txt"), "utf8");
  check("the transcript is the CLI's", texts.map(t => t.trim()).join("\n") + "\n" === txt,
    JSON.stringify(texts.slice(0, 3)) + " vs " + JSON.stringify(txt.slice(0, 120)));
  check("as many segments as the CLI's", texts.length === expect.segments.length,
    texts.length + " vs " + expect.segments.length);
  const seen = await page.evaluate("window.seen");
  const windows = await page.evaluate("document.getElementById('window').options.length");
  const inOrder = seen.every((s, i) => i === 0 || (s[0] >= seen[i - 1][0]));
  const last = seen[seen.length - 1] || [];
  check("progress in order, to every window", seen.length >= 2 && inOrder && last[0] === last[1] &&
    last[0] === windows && windows >= 6, JSON.stringify(seen) + " windows " + windows);
  const lowShaded = await page.evaluate("document.querySelectorAll('.seg .low, .seg .lower').length");
  const lowTokens = expect.segments.flatMap(s => s.tokens).filter(t => t.p < 0.6 && !t.text.startsWith("<|")).length;
  check("unlikely tokens shaded", lowShaded === lowTokens, lowShaded + " shaded, " + lowTokens + " under 0.6");
}

// clicking the third segment plays from its start; the highlight follows playback
async function playback(page) {
  const t = await page.evaluate("document.querySelectorAll('.seg')[2].click(), document.getElementById('player').currentTime");
  const start = expect.segments[2].start;
  check("the third segment plays from its start", Math.abs(t - start) <= 0.05, t + " vs " + start);
  const cur = await page.evaluate("+document.querySelector('.seg.current').dataset.index");
  check("the third segment highlighted", cur === 2, "highlighted " + cur);
  const s4 = expect.segments[4];
  await page.waitFor(`document.getElementById('player').currentTime > ${s4.start + 0.1}`, 30000);
  const at = await page.evaluate(`(() => { const p = document.getElementById('player'); p.pause();
      const c = document.querySelector('.seg.current'); return [p.currentTime, c ? +c.dataset.index : -1]; })()`);
  const want = expect.segments.findIndex(s => s.start <= at[0] && at[0] < s.end);
  check("the highlight follows playback", at[1] === want && want >= 4, JSON.stringify(at) + " want " + want);
}

async function downloads(page, browser) {
  mkdirSync(E.DOWNLOADS, { recursive: true });
  await browser.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: E.DOWNLOADS,
    eventsEnabled: true });
  for (const f of ["txt", "srt", "vtt", "tsv", "json"]) {
    const name = basename(E.SAMPLE, ".wav") + "." + f, path = join(E.DOWNLOADS, name);
    await page.evaluate(`document.querySelector('#downloads [data-format=${f}]').click(), true`);
    for (let i = 0; i < 200 && !existsSync(path); i++)
      await sleep(100);
    await sleep(200); // written whole: Chromium renames the finished file into place
    const got = existsSync(path) ? readFileSync(path) : Buffer.alloc(0);
    check("the " + f + " download is the CLI's file", got.equals(readFileSync(join(E.EXPECT, name))),
      got.length + " bytes");
  }
}

async function explain(page) {
  await page.evaluate("document.getElementById('window').value = '1'; document.getElementById('explain-go').click(), true");
  await page.waitFor("document.getElementById('explain').dataset.drawn === '1'", 60000);
  const drawn = await page.evaluate(`[document.querySelectorAll('#explain canvas').length,
      document.querySelector('#explain [data-x=summary]').textContent]`);
  check("window 2 explained", drawn[0] > 20 && drawn[1].startsWith("Window 1 at"), JSON.stringify(drawn));
}

// Tab reaches the segments in order; Enter and Space on one play from its start
async function keyboard(page) {
  await page.evaluate("document.activeElement.blur(), window.scrollTo(0, 0), true");
  const order = [];
  for (let i = 0; i < 40 && order.filter(x => x.startsWith("seg")).length < 3; i++) {
    await page.key("Tab", "Tab", 9);
    order.push(await page.evaluate(`(() => { const a = document.activeElement;
        return a.classList.contains('seg') ? 'seg' + a.dataset.index : a.id || a.dataset.format || a.tagName; })()`));
  }
  const want = ["file", "record", "language", "translate", "timestamps", "words", "beam", "prompt", "go"];
  const firsts = order.filter(x => want.includes(x));
  check("Tab goes through the form in order", JSON.stringify(firsts.slice(0, want.length)) ===
    JSON.stringify(want.filter(x => order.includes(x))) && firsts[0] === "file", order.join(" "));
  check("Tab reaches the downloads, then the segments in order",
    order.indexOf("txt") >= 0 && order.indexOf("seg0") > order.indexOf("json") &&
    order.slice(-3).join(" ") === "seg0 seg1 seg2", order.join(" "));
  await page.key("Enter", "Enter", 13, "\r");
  let t = await page.evaluate("document.getElementById('player').currentTime");
  check("Enter on the third segment plays from its start", Math.abs(t - expect.segments[2].start) <= 0.05, t);
  await page.key("Tab", "Tab", 9, "");
  await page.key(" ", "Space", 32, " ");
  t = await page.evaluate("document.getElementById('player').pause(), document.getElementById('player').currentTime");
  check("Space on the fourth plays from its start", Math.abs(t - expect.segments[3].start) <= 0.05, t);
}

async function accessibility(page) {
  await page.evaluate(readFileSync(E.AXE, "utf8") + "; true");
  const v = await page.evaluate(`axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa']}})
      .then(r => r.violations.map(v => v.id + ' (' + v.nodes.length + '): ' + v.nodes[0].target.join(' ')))`);
  check("axe-core finds no WCAG 2 A/AA violation (contrast among them)", v.length === 0, v.join("; "));
}

async function screenshot(page) {
  await page.evaluate("window.scrollTo(0, 0), document.activeElement.blur(), true");
  const { data } = await page.send("Page.captureScreenshot", { format: "png" });
  writeFileSync(E.SHOT, Buffer.from(data, "base64"));
}

// a long file, cancelled once its first window is done: the page says so
async function cancel(page) {
  await setFile(page, E.LONG);
  await page.evaluate("document.getElementById('go').click(), true");
  await page.waitFor("document.body.dataset.state === 'running' && " +
    "+document.getElementById('status').dataset.windowsDone >= 1", 120000);
  await page.evaluate("document.getElementById('cancel').click(), true");
  await page.waitFor("document.body.dataset.state !== 'running'", 60000);
  const s = await page.evaluate("document.body.dataset.state + ': ' + document.getElementById('status').textContent");
  check("cancelled", s === "cancelled: Cancelled.", s);
}

// --api-key: the page asks once, keeps the key in the tab, and transcribes with it
async function apiKey(page) {
  await page.send("Page.navigate", { url: E.KEY_URL });
  await page.waitFor("!document.getElementById('key-form').hidden", 20000);
  await page.evaluate(`document.getElementById('key').value = ${JSON.stringify(E.KEY)};
      document.querySelector('#key-form button').click(), true`);
  await page.waitFor("document.getElementById('beam').value !== ''", 20000);
  await page.send("Page.reload", {});
  await page.waitFor("document.body && document.body.dataset.state === 'idle' && document.getElementById('beam').value !== ''", 20000);
  check("the key is asked for once a tab", await page.evaluate("document.getElementById('key-form').hidden"), "asked again");
  await setFile(page, E.SHORT);
  await page.evaluate("document.getElementById('go').click(), true");
  await page.waitFor("['done', 'failed'].includes(document.body.dataset.state)", 60000);
  const s = await page.evaluate("document.body.dataset.state + ' ' + document.querySelectorAll('.seg').length");
  check("transcribed with the key", s === "done 2", s);
}

async function main() {
  const { browser, page } = await launch(E.CHROMIUM, E.USER_DIR);
  const errors = [];
  try {
    await page.send("Runtime.enable", {});
    await page.send("Log.enable", {});
    await page.send("Page.enable", {});
    watchConsole(page, errors);
    await page.send("Emulation.setDeviceMetricsOverride", { width: 1200, height: 800,
      deviceScaleFactor: 1, mobile: false });
    await open(page, E.URL);
    for (const step of [transcribe, playback, d => downloads(d, browser), screenshot, explain,
      keyboard, accessibility, cancel])
      await step(page);
    check("no console errors", errors.length === 0, errors.slice(0, 5).join(" | "));
    errors.length = 0;
    await apiKey(page);
    // a 401 is the browser's own console line: that one only
    const others = errors.filter(e => !/status of 401/.test(e));
    check("no console errors with --api-key but the 401", others.length === 0, others.slice(0, 5).join(" | "));
  } catch (e) {
    bad("the browser test", e.message);
  } finally {
    browser.close();
  }
  process.exit(failures.length ? 1 : 0);
}
main();
