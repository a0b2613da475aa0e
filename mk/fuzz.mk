# mk/fuzz.mk: the differential test's long run and the libFuzzer targets.

# The long differential run (make test runs 2,000 of these sequences):
# DIFF_COUNT sequences from seed DIFF_FIRST, each failing seed printed;
# SEED=n replays that one sequence and prints its operations.
DIFF_COUNT ?= 100000
DIFF_FIRST ?= 1
fuzz-long: $(LIB)
	$(RUN_ENV) SEED="$(SEED)" $(LUA) spec/fuzz_long.lua $(DIFF_COUNT) $(DIFF_FIRST)

# libFuzzer targets (clang) for the pure-C parts that read user input: the
# layout arithmetic, the kernel source scanner and the .npy header reader. Each runs FUZZ_TIME
# seconds over the corpus kept in fuzz/corpus/<target> (read only: what it
# finds goes to $(BUILD)/fuzz/corpus-<target>, a crash to
# $(BUILD)/fuzz/<target>-crash-*).
FUZZ_CC    ?= clang
FUZZ_TIME  ?= 60
FUZZ_FLAGS  = -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
              -fno-sanitize-recover=undefined $(WARN) -D_POSIX_C_SOURCE=200809L $(BASE_INC)
FUZZ_TARGETS = layout scan npy

# the base library again, built by the fuzzer's compiler with its
# instrumentation, sanitizers included
FUZZ_BASE_OBJ = $(BASE_OBJ:$(BUILD)/obj/%=$(BUILD)/fuzz/obj/%)
FUZZ_BASE_LIB = $(BUILD)/fuzz/libluacuda_base.a
$(BUILD)/fuzz/obj/base/%.o: src/base/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -MMD -MP -c $< -o $@
-include $(FUZZ_BASE_OBJ:.o=.d)
$(FUZZ_BASE_LIB): $(FUZZ_BASE_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/fuzz/%_fuzz: fuzz/%_fuzz.c $(FUZZ_BASE_LIB)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) $< $(FUZZ_BASE_LIB) -o $@ -lpthread -lm

fuzz:
	@$(MAKE) --no-print-directory deps PACKAGES=clang
	@$(MAKE) --no-print-directory fuzz-run

fuzz-run: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/%_fuzz)
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(BUILD)/fuzz/corpus-$$t; \
	  echo "== fuzz $$t: $(FUZZ_TIME) s over fuzz/corpus/$$t"; \
	  $(BUILD)/fuzz/$${t}_fuzz -max_total_time=$(FUZZ_TIME) -print_final_stats=1 \
	    -artifact_prefix=$(BUILD)/fuzz/$$t- $(BUILD)/fuzz/corpus-$$t fuzz/corpus/$$t \
	    > $(BUILD)/fuzz/$$t.log 2>&1 || { tail -25 $(BUILD)/fuzz/$$t.log; exit 1; }; \
	  grep -E '^stat::(number_of_executed_units|new_units_added)' $(BUILD)/fuzz/$$t.log; \
	done
