// Headless Chromium driven through the DevTools protocol over a pipe
// (--remote-debugging-pipe: NUL-terminated JSON on the child's fds 3 and 4), with no
// package but Node's own: launch(), then a page's send/evaluate/waitFor.
import { spawn } from "node:child_process";

export async function launch(chromium, userDir, extraArgs = []) {
  const child = spawn(chromium, [
    "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
    "--no-first-run", "--user-data-dir=" + userDir, "--window-size=1200,800",
    "--autoplay-policy=no-user-gesture-required", "--mute-audio", ...extraArgs, "about:blank",
  ], { stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"] });
  const out = child.stdio[3], input = child.stdio[4];
  let next = 1, buffer = "";
  const waiting = new Map(), listeners = [];
  input.on("data", chunk => {
    buffer += chunk.toString("utf8");
    let end;
    while ((end = buffer.indexOf("\0")) >= 0) {
      const msg = JSON.parse(buffer.slice(0, end));
      buffer = buffer.slice(end + 1);
      if (msg.id && waiting.has(msg.id)) {
        const { resolve, reject } = waiting.get(msg.id);
        waiting.delete(msg.id);
        msg.error ? reject(new Error(msg.error.message)) : resolve(msg.result);
      } else {
        listeners.forEach(f => f(msg));
      }
    }
  });
  const send = (method, params = {}, sessionId) => new Promise((resolve, reject) => {
    const id = next++;
    waiting.set(id, { resolve, reject });
    out.write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + "\0");
  });
  const browser = { child, send, on: f => listeners.push(f), close: () => child.kill("SIGKILL") };
  const { targetInfos } = await send("Target.getTargets");
  const target = targetInfos.find(t => t.type === "page");
  const { sessionId } = await send("Target.attachToTarget", { targetId: target.targetId, flatten: true });
  const page = {
    send: (method, params) => send(method, params, sessionId),
    on: f => listeners.push(m => m.sessionId === sessionId && f(m)),
    async evaluate(expression) {
      const r = await send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true },
        sessionId);
      if (r.exceptionDetails)
        throw new Error(expression.slice(0, 80) + ": " + (r.exceptionDetails.exception?.description ||
          r.exceptionDetails.text));
      return r.result.value;
    },
    // polls expression until true (errors meanwhile, as while a page loads, retried)
    async waitFor(expression, ms = 60000) {
      const t0 = Date.now();
      for (;;) {
        let v, why = "";
        try {
          v = await page.evaluate(expression);
        } catch (e) {
          why = ": " + e.message;
        }
        if (v)
          return v;
        if (Date.now() - t0 > ms)
          throw new Error("waited " + ms / 1000 + " s for " + expression + why);
        await new Promise(r => setTimeout(r, 100));
      }
    },
    async key(key, code, keyCode, text) {
      await page.send("Input.dispatchKeyEvent", { type: text ? "keyDown" : "rawKeyDown", key, code,
        windowsVirtualKeyCode: keyCode, ...(text ? { text } : {}) });
      await page.send("Input.dispatchKeyEvent", { type: "keyUp", key, code, windowsVirtualKeyCode: keyCode });
    },
  };
  return { browser, page };
}
