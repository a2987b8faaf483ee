/* hang_entry_plugin.c: a plugin whose entry point never returns. */
#include <unistd.h>

#include "fugue_plugin.h"

FUGUE_DEFINE_PLUGIN_ENTRY {
  (void)core_abi_major;
  (void)core_abi_minor;
  for (;;) sleep(1);
  return 0;
}
