# nextstate — build, test, demo.  `make` builds the library and the CLI;
# `make test` runs unit and end-to-end tests; `make SAN=1 test` builds and
# tests under AddressSanitizer + UndefinedBehaviorSanitizer in build-san/;
# `make NOBLAS=1` uses plain-C matrix products instead of OpenBLAS.
# Builds run one job per core (JOBS=N to change it), output grouped per target.
JOBS    ?= $(shell nproc 2>/dev/null || echo 1)
# (set at the top level only: sub-makes share its jobs)
ifeq ($(MAKELEVEL),0)
MAKEFLAGS += -j$(JOBS) --output-sync=target
endif

CC      ?= cc
SAN     ?= 0
OPT     ?= -O2
CFLAGS  ?= $(OPT) -g
CFLAGS  += -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -Iinclude $(XCFLAGS)
# libxgboost is dlopen'ed by xgb.c when training (not linked: planning
# processes do not load it); glibc ≥ 2.34 has dlopen in libc.
LDLIBS  += -lm
NOBLAS  ?= 0

ifeq ($(NOBLAS),1)
CFLAGS  += -DNS_NO_BLAS
else
BLAS_CFLAGS := $(shell pkg-config --cflags openblas 2>/dev/null || echo -I/usr/include/x86_64-linux-gnu/openblas-pthread)
CFLAGS  += $(BLAS_CFLAGS)
LDLIBS  += -lopenblas
endif

ifeq ($(SAN),1)
BUILD   := build-san
CFLAGS  += -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
else
BUILD   := build
endif

# The numerics core's pointwise loops and row reductions (nn.c: GELU with
# fastmath.h, LayerNorm, bias sums; lstm.c: gates; optim.c: AdamW) are
# written to vectorise, which GCC's -O2 cost model does not do when a loop
# needs a scalar remainder or alias checks; sqrtf needs -fno-math-errno, and
# selecting between two computed values needs -fno-trapping-math.
# GCC's -O3 unroll-and-jam would turn the sparse layer's 32-wide tile update
# (nn.c) back into scalar code.
VEC_CFLAGS ?= -O3 -fno-math-errno -fno-trapping-math \
              $(shell $(CC) -fno-loop-unroll-and-jam -Werror -E -x c /dev/null >/dev/null 2>&1 && echo -fno-loop-unroll-and-jam)

# The library is layered; each layer is a folder of src/ with its headers in
# include/nextstate/<layer>/, and a layer includes only the layers below it:
#   util < core < data < encode < learn < eval, planner < cli
LAYERS   := util core data encode learn eval planner
LIB_SRC  := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c))
CLI_SRC  := $(wildcard src/cli/*.c)
TEST_SRC := $(wildcard tests/unit/test_*.c)
BENCH_SRC:= $(wildcard bench/*.c)
HEADERS  := $(wildcard include/nextstate/*.h include/nextstate/*/*.h src/*/*.h)
LIB_OBJ  := $(LIB_SRC:src/%.c=$(BUILD)/obj/%.o)
CLI_OBJ  := $(CLI_SRC:src/cli/%.c=$(BUILD)/obj/cli/%.o)
TESTS    := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCHES  := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
LIB      := $(BUILD)/libnextstate.a
BIN      := $(BUILD)/nextstate
EXAMPLE  := $(BUILD)/example
KILLAT   := $(BUILD)/tests/libkillat.so

.PHONY: all deps test demo bench clean fuzz
all: $(BIN) $(EXAMPLE) $(TESTS) $(BENCHES) $(KILLAT)

deps:
	@scripts/deps.sh

$(BUILD)/obj/learn/nn.o $(BUILD)/obj/learn/lstm.o $(BUILD)/obj/learn/optim.o $(BUILD)/obj/encode/bert.o: CFLAGS += $(VEC_CFLAGS)
$(BUILD)/obj/%.o: src/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Isrc -c $< -o $@
$(BUILD)/tests $(BUILD)/bench:
	mkdir -p $@

$(LIB): $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^
$(BIN): $(CLI_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(LDLIBS)
# example.c: the library's lifecycle in one file (tests/e2e/example.sh runs it)
$(EXAMPLE): example.c $(HEADERS) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)
$(BUILD)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(LIB) | $(BUILD)/tests
	$(CC) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)
# the kill tests' LD_PRELOAD shim (tests/e2e/kill_points.sh): never sanitised
$(KILLAT): tests/faults/killat.c | $(BUILD)/tests
	$(CC) -std=c11 -O1 -Wall -Wextra -Werror -shared -fPIC -o $@ $< -ldl
$(BUILD)/bench/%: bench/%.c $(wildcard bench/*.h) $(LIB) | $(BUILD)/bench
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# The Python package (python/, pyproject.toml) in the venv scripts/deps.sh
# makes (build/venv, Debian's /usr/bin/python3): reinstalled when a source
# changes; skipped when the venv is absent.
PY_VENV  := build/venv
PY_STAMP := $(PY_VENV)/.nextstate-installed
PY_SRC   := $(wildcard python/nextstate/*.c python/nextstate/*.py python/nextstate/*.pyi python/up_nextstate/*.py) python/nextstate/py.typed pyproject.toml setup.py
.PHONY: python
python: $(PY_STAMP)
$(PY_STAMP): $(LIB_SRC) $(HEADERS) $(PY_SRC)
	@if [ -x $(PY_VENV)/bin/pip ]; then $(PY_VENV)/bin/pip install -q --no-build-isolation --no-deps . && touch $@; \
	 else echo "python: no $(PY_VENV) (scripts/deps.sh makes it); the Python package is not built"; fi

# deps first, alone: it installs the compiler and libraries the rest needs
test: deps
	@$(MAKE) --no-print-directory all python
	@BUILD=$(BUILD) tests/run.sh

demo: deps
	@$(MAKE) --no-print-directory $(BIN)
	@BUILD=$(BUILD) scripts/demo.sh

bench: deps
	@$(MAKE) --no-print-directory $(BIN)
	@BUILD=$(BUILD) bench/run.sh

# libFuzzer targets (fuzz/*.c): `make fuzz` builds the library with clang,
# ASan and UBSan into build-fuzz/ and one fuzzer per target there;
# fuzz/run.sh makes seed corpora and runs each for FUZZ_SECONDS.
FUZZ_SRC := $(wildcard fuzz/fuzz_*.c)
fuzz:
	$(MAKE) CC=clang BUILD=build-fuzz NOBLAS=$(NOBLAS) \
	    OPT=-O1 XCFLAGS="-fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all" \
	    build-fuzz/libnextstate.a
	@mkdir -p build-fuzz/fuzz
	@for f in $(FUZZ_SRC); do n=$$(basename $$f .c); \
	    echo "clang $$f -> build-fuzz/fuzz/$$n"; \
	    clang -O1 -g -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -Iinclude \
	        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	        -o build-fuzz/fuzz/$$n $$f build-fuzz/libnextstate.a $(LDLIBS) || exit 1; done

clean:
	rm -rf build build-san build-clang build-fuzz
