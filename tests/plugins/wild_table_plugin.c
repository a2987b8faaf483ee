/* wild_table_plugin.c: a plugin whose table points its operation list at an address nothing is
   mapped at: the registry's checks fault when they follow it. */
#include <stdint.h>

#include "fugue_plugin.h"

static fugue_plugin table = {sizeof(fugue_plugin), FUGUE_ABI_VERSION_MAJOR, FUGUE_ABI_VERSION_MINOR,
                             "wild_table", "0.1.0", "An operation list at a wild address", 0, 0, 0, 0, 0, 0, 0, 0};

FUGUE_DEFINE_PLUGIN_ENTRY {
  (void)core_abi_major;
  (void)core_abi_minor;
  table.num_ops = 3;
  table.ops = (const fugue_op_desc* const*)(uintptr_t)0x10;
  return &table;
}
