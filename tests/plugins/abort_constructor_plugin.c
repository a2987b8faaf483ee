/* abort_constructor_plugin.c: a library whose static constructor aborts while it is being loaded,
   before anyone calls its (sound) entry point. */
#include <stdlib.h>

#include "fugue_plugin.h"

__attribute__((constructor)) static void fail_at_load(void) { abort(); }

static const fugue_plugin table = {sizeof(fugue_plugin), FUGUE_ABI_VERSION_MAJOR, FUGUE_ABI_VERSION_MINOR,
                                   "abort_constructor", "0.1.0", "Aborts in a constructor", 0, 0, 0, 0, 0, 0, 0, 0};

FUGUE_DEFINE_PLUGIN_ENTRY {
  (void)core_abi_major;
  (void)core_abi_minor;
  return &table;
}
