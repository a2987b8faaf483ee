/* bad_abi_plugin.c: a plugin built for ABI major version 99 (refused, naming both versions). */
#include "fugue_plugin.h"

static const fugue_plugin table = {sizeof(fugue_plugin), 99, 3, "future", "9.0.0", "From another ABI", 0, 0, 0, 0, 0, 0, 0, 0};

FUGUE_DEFINE_PLUGIN_ENTRY {
  (void)core_abi_major;
  (void)core_abi_minor;
  return &table;
}
