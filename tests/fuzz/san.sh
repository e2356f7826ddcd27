# tests/fuzz/san.sh - the sanitizer settings the fuzz targets run under,
# sourced by tests/fuzz/run.sh (make fuzz) and tests/cli/fuzz_replay.sh (the
# replay, with the sanitizers under make asan); FUZZ_DIR is tests/fuzz.
# allocator_may_return_null: an absurd request (libhdf5 reading a damaged
# size) gets NULL, as from malloc in a normal build; wikibert's xmalloc then
# ends the program, which both engines report. lsan.supp: libhdf5's own
# leaks on damaged files.
: "${ASAN_OPTIONS:=abort_on_error=0:detect_leaks=1}"
export ASAN_OPTIONS="$ASAN_OPTIONS:allocator_may_return_null=1"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$FUZZ_DIR/lsan.supp:print_suppressions=0"
: "${UBSAN_OPTIONS:=print_stacktrace=1:halt_on_error=1}"
export UBSAN_OPTIONS
