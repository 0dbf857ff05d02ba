// Sanitizer settings of the sanitizer variants of the unit tests, compiled into them so
// that they hold however the binaries are started (ctest, by hand, a debugger).
extern "C" {
const char* __tsan_default_options() { return "halt_on_error=1:second_deadlock_stack=1"; }
const char* __asan_default_options() { return "detect_leaks=1:halt_on_error=1"; }
const char* __ubsan_default_options() { return "print_stacktrace=1:halt_on_error=1"; }
}
