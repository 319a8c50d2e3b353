/* hark serve's page: the audio goes up as a job (POST /v1/jobs, with upload progress),
 * its progress and segments come from polling GET /v1/jobs/ID, the transcript is shown
 * in step with the audio played from the browser's own copy, the downloads are
 * GET /v1/jobs/ID/result, a window's trace POST /v1/jobs/ID/explain drawn by
 * drawExplain (explain_draw.js).  With API keys, the key is asked for once (at the
 * first 401) and kept in the tab's sessionStorage.  document.body.dataset.state says
 * where it is: idle, uploading, running, done, failed, cancelled (the tests read it). */
"use strict";
(function () {
  const $ = id => document.getElementById(id);
  const POLL_MS = 300;
  let key = sessionStorage.getItem("hark-api-key") || "";
  let job = null, segments = [], words = [], current = -1, currentWord = -1, xhr = null;
  let baseName = "audio";

  function setState(s) { document.body.dataset.state = s; }
  function status(text) { $("status").textContent = text; }
  function showError(text) {
    $("error").textContent = text;
    $("error").hidden = !text;
  }
  function fmtTime(t) {
    const m = Math.floor(t / 60), s = t - 60 * m;
    return (m < 10 ? "0" : "") + m + ":" + (s < 10 ? "0" : "") + s.toFixed(2);
  }
  function authHeaders() { return key ? {Authorization: "Bearer " + key} : {}; }

  /* The key, asked for in the page's own form; resolves once it is given. */
  function askKey() {
    return new Promise(resolve => {
      const form = $("key-form");
      form.hidden = false;
      $("key").focus();
      form.onsubmit = e => {
        e.preventDefault();
        key = $("key").value.trim();
        sessionStorage.setItem("hark-api-key", key);
        form.hidden = true;
        resolve();
      };
    });
  }

  /* fetch with the key; a 401 asks for it and tries again. */
  async function api(method, path) {
    for (;;) {
      const r = await fetch(path, {method, headers: authHeaders()});
      if (r.status !== 401)
        return r;
      showError("");
      await askKey();
    }
  }
  async function errorOf(r) {
    try { return (await r.json()).error.message; } catch (e) { return "HTTP " + r.status; }
  }

  /* The server's defaults into the form. */
  async function loadDefaults() {
    const r = await api("GET", "/v1/options");
    if (!r.ok)
      return showError(await errorOf(r));
    const d = await r.json();
    $("language").placeholder = d.language === "auto" ? "auto" : d.language;
    $("translate").value = d.translate ? "true" : "false";
    $("translate").disabled = !d.multilingual;
    $("timestamps").checked = d.timestamps;
    $("words").checked = d.word_timestamps;
    $("beam").value = Math.max(1, d.beam_size);
    $("vad").checked = d.vad;
    $("vad").disabled = !d.vad;
    $("prompt").value = d.prompt;
  }

  /* The form as the job API takes it. */
  function formData(file) {
    const f = new FormData();
    f.append("file", file, file.name || "recording.webm");
    const lang = $("language").value.trim();
    if (lang)
      f.append("language", lang);
    if (!$("translate").disabled)
      f.append("translate", $("translate").value);
    f.append("no_timestamps", $("timestamps").checked ? "false" : "true");
    if ($("words").checked)
      f.append("timestamp_granularities[]", "word");
    f.append("beam_size", $("beam").value || "1");
    if (!$("vad").disabled)
      f.append("vad", $("vad").checked ? "true" : "false");
    if ($("prompt").value)
      f.append("prompt", $("prompt").value);
    return f;
  }

  /* POST /v1/jobs with the upload's progress; resolves to the response (status, JSON). */
  function upload(data) {
    return new Promise((resolve, reject) => {
      xhr = new XMLHttpRequest();
      xhr.open("POST", "/v1/jobs");
      for (const [k, v] of Object.entries(authHeaders()))
        xhr.setRequestHeader(k, v);
      xhr.upload.onprogress = e => {
        if (e.lengthComputable)
          $("upload-bar").value = e.loaded / e.total;
      };
      xhr.onload = () => {
        let body = null;
        try { body = JSON.parse(xhr.responseText); } catch (e) { body = null; }
        resolve({status: xhr.status, body});
      };
      xhr.onerror = () => reject(new Error("the upload failed: is the server running?"));
      xhr.onabort = () => reject(new Error("cancelled"));
      xhr.send(data);
    });
  }

  async function start(e) {
    e.preventDefault();
    const file = $("file").files[0];
    if (!file)
      return showError("Choose, drop or record a file first.");
    showError("");
    baseName = (file.name || "recording").replace(/\.[^.]*$/, "") || "audio";
    reset(file);
    setState("uploading");
    status("Uploading " + (file.name || "the recording") + "…");
    $("go").disabled = true;
    $("cancel").disabled = false;
    try {
      let r;
      while ((r = await upload(formData(file))).status === 401)
        await askKey();
      xhr = null;
      $("upload-bar").value = 1;
      if (r.status !== 202)
        return fail(r.body && r.body.error ? r.body.error.message : "HTTP " + r.status);
      job = {id: r.body.id};
      setState("running");
      status("Transcribing…");
      poll();
    } catch (err) {
      xhr = null;
      fail(err.message);
    }
  }

  function reset(file) {
    segments = [];
    words = [];
    current = currentWord = -1;
    $("segments").textContent = "";
    $("explain").textContent = "";
    $("window").textContent = "";
    $("upload-bar").value = 0;
    $("work-bar").value = 0;
    delete $("status").dataset.windowsDone;
    delete $("status").dataset.windowsTotal;
    const player = $("player");
    if (player.src)
      URL.revokeObjectURL(player.src);
    player.src = URL.createObjectURL(file);
    $("output").hidden = false;
    $("inside").hidden = true;
    for (const b of document.querySelectorAll("#downloads button"))
      b.disabled = true;
  }

  function fail(text) {
    setState(text === "cancelled" ? "cancelled" : "failed");
    status(text === "cancelled" ? "Cancelled." : "Stopped.");
    if (text !== "cancelled")
      showError(text);
    $("go").disabled = false;
    $("cancel").disabled = true;
  }

  /* GET /v1/jobs/ID?since=N until the job ends. */
  async function poll() {
    const r = await api("GET", "/v1/jobs/" + job.id + "?since=" + segments.length);
    if (!r.ok)
      return fail(await errorOf(r));
    const s = await r.json();
    s.segments.forEach(addSegment);
    progress(s);
    if (s.state === "queued" || s.state === "running")
      return setTimeout(poll, POLL_MS);
    $("go").disabled = false;
    $("cancel").disabled = true;
    if (s.state !== "done")
      return fail(s.state === "cancelled" ? "cancelled" : s.error);
    finish(s);
  }

  function progress(s) {
    const st = $("status");
    st.dataset.windowsDone = s.windows_done;
    st.dataset.windowsTotal = s.windows_total;
    $("work-bar").value = s.windows_total ? s.windows_done / s.windows_total : 0;
    if (s.state === "running" || s.state === "queued")
      status("Window " + s.windows_done + " of " + s.windows_total + " done (" +
        s.seconds_done.toFixed(1) + " s of " + s.seconds_total.toFixed(1) + " s)");
  }

  function finish(s) {
    $("work-bar").value = 1;
    status("Done: " + s.n_segments + " segments, " + s.windows_done + " windows, " +
      s.seconds_total.toFixed(1) + " s of audio.");
    for (const b of document.querySelectorAll("#downloads button"))
      b.disabled = false;
    const sel = $("window");
    s.windows.forEach((w, i) => {
      const o = document.createElement("option");
      o.value = i;
      o.textContent = (i + 1) + ": " + fmtTime(w.start) + " to " + fmtTime(w.end);
      sel.appendChild(o);
    });
    $("inside").hidden = s.windows.length === 0;
    setState("done");
  }

  /* A run of text shaded by how likely the model found it. */
  function piece(text, p) {
    const span = document.createElement("span");
    span.textContent = text;
    if (p < 0.3)
      span.className = "lower";
    else if (p < 0.6)
      span.className = "low";
    if (p < 0.6)
      span.title = "p = " + p.toFixed(2);
    return span;
  }

  function addSegment(s) {
    const i = segments.length;
    segments.push(s);
    const li = document.createElement("li");
    const seg = document.createElement("div");
    seg.className = "seg";
    seg.tabIndex = 0;
    seg.setAttribute("role", "button");
    seg.dataset.index = i;
    const time = document.createElement("span");
    time.className = "time";
    time.textContent = fmtTime(s.start) + " – " + fmtTime(s.end);
    const text = document.createElement("span");
    text.className = "text";
    if (s.words.length) {
      s.words.forEach(w => {
        const span = piece(w.word, w.p);
        span.classList.add("w");
        span.dataset.word = words.length;
        words.push({start: w.start, end: w.end, el: span, seg: i});
        text.appendChild(span);
      });
    } else if (s.tokens.map(t => t.text).join("") === s.text) {
      s.tokens.forEach(t => text.appendChild(piece(t.text, t.p)));
    } else {
      text.textContent = s.text;
    }
    seg.append(time, text);
    li.appendChild(seg);
    $("segments").appendChild(li);
  }

  /* Plays from t. */
  function playFrom(t) {
    const player = $("player");
    player.currentTime = t;
    highlight();
    player.play().catch(() => {});
  }

  /* The segment (and word) under the playback position, marked. */
  function highlight() {
    const t = $("player").currentTime;
    let i = -1;
    while (i + 1 < segments.length && segments[i + 1].start <= t + 1e-3)
      i++;
    if (i >= 0 && t >= segments[i].end)
      i = -1; /* between segments */
    if (i !== current) {
      const old = document.querySelector(".seg.current");
      if (old) {
        old.classList.remove("current");
        old.removeAttribute("aria-current");
      }
      current = i;
      const now = i >= 0 ? document.querySelector('.seg[data-index="' + i + '"]') : null;
      if (now) {
        now.classList.add("current");
        now.setAttribute("aria-current", "true");
      }
    }
    let w = -1;
    while (w + 1 < words.length && words[w + 1].start <= t + 1e-3)
      w++;
    if (w >= 0 && t >= words[w].end)
      w = -1;
    if (w !== currentWord) {
      if (currentWord >= 0)
        words[currentWord].el.classList.remove("current-word");
      currentWord = w;
      if (w >= 0)
        words[w].el.classList.add("current-word");
    }
  }

  function follow() {
    highlight();
    if (!$("player").paused)
      requestAnimationFrame(follow);
  }

  async function download(format) {
    const r = await api("GET", "/v1/jobs/" + job.id + "/result?format=" + format);
    if (!r.ok)
      return showError(await errorOf(r));
    const a = document.createElement("a");
    a.href = URL.createObjectURL(await r.blob());
    a.download = baseName + "." + format;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 60000);
  }

  async function explain() {
    const w = $("window").value, box = $("explain");
    box.textContent = "Tracing window " + (+w + 1) + "…";
    delete box.dataset.drawn;
    const r = await api("POST", "/v1/jobs/" + job.id + "/explain?window=" + w);
    if (!r.ok) {
      box.textContent = "";
      return showError(await errorOf(r));
    }
    drawExplain(await r.json(), box);
    box.dataset.drawn = w;
  }

  async function cancel() {
    $("cancel").disabled = true;
    if (xhr)
      return xhr.abort();
    if (!job)
      return;
    status("Cancelling…");
    const r = await api("DELETE", "/v1/jobs/" + job.id);
    if (!r.ok && r.status !== 404)
      showError(await errorOf(r));
  }

  /* MediaRecorder: the recording becomes the chosen file (the server decodes it with
   * ffmpeg, as any WebM or Ogg upload). */
  let recorder = null, recStart = 0, recTimer = 0;
  async function record() {
    if (recorder)
      return recorder.stop();
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({audio: true});
    } catch (err) {
      return showError("No microphone: " + err.message);
    }
    const chunks = [];
    recorder = new MediaRecorder(stream);
    recorder.ondataavailable = e => chunks.push(e.data);
    recorder.onstop = () => {
      stream.getTracks().forEach(t => t.stop());
      clearInterval(recTimer);
      const type = recorder.mimeType || "audio/webm";
      const ext = type.includes("ogg") ? "ogg" : type.includes("mp4") ? "m4a" : "webm";
      const dt = new DataTransfer();
      dt.items.add(new File(chunks, "recording." + ext, {type}));
      $("file").files = dt.files;
      recorder = null;
      $("record").textContent = "Record from the microphone";
      $("rec-time").textContent = "recorded: press Transcribe";
    };
    recorder.start();
    recStart = Date.now();
    $("record").textContent = "Stop recording";
    recTimer = setInterval(() => {
      $("rec-time").textContent = ((Date.now() - recStart) / 1000).toFixed(0) + " s";
    }, 500);
  }

  function wire() {
    $("format-label").hidden = true; /* the no-script form's; the page downloads every format */
    document.forms[0].addEventListener("submit", start); /* the form that posts to /inference */
    $("cancel").addEventListener("click", cancel);
    $("explain-go").addEventListener("click", explain);
    for (const b of document.querySelectorAll("#downloads button"))
      b.addEventListener("click", () => download(b.dataset.format));
    const drop = $("drop");
    drop.addEventListener("dragover", e => { e.preventDefault(); drop.classList.add("over"); });
    drop.addEventListener("dragleave", () => drop.classList.remove("over"));
    drop.addEventListener("drop", e => {
      e.preventDefault();
      drop.classList.remove("over");
      if (e.dataTransfer.files.length)
        $("file").files = e.dataTransfer.files;
    });
    if (navigator.mediaDevices && window.MediaRecorder) {
      $("record").hidden = false;
      $("record").addEventListener("click", record);
    }
    const list = $("segments");
    list.addEventListener("click", e => {
      const w = e.target.closest(".w"), seg = e.target.closest(".seg");
      if (w)
        playFrom(words[+w.dataset.word].start);
      else if (seg)
        playFrom(segments[+seg.dataset.index].start);
    });
    list.addEventListener("keydown", e => {
      const seg = e.target.closest(".seg");
      if (seg && (e.key === "Enter" || e.key === " ")) {
        e.preventDefault();
        playFrom(segments[+seg.dataset.index].start);
      }
    });
    const player = $("player");
    player.addEventListener("play", follow);
    player.addEventListener("timeupdate", highlight);
    player.addEventListener("seeked", highlight);
  }

  wire();
  setState("idle");
  loadDefaults().catch(err => showError(err.message));
})();
