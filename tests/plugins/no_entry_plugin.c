/* no_entry_plugin.c: a shared library that exports something, but not the plugin entry point. */
__attribute__((visibility("default"))) int some_other_function(void) { return 42; }
