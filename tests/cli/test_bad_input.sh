# Every bad input: one line "hark: <file>: <problem>", exit 1, no crash, no
# leak (the sanitized build runs this too), nothing written.
. "$(dirname "$0")/lib.sh"
M=tests/data/tiny-random/hf-f32
G=tests/data/tiny-random/model-f32.bin
CLIP=tests/data/clip.wav
T=$TMP

# ---- audio
expect_error "hark: $T/missing.wav: No such file or directory" -m $M $T/missing.wav
: >$T/empty.wav
expect_error "hark: $T/empty.wav: empty file" -m $M $T/empty.wav
echo "this is not audio" >$T/text.wav
expect_error "hark: $T/text.wav: not a readable audio file (Format not recognised.)" -m $M $T/text.wav
head -c 30 $CLIP >$T/header_cut.wav
expect_error "hark: $T/header_cut.wav: not a readable audio file (Error in WAV file. No 'data' chunk marker.)" -m $M $T/header_cut.wav
head -c 100044 $CLIP >$T/truncated.wav
expect_error "hark: $T/truncated.wav: truncated: data chunk claims 234240 bytes, file has 100000" -m $M $T/truncated.wav
{ head -c 40 $CLIP; le32 999999; tail -c +45 $CLIP; } >$T/claims_more.wav
expect_error "hark: $T/claims_more.wav: truncated: data chunk claims 999999 bytes, file has 234240" -m $M $T/claims_more.wav
{ head -c 40 $CLIP; le32 0; } >$T/zero.wav
expect_error "hark: $T/zero.wav: no audio samples" -m $M $T/zero.wav
# bytes that look like MPEG audio: the decoder's own chatter must not reach stderr
{ printf '\xff\xfb\x90\x00'; head -c 2000 /dev/zero; } >$T/mpeg.wav
expect_error "hark: $T/mpeg.wav: not a readable audio file (damaged MPEG audio)" -m $M $T/mpeg.wav
# containers libsndfile cannot read, known by their first bytes, without ffmpeg: what
# the file is and what to do, rather than "Format not recognised"
need="hark decodes it with ffmpeg, which was not found (apt-get install ffmpeg)"
foreign() { # NAME BYTES WHAT
    { printf "$2"; head -c 500 /dev/zero; } >$T/$1
    expect_error "hark: $T/$1: $3: $need" -m $M $T/$1
}
foreign memo.m4a '\x00\x00\x00\x20ftypM4A \x00\x00\x00\x00' "an MP4/M4A file (AAC or other audio in an MPEG-4 container)"
foreign call.webm '\x1a\x45\xdf\xa3\x9f\x42\x86\x81' "a WebM/Matroska file"
foreign old.wma '\x30\x26\xb2\x75\x8e\x66\xcf\x11' "a WMA/ASF file"
foreign voice.amr '#!AMR\n' "an AMR file"
foreign radio.aac '\xff\xf1\x50\x80\x02\x1f\xfc' "an AAC (ADTS) file"
foreign radio2.aac '\xff\xf9\x50\x80\x02\x1f\xfc' "an AAC (ADTS) file"
# 32-bit float WAV with a NaN as sample 3
{ printf 'RIFF'; le32 52; printf 'WAVEfmt '; le32 16; printf '\x03\x00\x01\x00'; le32 16000; le32 64000
  printf '\x04\x00\x20\x00data'; le32 16; printf '\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xc0\x7f'; } >$T/nan.wav
expect_error "hark: $T/nan.wav: sample 3 is NaN or infinite" -m $M $T/nan.wav
{ printf 'RIFF'; le32 44; printf 'WAVEfmt '; le32 16; printf '\x03\x00\x01\x00'; le32 16000; le32 64000
  printf '\x04\x00\x20\x00data'; le32 8; printf '\x00\x00\x80\x7f\x00\x00\x00\x00'; } >$T/inf.wav
expect_error "hark: $T/inf.wav: sample 0 is NaN or infinite" -m $M $T/inf.wav

# lengths that a few bytes of FLAC claim (STREAMINFO, no frames): nothing is
# allocated for them (the samples go to a temporary file as they decode), and
# what is not there is "truncated"
flac() { # flac RATE TOTAL: a FLAC header of 16-bit mono at RATE Hz claiming TOTAL samples
    local v=$(( ($1 << 44) | (15 << 36) | $2 )) i
    printf 'fLaC\x80\x00\x00\x22\x10\x00\x10\x00\x00\x00\x00\x00\x00\x00'
    for i in 56 48 40 32 24 16 8 0; do printf "\\x$(printf %02x $(( (v >> i) & 255 )))"; done
    head -c 16 /dev/zero
}
flac 655350 68719476735 >$T/huge.flac # 29 hours at the highest rate: 282 GB of samples
expect_error "hark: $T/huge.flac: truncated: read 0 of 68719476735 frames" -m $M $T/huge.flac
flac 1 5000000000 >$T/days.flac
expect_error "hark: $T/days.flac: implausible length (1388888.9 hours; hark reads at most 96)" -m $M $T/days.flac
# a header claiming 1.6 GB of samples that the machine could hold: memory follows what
# decodes, not the claim, so under a 1 GB address-space limit it is still "truncated"
# (hark once reserved the claim first: "out of memory"); ASan's shadow needs more room
if [ -z "${HARK_SANITIZED:-}" ]; then
    flac 16000 400000000 >$T/claim.flac
    (ulimit -v 1000000; "$HARK" -m $M $T/claim.flac >$T/out 2>$T/err); rc=$?
    expect_eq "a 7-hour claim under 1 GB" "$rc $(cat $T/err)" "1 hark: $T/claim.flac: truncated: read 0 of 400000000 frames"
else
    skip "ulimit -v and ASan: checked in the plain run"
fi

# odd rates and channel counts transcribe
if command -v sox >/dev/null; then
    sox $CLIP -r 8000 $T/r8k.wav; sox $CLIP -r 96000 $T/r96k.wav
    sox $CLIP -c 6 $T/six.wav; sox $CLIP -r 44100 -c 2 $T/st.flac
    for f in r8k.wav r96k.wav six.wav st.flac; do
        "$HARK" -m $M $T/$f >$T/out 2>$T/err; rc=$?
        expect_eq "$f transcribes" "$rc $([ -s $T/out ] && echo text) $(wc -c <$T/err)" "0 text 0"
    done
    # MP3 (libsndfile's MPEG decoder): transcribes, and the decoder says nothing on stderr
    if sox $CLIP $T/clip.mp3 2>/dev/null; then
        "$HARK" -m $M $T/clip.mp3 >$T/out 2>$T/err; rc=$?
        expect_eq "mp3 transcribes" "$rc $([ -s $T/out ] && echo text) $(wc -c <$T/err)" "0 text 0"
    else
        skip "this sox writes no mp3"
    fi
else
    skip "sox absent: rate and channel variants not made"
fi

# ---- Hugging Face directories
mkdir $T/noconfig; cp $M/vocab.json $M/merges.txt $T/noconfig/
expect_error "hark: $T/noconfig: no config.json (not a Hugging Face Whisper directory)" -m $T/noconfig $CLIP
hfdir() { rm -rf $T/hf; mkdir $T/hf; cp $M/*.json $M/merges.txt $T/hf/; }
hfdir; sed -i '/"d_model"/d' $T/hf/config.json
expect_error "hark: $T/hf/config.json: missing \"d_model\"" -m $T/hf $CLIP
# out of range: named as config.json names it
hfdir; sed -i 's/"d_model": [0-9]*/"d_model": 0/' $T/hf/config.json
expect_error "hark: $T/hf/config.json: d_model = 0 is out of range [1, 16384]" -m $T/hf $CLIP
hfdir; sed -i 's/"encoder_layers": [0-9]*/"encoder_layers": 100000/' $T/hf/config.json
expect_error "hark: $T/hf/config.json: encoder_layers = 100000 is out of range [1, 256]" -m $T/hf $CLIP
hfdir; printf '{"vocab_size": 462,' >$T/hf/config.json
expect_error "hark: $T/hf/config.json: malformed JSON" -m $T/hf $CLIP
hfdir; printf '{"a": ' >$T/hf/generation_config.json; cp $M/model.safetensors $T/hf/
expect_error "hark: $T/hf/generation_config.json: malformed JSON" -m $T/hf $CLIP
hfdir; sed -i 's/"<|en|>": 354/"<|en|>": 4620/' $T/hf/added_tokens.json; cp $M/model.safetensors $T/hf/
expect_error "hark: $T/hf/added_tokens.json: added token \"<|en|>\" has no id in [0, 462)" -m $T/hf $CLIP
hfdir; sed -i 's/"Ā": 0,/"Ā": 0.5,/' $T/hf/vocab.json; cp $M/model.safetensors $T/hf/
expect_error "hark: $T/hf/vocab.json: token \"Ā\" has no id in [0, 462)" -m $T/hf $CLIP
hfdir; sed -i 's/"alignment_heads": \[/"alignment_heads": [[1, 4], /' $T/hf/generation_config.json
cp $M/model.safetensors $T/hf/
expect_error "hark: $T/hf/generation_config.json: alignment head 0 is not [layer, head] of 2 layers x 4 heads" -m $T/hf $CLIP

st() { # st JSON DATA_BYTES > file: a safetensors file
    le32 ${#1}; printf '\x00\x00\x00\x00%s' "$1"; head -c "$2" /dev/zero; }
hfdir; { le32 5000; printf '\x00\x00\x00\x00{}'; } >$T/hf/model.safetensors
expect_error "hark: $T/hf/model.safetensors: header length 5000 exceeds the file (10 bytes)" -m $T/hf $CLIP
hfdir; st '{"model.encoder.conv1.bias":{"dtype":"F32","shape":[64],"data_offsets":[0,256]}}' 100 >$T/hf/model.safetensors
expect_error "hark: $T/hf/model.safetensors: tensor model.encoder.conv1.bias offsets [0, 256) lie outside the 100 data bytes" -m $T/hf $CLIP
hfdir; st '{"a":{"dtype":"F32","shape":[64],"data_offsets":[0,256]},"b":{"dtype":"F32","shape":[64],"data_offsets":[128,384]}}' 384 >$T/hf/model.safetensors
expect_error "hark: $T/hf/model.safetensors: tensors a and b overlap" -m $T/hf $CLIP
hfdir; st '{"a":{"dtype":"F32","shape":[64],"data_offsets":[0,128]}}' 128 >$T/hf/model.safetensors
expect_error "hark: $T/hf/model.safetensors: tensor a holds 128 bytes, its shape needs 256" -m $T/hf $CLIP
hfdir; st '{"model.encoder.conv1.weight":{"dtype":"F32","shape":[64,80,2],"data_offsets":[0,40960]}}' 40960 >$T/hf/model.safetensors
expect_error "hark: $T/hf/model.safetensors: tensor encoder.conv1.weight has shape [64, 80, 2], expected [64, 80, 3]" -m $T/hf $CLIP
hfdir; st '{"model.encoder.conv1.weight":{"dtype":"I32","shape":[64,80,3],"data_offsets":[0,61440]}}' 61440 >$T/hf/model.safetensors
expect_error "hark: $T/hf/model.safetensors: tensor model.encoder.conv1.weight has dtype I32; hark reads F32, F16 and BF16" -m $T/hf $CLIP
hfdir; st '{}' 0 >$T/hf/model.safetensors
expect_error "hark: $T/hf/model.safetensors: missing tensor encoder.conv1.weight" -m $T/hf $CLIP
# JSON and text files are read whole: a huge one (sparse here) or an endless one is
# refused at 256 MB, before cJSON would need many times that
hfdir; cp $M/model.safetensors $T/hf/; truncate -s 300M $T/hf/vocab.json
expect_error "hark: $T/hf/vocab.json: larger than 256 MB, too large for a JSON or text file" -m $T/hf $CLIP
hfdir; cp $M/model.safetensors $T/hf/; ln -sf /dev/zero $T/hf/merges.txt
expect_error "hark: $T/hf/merges.txt: larger than 256 MB, too large for a JSON or text file" -m $T/hf $CLIP
# ... but a stream of exactly 256 MB is read (zeros: a merges.txt with no merges)
rm $T/hf/merges.txt; mkfifo $T/hf/merges.txt
timeout 60 head -c $((256 << 20)) /dev/zero >$T/hf/merges.txt &
"$HARK" -q -m $T/hf $CLIP >/dev/null 2>$T/err; rc=$?
expect_eq "a 256 MB stream is read" "$rc $(cat $T/err)" "0 "
hfdir
expect_error "hark: $T/hf: no model.safetensors" -m $T/hf $CLIP
echo "not read" >$T/hf/pytorch_model.bin
expect_error "hark: $T/hf: no model.safetensors, only pytorch_model.bin (a pickle, which hark does not read): convert it with scripts/convert/pt-to-safetensors" -m $T/hf $CLIP

# ---- ggml files
{ printf 'lmgx'; tail -c +5 $G; } >$T/magic.bin
expect_error "hark: $T/magic.bin: bad magic 0x78676d6c (not a whisper.cpp ggml file)" -m $T/magic.bin $CLIP
# a zip archive, as torch.save writes openai-whisper's .pt checkpoints: said so, with the way
{ printf 'PK\003\004'; head -c 60 /dev/zero; } >$T/base.en.pt
expect_error "hark: $T/base.en.pt: a zip archive, as PyTorch checkpoints are (openai-whisper's .pt), not a whisper.cpp ggml file: scripts/convert/openai-pt-to-ggml converts one" \
    -m $T/base.en.pt $CLIP
head -c $(($(wc -c <$G) - 1000)) $G >$T/cut.bin
expect_error "hark: $T/cut.bin: truncated in tensor decoder.blocks.1.mlp_ln.weight" -m $T/cut.bin $CLIP
# header, no filters, a vocabulary of 400 tokens of which the file holds one
{ head -c 48 $G; le32 0; le32 0; le32 400; le32 1; printf 'a'; } >$T/vocab.bin
expect_error "hark: $T/vocab.bin: truncated in the vocabulary" -m $T/vocab.bin $CLIP
{ head -c 48 $G; le32 0; le32 0; le32 100000; } >$T/vocab2.bin
expect_error "hark: $T/vocab2.bin: vocabulary count 100000 (n_vocab 462)" -m $T/vocab2.bin $CLIP
: >$T/empty.bin
expect_error "hark: $T/empty.bin: truncated in the magic" -m $T/empty.bin $CLIP
expect_error "hark: $T/nomodel.bin: No such file or directory" -m $T/nomodel.bin $CLIP

# ---- weights that compute NaN: an error naming the model, not an empty transcript
nan_at() { # nan_at FILE COPY OFFSET: COPY is FILE with the f32 value at OFFSET made NaN
    cp "$1" "$2"
    printf '\x00\x00\xc0\x7f' | dd of="$2" bs=1 seek="$3" conv=notrunc 2>/dev/null
}
nan_last() { nan_at "$1" "$2" $(($(wc -c <"$1") - 4)); }
NAN_MSG="the model's output is NaN (its weights hold NaN or infinite values)"
hfdir; nan_last $M/model.safetensors $T/hf/model.safetensors # an encoder LayerNorm weight
expect_error "hark: $T/hf: $NAN_MSG" -m $T/hf $CLIP
nan_last $G $T/nan.bin # a decoder LayerNorm weight: NaN from the first step
# the decoder's position 4 (d_model 64): the first steps are finite, a later one is not
hdr=$(od -An -tu4 -N4 $M/model.safetensors)
pos=$(head -c $((8 + hdr)) $M/model.safetensors | grep -ao '"model.decoder.embed_positions.weight":{[^}]*}' |
      sed 's/.*"data_offsets":\[\([0-9]*\),.*/\1/')
hfdir; nan_at $M/model.safetensors $T/hf/model.safetensors $((8 + hdr + pos + 4 * 64 * 4))
for opts in "--beam-size 1" "--beam-size 5" "--temperature 0.5 --best-of 3"; do
    expect_error "hark: $T/nan.bin: $NAN_MSG" -m $T/nan.bin $opts $CLIP
    expect_error "hark: $T/hf: $NAN_MSG" -m $T/hf $opts $CLIP
done
rm -rf $T/multi; cp -r $M/../multi $T/multi
nan_last $M/../multi/model.safetensors $T/multi/model.safetensors
expect_error "hark: $T/multi: $NAN_MSG" -m $T/multi $CLIP
expect_error "hark: $T/multi: $NAN_MSG" -m $T/multi --detect-language $CLIP
mkdir $T/nan_out
"$HARK" -m $T/nan.bin -o $T/nan_out $CLIP 2>/dev/null
# (but the ledger, .hark-ledger, which says what happened)
expect_eq "nothing written for NaN weights" "$(ls $T/nan_out | wc -l)" 0

# a failed input writes nothing
mkdir $T/o
"$HARK" -m $M -o $T/o $T/text.wav 2>/dev/null
expect_eq "nothing written for a bad input" "$(ls $T/o | wc -l)" 0
summary bad_input
