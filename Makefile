# The README's two commands. Each installs missing Debian packages (as root; otherwise it
# prints the apt-get line and stops), configures, builds and runs.
#   make demo   run im2col on a small default: info, the first thread's step-through, check,
#               then lesson 02 (im2col) in the viewer with a display, or in the terminal
#               (answering itself) plus its slides as PNG without one
#   make test   make format-check, then build and run every Check suite through ctest
#   make format        reformat the C/CUDA sources in place with clang-format (.clang-format;
#                      the files: tools/format-files.sh)
#   make format-check  fail, naming each file, where clang-format would change a source file
#   make test-props  the random property test over every operator (test_props) with 50
#                    draws per operator and mode instead of make test's 6
#   make test-asan   the same suites built with clang -fsanitize=address,undefined (CUDA off)
#   make install PREFIX=P   kscope, libkscope, the SDK headers, CMake package and kscope.pc
#                           under P (default /usr/local): docs/your-own-kernel.md
#   make fuzz        every libFuzzer target for FUZZ_SECONDS (default 60) each, in parallel
#   make gallery     conv_arithmetic's animations (GIF + PNG frames) from real im2col/col2im
#                    traces into $(BUILD)/gallery, or GALLERY=DIR (docs/gallery.md)
BUILD ?= build
PKGS := cmake pkg-config gcc make libcjson-dev check libsubunit-dev libzstd-dev \
        libsdl2-dev libsdl2-ttf-dev libsdl2-image-dev fonts-dejavu-core xvfb xauth \
        libpng-dev libgif-dev clang-16 libdw-dev clang-format-14
MAKEFLAGS += --no-print-directory
JOBS := $(shell nproc 2>/dev/null || echo 2)
KSCOPE := $(BUILD)/kscope
DEMO := $(BUILD)/demo
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
# the clang-format the tree is formatted with: another major version lays some lines out
# differently, so format-check insists on this one (its package is in PKGS)
CLANG_FORMAT ?= clang-format-14
CLANG_FORMAT_MAJOR := 14
# the sanitized runs: leaks on, stop at the first error; third-party leaks suppressed
SAN_ENV := ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:allocator_may_return_null=1 \
           UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
           LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0

.PHONY: all deps deps-clang configure build test test-props test-asan fuzz demo bench clean install \
        format format-tool format-check gallery
all: build

deps:
	@command -v dpkg >/dev/null 2>&1 || exit 0; \
	missing=""; for p in $(PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" = 0 ]; then \
	  echo "make: installing$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	else \
	  echo "make: missing packages; install them with:"; echo "  sudo apt-get install -y$$missing"; exit 1; \
	fi

# clang and its libFuzzer/sanitizer runtimes, for test-asan and fuzz
deps-clang: deps
	@command -v dpkg >/dev/null 2>&1 || exit 0; \
	dpkg -s clang >/dev/null 2>&1 && exit 0; \
	if [ "$$(id -u)" = 0 ]; then \
	  echo "make: installing clang"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null || exit 1; \
	else \
	  echo "make: clang is missing; install it with:"; echo "  sudo apt-get install -y clang"; exit 1; \
	fi

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j$(JOBS)

PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

test: format-check build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# clang-format on tools/format-files.sh's list (the .cu kernels that traces and tests quote
# line by line are not on it)
format-tool: deps
	@v=$$($(CLANG_FORMAT) --version 2>/dev/null) || { \
	  echo "make: $(CLANG_FORMAT) not found (make deps installs clang-format-$(CLANG_FORMAT_MAJOR))"; exit 1; }; \
	case "$$v" in *"version $(CLANG_FORMAT_MAJOR)."*) ;; \
	  *) echo "make: the tree is formatted with clang-format $(CLANG_FORMAT_MAJOR); $(CLANG_FORMAT) is: $$v"; exit 1;; esac

format: format-tool
	@files=$$(tools/format-files.sh) || exit 1; \
	printf '%s\n' "$$files" | xargs -r -d '\n' -n 24 -P $(JOBS) $(CLANG_FORMAT) --style=file -i

# one line per file clang-format would change, with the first line it would change (or
# clang-format's own first line when it fails otherwise: a bad .clang-format, say)
format-check: format-tool
	@files=$$(tools/format-files.sh) && [ -n "$$files" ] || { echo "format-check: no file list"; exit 1; }; \
	bad=$$(printf '%s\n' "$$files" | xargs -d '\n' -n 24 -P $(JOBS) sh -c ' \
	  out=$$("$$0" --style=file --dry-run --Werror "$$@" 2>&1) && exit 0; \
	  v=$$(printf "%s\n" "$$out" | sed -n "s/^\(.*\):\([0-9][0-9]*\):[0-9][0-9]*: error: code should be clang-formatted.*/\1 \2/p" | \
	       awk "!seen[\$$1]++ { print \"format-check: \" \$$1 \": not clang-formatted (from line \" \$$2 \")\" }"); \
	  printf "%s\n" "$${v:-format-check: $$0 failed: $$(printf "%s\n" "$$out" | head -n 1)}"' $(CLANG_FORMAT)); \
	[ -z "$$bad" ] && exit 0; \
	printf '%s\n' "$$bad" | LC_ALL=C sort -u; \
	n=$$(printf '%s\n' "$$bad" | grep -c 'not clang-formatted'); \
	[ "$$n" = 0 ] || echo "format-check: $$n file(s) to reformat: run 'make format' ($(CLANG_FORMAT)) and commit the result"; \
	exit 1

test-props: build
	cd $(BUILD) && KS_PROPS_DRAWS=50 ctest --output-on-failure -R '^test_props$$'

test-asan: deps-clang
	@CC=clang cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKS_SANITIZE=ON \
	    -DKS_WITH_CUDA=OFF >/dev/null
	@cmake --build $(ASAN_BUILD) -j$(JOBS)
	cd $(ASAN_BUILD) && $(SAN_ENV) ctest --output-on-failure -j$(JOBS)

fuzz: deps-clang
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKS_FUZZ=ON \
	    -DKS_WITH_CUDA=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j$(JOBS)
	tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

demo: build
	@mkdir -p $(DEMO)
	$(KSCOPE) run im2col --channels 2 --input-size 5,5 --kernel-size 3 --padding 1 --stride 1 \
	    --trace $(DEMO)/im2col.kst --save $(DEMO)
	$(KSCOPE) info $(DEMO)/im2col.kst
	$(KSCOPE) step $(DEMO)/im2col.kst --thread 0
	$(KSCOPE) check $(DEMO)/im2col.kst
	@echo "demo trace: $(DEMO)/im2col.kst  (try: $(KSCOPE) step $(DEMO)/im2col.kst --index 12)"
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
	  echo "lesson 02 in the viewer (PageDown / PageUp for the steps, A for answers, Q to quit)"; \
	  $(KSCOPE) lesson 02 --view; \
	 else \
	  echo "no display: lesson 02 in the terminal (answering itself), then its slides as PNG"; \
	  $(KSCOPE) lesson 02 --auto && \
	  rm -rf $(DEMO)/lesson-02 && $(KSCOPE) lesson 02 --frames $(DEMO)/lesson-02 && \
	  rm -rf $(DEMO)/frames && $(KSCOPE) view $(DEMO)/im2col.kst --frames $(DEMO)/frames --every 19 && \
	  $(KSCOPE) view $(DEMO)/im2col.kst --goto index=7 --keys 1,Right,Right,Right --png $(DEMO)/view.png; \
	 fi

GALLERY ?= $(BUILD)/gallery
gallery: build
	$(KSCOPE) gallery $(GALLERY)

bench: build
	$(BUILD)/bench/bench_sim
	@if [ -x $(BUILD)/bench/bench_view ]; then $(BUILD)/bench/bench_view /tmp --events-1g; fi
	@if [ -x $(BUILD)/bench/bench_gpu ]; then $(BUILD)/bench/bench_gpu; fi

clean:
	rm -rf $(BUILD)
