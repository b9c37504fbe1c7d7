package commands

// Module is MODULE. Revolver loads no modules: the list is empty, and
// loading or unloading fails with Redis's texts for a failed load and for
// an unknown module.
var Module = []*Command{
	{Name: "module", Arity: -2, Group: "server", Since: "4.0.0", Complexity: "Depends on subcommand.",
		Summary: "A container for module commands", Subs: []*Command{
			{Name: "help", Arity: 2, Flags: "loading stale", Group: "server", Since: "5.0.0", Complexity: "O(1)",
				Summary: "Show helpful text about the different subcommands", Run: moduleHelp},
			{Name: "list", Arity: 2, Flags: "admin noscript", Tips: "nondeterministic_output_order", Group: "server",
				Since: "4.0.0", Complexity: "O(N) where N is the number of loaded modules.",
				Summary: "List all modules loaded by the server", Run: moduleList},
			{Name: "load", Arity: -3, Flags: "no_async_loading admin noscript protected", Group: "server", Since: "4.0.0",
				Complexity: "O(1)", Summary: "Load a module", Args: "path [arg]...", Run: moduleLoad},
			{Name: "loadex", Arity: -3, Flags: "no_async_loading admin noscript protected", Group: "server",
				Since: "7.0.0", Complexity: "O(1)", Summary: "Load a module with extended parameters",
				Args: "path [CONFIG (configs=name value)]...+ [ARGS (args=arg)]...", Run: moduleLoad},
			{Name: "unload", Arity: 3, Flags: "no_async_loading admin noscript protected", Group: "server",
				Since: "4.0.0", Complexity: "O(1)", Summary: "Unload a module", Args: "name", Run: moduleUnload},
		}},
}

func moduleHelp(c *Ctx) {
	writeHelp(c, "MODULE",
		"LIST",
		"    Return the loaded modules (this server has none).",
		"LOAD <path> [<arg> ...]",
		"    Load the module library at <path> with the given arguments.",
		"LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
		"    Load the module library at <path> with configurations and arguments.",
		"UNLOAD <name>",
		"    Unload the module <name>.")
}

func moduleList(c *Ctx) { c.W.Array(0) }

func moduleLoad(c *Ctx) { c.W.Error("ERR Error loading the extension. Please check the server logs.") }

func moduleUnload(c *Ctx) { c.W.Error("ERR Error unloading module: no such module with that name") }
