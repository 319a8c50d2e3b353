// OpenAI's own Node SDK against hark serve, the calls an application makes
// (run by scripts/check/check-openai-sdk: BASE_URL API_KEY AUDIO [MULTILINGUAL_BASE_URL]).
import fs from 'node:fs';
import OpenAI from 'openai';
const [base, key, audio, multiBase] = process.argv.slice(2);
const client = new OpenAI({ baseURL: base, apiKey: key });
const file = () => fs.createReadStream(audio);
let failed = 0;
const check = (what, ok, got) => { console.log(`${ok ? 'ok' : 'FAIL'} ${what}${ok ? '' : ': ' + JSON.stringify(got)}`); failed += !ok; };
const t = await client.audio.transcriptions.create({ model: 'whisper-1', file: file() });
check('json text', typeof t.text === 'string' && t.text.length > 0, t);
const v = await client.audio.transcriptions.create({ model: 'whisper-1', file: file(), response_format: 'verbose_json', timestamp_granularities: ['word', 'segment'] });
check('verbose_json', v.task === 'transcribe' && v.language === 'english' && v.segments.length > 0 && v.words.length > 0 && typeof v.segments[0].seek === 'number', v);
const s = await client.audio.transcriptions.create({ model: 'whisper-1', file: file(), response_format: 'srt' });
check('srt', typeof s === 'string' && s.startsWith('1\n00:00:00,000 --> '), s);
const txt = await client.audio.transcriptions.create({ model: 'whisper-1', file: file(), response_format: 'text', language: 'en', prompt: 'Schedules.', temperature: 0.2 });
check('text with language, prompt, temperature', typeof txt === 'string' && txt.endsWith('\n'), txt);
try {
  await new OpenAI({ baseURL: base, apiKey: 'wrong', maxRetries: 0 }).audio.transcriptions.create({ model: 'whisper-1', file: file() });
  check('wrong key refused', false, 'accepted');
} catch (e) {
  check('wrong key refused', e instanceof OpenAI.AuthenticationError && e.status === 401 && e.code === 'invalid_api_key', { status: e.status, code: e.code });
}
try {
  await client.audio.transcriptions.create({ model: 'whisper-1', file: file(), response_format: 'docx' });
  check('bad format refused', false, 'accepted');
} catch (e) {
  check('bad format refused', e instanceof OpenAI.BadRequestError && /response_format/.test(e.message), e.message);
}
if (multiBase) {
  const m = new OpenAI({ baseURL: multiBase, apiKey: 'none' });
  const tr = await m.audio.translations.create({ model: 'whisper-1', file: file(), response_format: 'verbose_json' });
  check('translations', tr.task === 'translate' && typeof tr.text === 'string', tr);
}
console.log(failed ? `${failed} failed` : 'all passed');
process.exit(failed ? 1 : 0);
