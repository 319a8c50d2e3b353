#!/usr/bin/python3
"""Reference values for hark's word-timestamp rules (src/align.c's segment fitting,
src/wordseek.c's seeking and hallucination skipping): random windows of timed words
put through openai/whisper's rules as its transcribe() and add_word_timestamps()
state them (whisper 20250625), written to tests/data/word_rules.json for
tests/test_wordseek.c.

The rules are plain arithmetic on word and segment times, so random cases reach
every branch; the generator leans towards the thresholds (improbable words, words
near 0.133 s and 2 s long, gaps near the silence threshold).
Run: /usr/bin/python3 scripts/reference/word_rules_reference.py
"""
import json
import os
import random

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "data", "word_rules.json")
PUNCTUATION = "\"'\u201c\u00bf([{-\"'.\u3002,\uff0c!\uff01?\uff1f:\uff1a\u201d)]}\u3001"
FRAMES_PER_SECOND = 100


# ---------------------------------------------------------------- add_word_timestamps

def fit_segments(segments, median_duration, last_speech_timestamp):
    """The per-segment part of openai's add_word_timestamps, after the words are
    timed and rounded: segments' bounds and first and last words fitted."""
    max_duration = median_duration * 2
    for segment in segments:
        words = segment["words"]
        if len(words) > 0:
            if words[0]["end"] - last_speech_timestamp > median_duration * 4 and (
                words[0]["end"] - words[0]["start"] > max_duration
                or (len(words) > 1 and words[1]["end"] - words[0]["start"] > max_duration * 2)
            ):
                if len(words) > 1 and words[1]["end"] - words[1]["start"] > max_duration:
                    boundary = max(words[1]["end"] / 2, words[1]["end"] - max_duration)
                    words[0]["end"] = words[1]["start"] = boundary
                words[0]["start"] = max(0, words[0]["end"] - max_duration)
            if segment["start"] < words[0]["end"] and segment["start"] - 0.5 > words[0]["start"]:
                words[0]["start"] = max(0, min(words[0]["end"] - median_duration,
                                               segment["start"]))
            else:
                segment["start"] = words[0]["start"]
            if segment["end"] > words[-1]["start"] and segment["end"] + 0.5 < words[-1]["end"]:
                words[-1]["end"] = max(words[-1]["start"] + median_duration, segment["end"])
            else:
                segment["end"] = words[-1]["end"]
            last_speech_timestamp = segment["end"]
    return segments


# ---------------------------------------------------------------- transcribe()

def word_anomaly_score(word):
    probability = word.get("probability", 0.0)
    duration = word["end"] - word["start"]
    score = 0.0
    if probability < 0.15:
        score += 1.0
    if duration < 0.133:
        score += (0.133 - duration) * 15
    if duration > 2.0:
        score += duration - 2.0
    return score


def is_segment_anomaly(segment):
    if segment is None or not segment["words"]:
        return False
    words = [w for w in segment["words"] if w["word"] not in PUNCTUATION]
    words = words[:8]
    score = sum(word_anomaly_score(w) for w in words)
    return score >= 3 or score + 0.01 >= len(words)


def next_words_segment(segments):
    return next((s for s in segments if s["words"]), None)


def get_end(segments):
    return next((w["end"] for s in reversed(segments) for w in reversed(s["words"])),
                segments[-1]["end"] if segments else None)


def word_seek(case):
    """openai's seek and hallucination rules for one window; returns (seek, kept)
    where kept is the number of segments kept or -1 for a window skipped whole."""
    w, segments, threshold = case["window"], case["segments"], case["threshold"]
    previous_seek, seek = w["seek"], w["next"]
    time_offset = float(previous_seek / FRAMES_PER_SECOND)
    window_end_time = float((previous_seek + w["window"]) / FRAMES_PER_SECOND)
    segment_size = w["size"]
    segment_duration = segment_size / FRAMES_PER_SECOND
    content_frames = w["content"]
    content_duration = float(content_frames / FRAMES_PER_SECOND)
    single_timestamp_ending = w["single_end"]
    last_speech_timestamp = w["last_speech"]
    current_segments = list(segments)

    if not single_timestamp_ending:
        last_word_end = get_end(current_segments)
        if last_word_end is not None and last_word_end > time_offset:
            seek = round(last_word_end * FRAMES_PER_SECOND)
    if threshold is not None:
        if not single_timestamp_ending:
            last_word_end = get_end(current_segments)
            if last_word_end is not None and last_word_end > time_offset:
                remaining_duration = window_end_time - last_word_end
                if remaining_duration > threshold:
                    seek = round(last_word_end * FRAMES_PER_SECOND)
                else:
                    seek = previous_seek + segment_size
        first_segment = next_words_segment(current_segments)
        if first_segment is not None and is_segment_anomaly(first_segment):
            gap = first_segment["start"] - time_offset
            if gap > threshold:
                return previous_seek + round(gap * FRAMES_PER_SECOND), -1
        hal_last_end = last_speech_timestamp
        for si in range(len(current_segments)):
            segment = current_segments[si]
            if not segment["words"]:
                continue
            if is_segment_anomaly(segment):
                next_segment = next_words_segment(current_segments[si + 1:])
                if next_segment is not None:
                    hal_next_start = next_segment["words"][0]["start"]
                else:
                    hal_next_start = time_offset + segment_duration
                silence_before = (segment["start"] - hal_last_end > threshold
                                  or segment["start"] < threshold
                                  or segment["start"] - time_offset < 2.0)
                silence_after = (hal_next_start - segment["end"] > threshold
                                 or is_segment_anomaly(next_segment)
                                 or window_end_time - segment["end"] < 2.0)
                if silence_before and silence_after:
                    seek = round(max(time_offset + 1, segment["start"]) * FRAMES_PER_SECOND)
                    if content_duration - segment["end"] < threshold:
                        seek = content_frames
                    current_segments[si:] = []
                    break
            hal_last_end = segment["end"]
    return seek, len(current_segments)


# ---------------------------------------------------------------- random windows

WORDS = [" the", " quick", " brown", " fox", " jumps", " over", " a", " lazy", " dog", ".",
         ",", " \u201chello", "?"]


def random_words(rng, t, n):
    """n words from time t: 2-decimal times, durations and probabilities drawn
    around the anomaly thresholds; returns the words and the time after them."""
    words = []
    for _ in range(n):
        t += rng.choice([0.0, 0.0, 0.02, rng.uniform(0, 3)])
        d = rng.choice([rng.uniform(0.0, 0.2), rng.uniform(0.1, 0.8), rng.uniform(1.5, 3.5)])
        start, end = round(t, 2), round(t + d, 2)
        p = rng.choice([rng.uniform(0, 0.2), rng.uniform(0.5, 1.0)])
        p = round(p * 1024) / 1024      # exact as the float hark keeps it in
        words.append({"word": rng.choice(WORDS), "start": start, "end": end, "probability": p})
        t = end
    return words, t


def random_segments(rng, t0, span):
    segments, t = [], t0
    for _ in range(rng.randint(0, 4)):
        words, end = random_words(rng, t, rng.choice([0, 1, 2, 3, 5, 9, 12]))
        if rng.random() < 0.5 or not words:   # timestamp bounds near the words, or anywhere
            start, stop = round(t + rng.uniform(-1, 1), 2), round(end + rng.uniform(-1, 1), 2)
        else:
            start, stop = words[0]["start"], words[-1]["end"]
        segments.append({"start": max(t0, start), "end": max(t0, stop), "words": words})
        t = end + rng.uniform(0, span / 4)
    return segments


def fit_case(rng):
    segments = random_segments(rng, rng.choice([0.0, 12.34]), 10)
    median = min(0.7, rng.choice([0.0, round(rng.uniform(0.05, 1.0), 3)]))
    last = rng.choice([0.0, round(rng.uniform(0, 15), 2)])
    before = json.loads(json.dumps(segments))
    return {"median": median, "last_speech": last, "segments": before,
            "fitted": fit_segments(segments, median, last)}


def seek_case(rng):
    window = rng.choice([500, 1000, 3000])
    seek = rng.choice([0, 1234, 5000])
    content = seek + rng.choice([window // 3, window, 3 * window])
    size = min(window, content - seek)
    segments = random_segments(rng, seek / 100, size / 100)
    case = {"window": {"seek": seek, "size": size, "window": window, "content": content,
                       "single_end": rng.random() < 0.3,
                       "last_speech": rng.choice([0.0, max(0, round(seek / 100 - rng.uniform(0, 5), 2))]),
                       "next": seek + rng.randint(1, size)},
            "threshold": rng.choice([None, 0.5, 1.0, 2.0, 5.0]), "segments": segments}
    case["seek"], case["kept"] = word_seek(case)
    return case


def compact(segments, text=True):
    """[start, end, [[word, start, end, probability] ...]] per segment (the fixture's
    form; without text, [start, end] per word)."""
    return [[s["start"], s["end"], [[w["word"], w["start"], w["end"], w["probability"]]
                                    if text else [w["start"], w["end"]] for w in s["words"]]]
            for s in segments]


def main():
    rng = random.Random(20250625)
    ref = {"fit": [fit_case(rng) for _ in range(120)],
           "seek": [seek_case(rng) for _ in range(240)]}
    out = {"fit": [{"median": c["median"], "last_speech": c["last_speech"],
                    "segments": compact(c["segments"]), "fitted": compact(c["fitted"], False)}
                   for c in ref["fit"]],
           "seek": [dict(c, segments=compact(c["segments"])) for c in ref["seek"]]}
    with open(OUT, "w") as f:
        json.dump(out, f, separators=(",", ":"))
    kept = [c["kept"] for c in ref["seek"] if c["threshold"] is not None]
    print("%s: %d fit, %d seek cases (with a threshold: %d skipped whole, %d cut short)" % (
        os.path.relpath(OUT, ROOT), len(ref["fit"]), len(ref["seek"]), kept.count(-1),
        sum(1 for c in ref["seek"] if c["threshold"] is not None and
            0 <= c["kept"] < len(c["segments"]))))


if __name__ == "__main__":
    main()
