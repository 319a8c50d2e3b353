// Silero VAD speech probabilities from its ONNX file through onnxruntime, the
// reference hark's src/vad.c is tested against (tests/data/vad/).
//
// Usage: node scripts/reference/vad-reference.js SILERO.onnx FILE.wav > PROBS.txt
//   (FILE: 16 kHz mono 16-bit PCM; one probability per 512 samples, each chunk
//   after the previous 64 samples, zeros first, as silero-vad's OnnxWrapper feeds it)
// Needs: npm install --ignore-scripts onnxruntime-node@1.31.1 (its postinstall
//   fetches GPU libraries from nuget.org, which is not reachable here, and the CPU
//   library is in the package), and the ONNX file from @ricky0123/vad-web@0.0.31
//   (see scripts/convert/silero-to-ggml).
// Made tests/data/vad/long-espeak-en-us.txt from silero_vad_v6.onnx and
//   samples/long-espeak-en-us.wav.
"use strict";
const ort = require('onnxruntime-node');
const fs = require('fs');
function readWav(path) {
  const b = fs.readFileSync(path);
  let i = 12, fmt, data;
  while (i + 8 <= b.length) {
    const id = b.toString('ascii', i, i + 4), n = b.readUInt32LE(i + 4);
    if (id === 'fmt ') fmt = { ch: b.readUInt16LE(i + 10), rate: b.readUInt32LE(i + 12), bits: b.readUInt16LE(i + 22) };
    if (id === 'data') data = b.subarray(i + 8, i + 8 + n);
    i += 8 + n + (n & 1);
  }
  if (!fmt || fmt.ch !== 1 || fmt.rate !== 16000 || fmt.bits !== 16) throw new Error(path + ': need 16 kHz mono 16-bit');
  const x = new Float32Array(data.length >> 1);
  for (let k = 0; k < x.length; k++) x[k] = data.readInt16LE(2 * k) / 32768;
  return x;
}
(async () => {
  const [model, wav] = process.argv.slice(2);
  const s = await ort.InferenceSession.create(model);
  const x = readWav(wav);
  let state = new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);
  const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
  let ctx = new Float32Array(64);
  const out = [];
  for (let i = 0; i < x.length; i += 512) {
    const chunk = new Float32Array(576);
    chunk.set(ctx, 0);
    chunk.set(x.subarray(i, Math.min(i + 512, x.length)), 64);
    const r = await s.run({ input: new ort.Tensor('float32', chunk, [1, 576]), state, sr });
    state = r.stateN;
    out.push(r.output.data[0]);
    ctx = chunk.slice(512);
  }
  process.stdout.write(out.map(p => p.toFixed(6)).join('\n') + '\n');
})();
