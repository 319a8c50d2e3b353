# hark — build, test, install.  `make test` installs its own Debian packages.
PREFIX ?= /usr/local
CC ?= cc
PKGS = fftw3f sndfile openblas libcjson soxr zlib
DEB_PKGS = build-essential pkg-config libfftw3-dev libsndfile1-dev libopenblas-dev \
           libcjson-dev libsoxr-dev zlib1g-dev sox curl jq time
# ffmpeg: what libsndfile cannot read (MP4/M4A, WebM, video) is decoded by it when
# it is there; the tests use it, hark builds and runs without it
RUN_PKGS = ffmpeg
# the tests open hark explain's page and hark serve's in a headless browser (driven by
# node) and read a screenshot's pixels (they skip those checks without them)
TEST_PKGS = chromium netpbm nodejs
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
WARN = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
# hidden: libhark.so exports hark.h's declarations alone (its visibility pragma)
ALL_CFLAGS = $(WARN) $(CFLAGS) -fPIC -fvisibility=hidden -Iinclude -Isrc $(PKG_CFLAGS)
SAN_FLAGS = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDLIBS = $(PKG_LIBS) -lm -lpthread

# the library by stage (docs/architecture.md), the programs in cli/
STAGES = base kernels audio model nn decode
LIB_SRC = $(foreach s,$(STAGES),$(wildcard src/$(s)/*.c)) $(wildcard src/*.c)
CLI_SRC = $(wildcard cli/*.c)
TEST_SRC = $(wildcard tests/test_*.c)
B = build

# the pages hark serve answers and hark explain writes, built into the program as
# they are (scripts/embed.sh): no file is looked up at run time
ASSETS = cli/explain_draw.js cli/explain.css cli/studio/studio.html cli/studio/studio.css \
         cli/studio/studio.js
ASSET_SRC = $(B)/gen/assets.c

LIB_OBJ = $(LIB_SRC:%.c=$(B)/obj/%.o)
CLI_OBJ = $(CLI_SRC:%.c=$(B)/obj/%.o) $(B)/obj/gen/assets.o
SAN_LIB_OBJ = $(LIB_SRC:%.c=$(B)/san/obj/%.o)
SAN_CLI_OBJ = $(CLI_SRC:%.c=$(B)/san/obj/%.o) $(B)/san/obj/gen/assets.o
TESTS = $(TEST_SRC:tests/%.c=$(B)/tests/%)
SAN_TESTS = $(TEST_SRC:tests/%.c=$(B)/san/tests/%)
HDRS = $(wildcard include/*.h src/*.h src/*/*.h cli/*.h tests/*.h)

.PHONY: all deps test test-build test-fast test-cluster demo install clean fuzz fuzz-smoke docs
all: $(B)/hark $(B)/libhark.a $(B)/libhark.so

$(B)/obj/%.o: %.c $(HDRS)
	@mkdir -p $(@D)
	@echo "  CC $@"; $(CC) $(ALL_CFLAGS) -c $< -o $@
$(B)/san/obj/%.o: %.c $(HDRS)
	@mkdir -p $(@D)
	@echo "  CC $@"; $(CC) $(WARN) $(SAN_FLAGS) -Iinclude -Isrc $(PKG_CFLAGS) -c $< -o $@

$(ASSET_SRC): $(ASSETS) scripts/embed.sh
	@mkdir -p $(@D)
	@echo "  GEN $@"; sh scripts/embed.sh $(ASSETS) >$@.tmp && mv $@.tmp $@
$(B)/obj/gen/assets.o: $(ASSET_SRC)
	@mkdir -p $(@D)
	@echo "  CC $@"; $(CC) $(ALL_CFLAGS) -c $< -o $@
$(B)/san/obj/gen/assets.o: $(ASSET_SRC)
	@mkdir -p $(@D)
	@echo "  CC $@"; $(CC) $(WARN) $(SAN_FLAGS) -c $< -o $@

$(B)/libhark.a: $(LIB_OBJ)
	@rm -f $@; ar rcs $@ $^
$(B)/libhark.so: $(LIB_OBJ)
	@echo "  CC $@"; $(CC) -shared -o $@ $^ $(LDLIBS)
$(B)/hark: $(CLI_OBJ) $(B)/libhark.a
	@echo "  CC $@"; $(CC) $(CFLAGS) -o $@ $(CLI_OBJ) $(B)/libhark.a $(LDLIBS)
$(B)/san/hark: $(SAN_CLI_OBJ) $(SAN_LIB_OBJ)
	@echo "  CC $@"; $(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS)

# a test of a program's part (the golden runner's WER, .npy files) links its object too
$(B)/tests/test_wer: $(B)/obj/cli/wer.o
$(B)/san/tests/test_wer: $(B)/san/obj/cli/wer.o
NPY_TESTS = test_mel test_parity test_ref_tiny test_precision
$(NPY_TESTS:%=$(B)/tests/%): $(B)/obj/cli/npy.o
$(NPY_TESTS:%=$(B)/san/tests/%): $(B)/san/obj/cli/npy.o
$(B)/tests/%: tests/%.c $(B)/libhark.a $(HDRS)
	@mkdir -p $(@D)
	@echo "  CC $@"; $(CC) $(ALL_CFLAGS) -Icli -o $@ $< $(filter %.o,$^) $(B)/libhark.a $(LDLIBS)
$(B)/san/tests/%: tests/%.c $(SAN_LIB_OBJ) $(HDRS)
	@mkdir -p $(@D)
	@echo "  CC $@"; $(CC) $(WARN) $(SAN_FLAGS) -Iinclude -Isrc -Icli $(PKG_CFLAGS) -o $@ $< $(filter %.o,$^) $(LDLIBS)

# test_serve.sh's storm of slow peers, and a peer that half-closes
$(B)/tests/peers: tests/cli/peers.c
	@mkdir -p $(@D)
	@echo "  CC $@"; $(CC) $(WARN) $(CFLAGS) -o $@ $<

# The CLI reference, generated from the option table (test_cli.sh fails when the
# committed one differs).
docs: $(B)/hark
	./$(B)/hark --help-markdown >docs/cli.md

# Installs the Debian packages the build and the tests need, when any is missing
# (ffmpeg without its recommendations: those are a desktop's), and the browser test's
# axe-core from npm (tests/browser/package-lock.json; with node, when it is missing).
deps:
	@$(call install_missing,$(DEB_PKGS),)
	@$(call install_missing,$(RUN_PKGS),--no-install-recommends)
	@$(call install_missing,$(TEST_PKGS),--no-install-recommends)
	@command -v npm >/dev/null || { $(call install_missing,npm,--no-install-recommends); }
	@if command -v npm >/dev/null && [ ! -f tests/browser/node_modules/axe-core/axe.min.js ]; then \
	  echo "npm ci in tests/browser"; npm ci --prefix tests/browser --no-audit --no-fund --silent || \
	  echo "npm ci failed: the studio page's browser test will be skipped"; fi

install_missing = missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) $$missing; fi

# Runs after deps so that pkg-config flags are read with the packages present; builds
# on every core; the tests then run one at a time (hark serve's, for one, waits on its peers).
NPROC := $(shell nproc 2>/dev/null || echo 2)
test: deps
	@$(MAKE) --no-print-directory -j$(NPROC) test-build
	@bash tests/run.sh

test-build: all $(TESTS) $(B)/san/hark $(SAN_TESTS) $(B)/tests/peers
test-fast: test-build
	@bash tests/run.sh

# docs/batch.md's Slurm job array (with a cancelled and a killed task, resubmitted)
# and its GNU parallel line, on a one-node Slurm cluster that the test starts in a
# temporary directory and stops (tests/cluster/test_cluster.sh; needs root)
CLUSTER_PKGS = slurm-wlm munge parallel
test-cluster: deps
	@$(call install_missing,$(CLUSTER_PKGS),)
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@bash tests/cluster/test_cluster.sh

demo: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@for f in samples/*.wav; do echo "== $$f"; ./$(B)/hark "$$f" || exit 1; done

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/share/hark
	install -m 755 $(B)/hark $(DESTDIR)$(PREFIX)/bin/hark
	install -m 644 $(B)/libhark.a $(B)/libhark.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 include/hark.h $(DESTDIR)$(PREFIX)/include/hark.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@PKGS@|$(PKGS)|' hark.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/hark.pc
	for d in models/*/; do [ -f "$$d/config.json" ] && cp -r "$$d" $(DESTDIR)$(PREFIX)/share/hark/ || true; done
	cp -r models/silero-vad $(DESTDIR)$(PREFIX)/share/hark/

# Coverage-guided fuzzing of the model and audio parsers and of hark serve's HTTP
# (clang's libFuzzer; docs/testing.md#fuzzing):
#   make fuzz && LSAN_OPTIONS=suppressions=tests/fuzz/lsan.supp \
#     build/fuzz/fuzz_model -max_total_time=300 CORPUS_DIR tests/fuzz/corpus/model
# (lsan.supp: libvorbis's own leak on a damaged Ogg file, and why it is not hark's).
# The library's objects are built once, in parallel, into build/fuzz/obj; the
# compute kernels there without instrumentation: no parser reaches their
# arithmetic, the sanitized twin (build/san) checks them, and instrumented they
# take 90 of the build's 120 s.
# libclang-rt-dev: libFuzzer and the sanitizers' runtimes (clang only recommends them);
# llvm: llvm-symbolizer, for the file and line in a sanitizer's report
FUZZ_PKGS = clang libclang-rt-dev llvm
FUZZ_CC = clang
FUZZ_FLAGS = -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
             -fno-omit-frame-pointer $(WARN) -Iinclude -Isrc -Icli $(PKG_CFLAGS)
FUZZ_PLAIN = $(wildcard src/kernels/q8dot.c src/kernels/simd.c src/kernels/gemm512.c \
                        src/kernels/attn64.c)
FUZZ_LIB_OBJ = $(LIB_SRC:%.c=$(B)/fuzz/obj/%.o)
FUZZ_PLAIN_OBJ = $(FUZZ_PLAIN:%.c=$(B)/fuzz/obj/%.o)

fuzz: $(B)/fuzz/fuzz_model $(B)/fuzz/fuzz_http
$(B)/fuzz/obj/%.o: %.c $(HDRS)
	@mkdir -p $(@D)
	@echo "  FUZZCC $@"; $(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
$(FUZZ_PLAIN_OBJ): $(B)/fuzz/obj/%.o: %.c $(HDRS)
	@mkdir -p $(@D)
	@echo "  FUZZCC $@ (plain)"; $(FUZZ_CC) -g -O1 $(WARN) -Iinclude -Isrc $(PKG_CFLAGS) -c $< -o $@
$(B)/fuzz/fuzz_model: tests/fuzz/fuzz_model.c $(FUZZ_LIB_OBJ) $(HDRS)
	@echo "  FUZZCC $@"; $(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJ) $(LDLIBS)
# (http.c is hark serve's whole reading of requests, pure code: conn.c feeds it the bytes)
$(B)/fuzz/fuzz_http: tests/fuzz/fuzz_http.c cli/http.c cli/http.h
	@mkdir -p $(@D)
	@echo "  FUZZCC $@"; $(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ tests/fuzz/fuzz_http.c cli/http.c

# Every fuzz target over its committed corpus (tests/fuzz/corpus/): each file
# once, then a bounded, seeded run (tests/fuzz/smoke.sh); .ci/run runs it.
fuzz-smoke: deps
	@$(call install_missing,$(FUZZ_PKGS),--no-install-recommends)
	@$(MAKE) --no-print-directory -j$(NPROC) fuzz
	@B=$(B) bash tests/fuzz/smoke.sh

clean:
	rm -rf $(B)
