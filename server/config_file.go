package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Config files as redis-server reads them: parameters, and the directives
// that are not (include, rename-command, user, the deprecated ones Redis
// ignores, and those Revolver refuses with a reason).

// apply parses redis.conf-style text: "name value..." per line, # comments,
// quoted arguments, and the directives that are not parameters.
func (c *Config) apply(text, source string) error { return c.applyNested(text, source, 0) }

// maxIncludeDepth bounds include within include (a file including itself).
const maxIncludeDepth = 16

func (c *Config) applyNested(text, source string, depth int) error {
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		args, ok := splitConfigArgs(line)
		if !ok {
			return fmt.Errorf("%s, line %d: unbalanced quotes in %q", source, n+1, line)
		}
		if len(args) == 0 {
			continue
		}
		handled, err := c.directive(args, depth)
		if err == nil && !handled {
			if len(args) < 2 && !(len(args) == 1 && lookupParam(args[0]) != nil) {
				err = errors.New("Bad directive or wrong number of arguments")
			} else {
				err = c.Set(args[0], strings.Join(args[1:], " "))
			}
		}
		if err != nil {
			return fmt.Errorf("%s, line %d: %q: %v", source, n+1, line, err)
		}
	}
	return nil
}

// directive handles the lines of redis.conf that are not parameters, as
// Redis 7.0's loadServerConfigFromString does; handled is false for a
// parameter.
func (c *Config) directive(args []string, depth int) (handled bool, err error) {
	name := strings.ToLower(args[0])
	switch {
	case name == "include" && len(args) == 2:
		return true, c.include(args[1], depth+1)
	case name == "rename-command" && len(args) == 3:
		c.RenameCommands = append(c.RenameCommands, [2]string{args[1], args[2]})
		return true, nil
	case name == "user" && len(args) >= 2:
		for _, u := range c.Users {
			if u[0] == args[1] {
				return true, fmt.Errorf("Error in user declaration '%s': Duplicate user found. A user can only "+
					"be defined once in config files", args[1])
			}
		}
		c.Users = append(c.Users, args[1:])
		return true, nil
	case (name == "list-max-ziplist-entries" || name == "list-max-ziplist-value" ||
		name == "lua-replicate-commands") && len(args) == 2:
		return true, nil // deprecated: Redis 7.0 accepts and ignores them
	case name == "loadmodule":
		return true, errors.New("loadmodule: Revolver loads no Redis modules (its own types are built in)")
	case name == "sentinel":
		return true, errors.New("sentinel directive while not in sentinel mode")
	case lookupParam(name) == nil && strings.Contains(name, "."):
		return true, errors.New("Module Configuration detected without loadmodule directive: Revolver loads no Redis modules")
	}
	return false, nil
}

// include applies the file path names, or every file a glob pattern
// matches (none is no error, as in Redis, so an empty conf.d is fine).
func (c *Config) include(path string, depth int) error {
	if depth > maxIncludeDepth {
		return fmt.Errorf("include: more than %d levels deep (a file including itself?)", maxIncludeDepth)
	}
	files := []string{path}
	if strings.ContainsAny(path, "*?[") {
		var err error
		if files, err = filepath.Glob(path); err != nil {
			return fmt.Errorf("include %s: %v", path, err)
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("Fatal error, can't open config file '%s': %v", f, err)
		}
		if err := c.applyNested(string(data), f, depth); err != nil {
			return err
		}
	}
	return nil
}
