/* crash_entry_plugin.c: a plugin whose entry point dereferences a null pointer (SIGSEGV). Probed in a
   child process, it is refused and the other plugins of its folder load. */
#include <stdint.h>

#include "fugue_plugin.h"

volatile uintptr_t fugue_test_null_address = 0;

FUGUE_DEFINE_PLUGIN_ENTRY {
  (void)core_abi_major;
  (void)core_abi_minor;
  *(volatile int*)fugue_test_null_address = 1;
  return 0;
}
