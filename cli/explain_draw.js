/* hark explain's drawing of one window's trace (hark_explain_json): heatmaps with hover
 * labels and the tables.  drawExplain(T, root) fills root with the sections; hark
 * explain's page (explain_page.c) and hark serve's studio page both embed this file. */
"use strict";
function drawExplain(T, root) {
  root.classList.add("explain");
  root.innerHTML =
    "<p data-x=summary></p>" +
    "<h2>Cross-attention: where each token listens</h2>" +
    "<p class=note>Rows: the tokens of the window; columns: the audio, one column a 20 ms frame. " +
    "Each row is a softmax over the frames (scaled per row to its maximum here). " +
    "&#9733; marks the model's alignment heads, which word timing uses.</p>" +
    "<label>Head <select data-x=crossSel></select></label><br><canvas data-x=cross></canvas>" +
    "<h2>Decoder self-attention (causal)</h2>" +
    "<p class=note>Row i: how token i weighs tokens 0..i. Above the diagonal the causal mask " +
    "leaves exact zeros: a token never sees the future, so past keys and values never change " +
    "and the KV cache holds them.</p>" +
    "<label>Head <select data-x=selfSel></select></label><br><canvas data-x=self></canvas>" +
    "<h2>Logit lens: the residual stream after each layer, read as text</h2>" +
    "<p class=note>Each layer's residual stream through the final LayerNorm and the output " +
    "projection: the top candidate and its probability. The last layer is the real output.</p>" +
    "<div data-x=lens></div>" +
    "<h2>Encoder heads: local or global</h2>" +
    "<p class=note>Each head's 1500x1500 (or T x T) attention, averaged into 50x50 cells; " +
    "mean distance between a frame and what it attends to, in seconds.</p>" +
    "<div data-x=enc class=maps></div>" +
    "<h2>Why divide by sqrt(d_k)</h2>" +
    "<p class=note>Spread of the raw q&middot;k scores and of the scaled ones, and the " +
    "softmax's entropy (nats) both ways: without the scaling the softmax saturates.</p>" +
    "<div data-x=sqrt></div><div data-x=occ></div>" +
    "<h2>Same token, different context</h2>" +
    "<p class=note>A token that occurs twice: the cosine of its two hidden states after each " +
    "layer. The same embedding at the start; context pulls them apart layer by layer.</p>" +
    "<div data-x=ctx></div>" +
    "<h2>Steps: the next-token candidates</h2><div data-x=steps></div>" +
    "<h2>Shapes, stage by stage</h2><div data-x=shapes></div>";
  const $ = name => root.querySelector("[data-x=" + name + "]");
  let tip = document.querySelector(".explain-tip");
  if (!tip) {
    tip = document.createElement("div");
    tip.className = "explain-tip";
    document.body.appendChild(tip);
  }
  const W = T.window, toks = T.tokens;
  const esc = s => String(s).replace(/[&<>]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;"}[c]));
  function color(v) {
    v = Math.max(0, Math.min(1, v));
    return "rgb(" + Math.round(255 * (1 - v)) + "," + Math.round(255 * (1 - 0.55 * v)) + "," +
      Math.round(255 - 80 * v) + ")";
  }
  function heat(cv, rows, cell, label) {
    const n = rows.length, m = rows[0].length;
    const cw = Math.max(1, Math.min(cell, Math.floor(1100 / m))), ch = cell;
    cv.width = m * cw;
    cv.height = n * ch;
    const g = cv.getContext("2d");
    g.fillStyle = "#fff";
    g.fillRect(0, 0, cv.width, cv.height);
    rows.forEach((r, i) => {
      const mx = Math.max(...r) || 1;
      r.forEach((v, j) => { g.fillStyle = color(v / mx); g.fillRect(j * cw, i * ch, cw, ch); });
    });
    cv.onmousemove = e => {
      const b = cv.getBoundingClientRect(), j = Math.floor((e.clientX - b.left) / cw),
        i = Math.floor((e.clientY - b.top) / ch);
      if (i < 0 || j < 0 || i >= n || j >= m)
        return;
      tip.style.display = "block";
      tip.style.left = (e.clientX + 12) + "px";
      tip.style.top = (e.clientY + 12) + "px";
      tip.textContent = label(i, j, rows[i][j]);
    };
    cv.onmouseleave = () => { tip.style.display = "none"; };
  }
  const ttext = i => JSON.stringify(toks[i].text);
  function options(sel, L, H, mark, draw) {
    for (let l = 0; l < L; l++)
      for (let h = 0; h < H; h++) {
        const o = document.createElement("option");
        o.value = l + "," + h;
        o.textContent = "layer " + l + " head " + h + (mark(l, h) ? " \u2605" : "");
        sel.appendChild(o);
      }
    sel.onchange = () => { const [l, h] = sel.value.split(",").map(Number); draw(l, h); };
  }
  const AH = W.alignment_heads, isAH = (l, h) => AH.some(a => a[0] == l && a[1] == h);
  const L = T.cross.length, H = T.cross[0].length, from = W.n_start - 1;
  function drawCross(l, h) {
    const rows = T.cross[l][h].slice(from).map(r => r.w);
    heat($("cross"), rows, 10, (i, j, v) => ttext(from + i) + " at " +
      (W.start_s + j * W.frame_s).toFixed(2) + " s: " + v.toPrecision(3));
  }
  function drawSelf(l, h) {
    heat($("self"), T.decoder_self[l][h], 12, (i, j, v) => ttext(i) + " \u2190 " + ttext(j) + ": " +
      v.toPrecision(3));
  }
  options($("crossSel"), L, H, isAH, drawCross);
  options($("selfSel"), L, H, () => false, drawSelf);
  const first = AH.length ? AH[0] : [L - 1, 0];
  $("crossSel").value = first.join(",");
  drawCross(first[0], first[1]);
  drawSelf(L - 1, 0);
  drawExplainTables(T, $, heat, esc, ttext, isAH);
}

/* The summary line and the tables (and the occlusion map when the trace has one). */
function drawExplainTables(T, $, heat, esc, ttext, isAH) {
  const W = T.window, toks = T.tokens;
  function table(head, rows) {
    return "<table><tr>" + head.map(h => "<th>" + esc(h) + "</th>").join("") + "</tr>" +
      rows.map(r => "<tr>" + r.map(c => typeof c == "number" ? "<td class=num>" + c + "</td>" :
        "<td>" + esc(c) + "</td>").join("") + "</tr>").join("") + "</table>";
  }
  const text = toks.filter(t => t.kind == "text").map(t => t.text).join("");
  $("summary").textContent = "Window " + W.index + " at " + W.start_s.toFixed(2) + " s, " +
    (toks.length - W.n_start) + " tokens: " + text;
  const lensRows = T.steps.filter(s => s.text !== undefined).map(s => [s.text].concat(
    T.lens[s.position].map(c => c[0].text + " " + c[0].p.toFixed(2))));
  $("lens").innerHTML = table(["token taken"].concat(T.lens[0].map((_, l) => "after layer " + l)), lensRows);
  const enc = $("enc");
  T.encoder_heads.forEach((layer, l) => layer.forEach((s, h) => {
    const d = document.createElement("div"), c = document.createElement("canvas");
    d.appendChild(c);
    d.appendChild(document.createElement("br"));
    d.append("L" + l + " H" + h + ": " + s.mean_distance_s.toFixed(2) + " s");
    enc.appendChild(d);
    heat(c, s.map, 2, (i, j, v) => "layer " + l + " head " + h + ": " + v.toPrecision(3));
  }));
  const sq = [], row = (kind, l, h, s) => [kind, l, h, +s.score_std.toFixed(3),
    +s.score_std_scaled.toFixed(3), +s.entropy.toFixed(3), +s.entropy_unscaled.toFixed(3)];
  T.encoder_heads.forEach((layer, l) => layer.forEach((s, h) => sq.push(row("encoder", l, h, s))));
  T.cross_heads.forEach((layer, l) => layer.forEach((s, h) => sq.push(row("cross", l, h, s))));
  $("sqrt").innerHTML = table(["attention", "layer", "head", "std q.k", "std q.k/sqrt(d)",
    "entropy scaled", "entropy unscaled"], sq);
  $("steps").innerHTML = table(["position", "token", "p", "suppressed", "KV cache bytes", "candidates"],
    T.steps.map(s => [s.position, s.text === undefined ? "(end)" : s.text,
      s.p_search === undefined ? "" : +s.p_search.toFixed(4), s.suppressed, s.kv_cache_bytes,
      s.top.map(c => c.text + " " + c.p.toFixed(3)).join(" | ")]));
  const S = T.shapes, sr = [];
  S.stages.forEach(st => st.rows.forEach(r => sr.push([st.stage + " x" + st.times, r.tensor,
    "(" + r.shape + ")", "(" + r.numbers.join(", ") + ")", r.op, r.params, r.flops])));
  $("shapes").innerHTML = table(["stage", "tensor", "shape", "numbers", "operation", "params", "FLOPs"], sr) +
    "<p>parameters: " + S.totals.total_params + "</p>";
  if (T.occlusion) {
    const O = T.occlusion, occ = $("occ");
    occ.innerHTML = "<h2>Is attention an explanation? (occlusion)</h2><p class=note>Each " + O.span_s +
      " s of the audio masked in turn: the log-probability each token loses (rows: text tokens, " +
      "columns: spans). Below, per cross-attention head, the rank correlation (Spearman) between " +
      "its attention on the spans and that loss, averaged over the tokens: high, the head looks " +
      "where the evidence is.</p><canvas data-x=occmap></canvas><div data-x=rho></div>";
    const pos = toks.map((t, i) => i).filter(i => toks[i].kind == "text");
    heat($("occmap"), pos.map(i => O.effect[i].map(v => Math.max(v, 0))), 12,
      (i, j, v) => ttext(pos[i]) + ", " + (W.start_s + j * O.span_s).toFixed(1) + " s masked: loses " +
        v.toFixed(3) + " nats");
    $("rho").innerHTML = table(["layer"].concat(O.head_rho[0].map((_, h) => "head " + h)),
      O.head_rho.map((r, l) => [l].concat(r.map((v, h) => v.toFixed(3) + (isAH(l, h) ? " \u2605" : "")))));
  }
  $("ctx").innerHTML = T.contextual.length ? table(["token", "positions"].concat(
    T.lens[0].map((_, l) => "after layer " + l)), T.contextual.map(c => [JSON.stringify(c.text),
    c.positions.join(" and ")].concat(c.cosine.map(v => +v.toFixed(3))))) : "<p>no token occurs twice</p>";
}
