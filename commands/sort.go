package commands

import (
	"github.com/revolver-db/revolver/engine"
)

// Sort is SORT and SORT_RO. Their BY and GET patterns name keys only once
// the elements are known, and SORT's STORE may come anywhere, so the key
// specs after the first are "unknown" and COMMAND GETKEYS finds the keys
// with unknownKeyProcs, as Redis does with sortGetKeys.
var Sort = []*Command{
	{Name: "sort", Arity: -2, Flags: "write denyoom", ACL: "set sortedset list dangerous",
		Keys: "RO access @1;" +
			"RO access notes=For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort;" +
			"OW update notes=For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array",
		Group: "generic", Since: "1.0.0", Complexity: sortComplexity,
		Summary: "Sort the elements in a list, set or sorted set",
		Args:    sortArgs + " [STORE destination:key#2]",
		Run:     func(c *Ctx) { sortCommand(c, false) }},
	{Name: "sort_ro", Arity: -2, Flags: "readonly", ACL: "set sortedset list dangerous",
		Keys: "RO access @1;" +
			"RO access notes=For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort",
		Group: "generic", Since: "7.0.0", Complexity: sortComplexity,
		Summary: "Sort the elements in a list, set or sorted set. Read-only variant of SORT.",
		Args:    sortArgs,
		Run:     func(c *Ctx) { sortCommand(c, true) }},
}

const (
	sortComplexity = "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the " +
		"number of returned elements. When the elements are not sorted, complexity is O(N)."
	sortArgs = "key [BY pattern:pattern#1] [LIMIT (offset_count=offset:integer count:integer)] " +
		"[GET pattern:pattern#1]... [order=ASC|DESC] [sorting=ALPHA]"
)

// unknownKeyProcs find the keys of the commands whose key specs are
// "unknown" (COMMAND GETKEYS), with their flags; keyProcs (command.go)
// complete specs that are only incomplete.
var unknownKeyProcs = map[string]func(args [][]byte) ([]int, [][]string){
	"sort":    sortKeys,
	"sort_ro": func([][]byte) ([]int, [][]string) { return []int{1}, [][]string{{"RO", "access"}} },
}

// sortKeys is the sorted key and the last STORE's destination. Like
// Redis's scan it skips the values of LIMIT, GET and BY but not STORE's, so
// "STORE limit" reads the next two arguments as LIMIT's.
func sortKeys(args [][]byte) ([]int, [][]string) {
	pos, flags := []int{1}, [][]string{{"RO", "access"}}
	store := 0
	for i := 2; i < len(args); i++ {
		switch a := args[i]; {
		case is(a, "LIMIT"):
			i += 2
		case is(a, "GET"), is(a, "BY"):
			i++
		case is(a, "STORE") && i+1 < len(args):
			store = i + 1
		}
	}
	if store > 0 {
		pos, flags = append(pos, store), append(flags, []string{"OW", "update"})
	}
	return pos, flags
}

func sortCommand(c *Ctx, readonly bool) {
	spec := engine.SortSpec{Count: -1}
	var store []byte
	hasStore := false
	for j := 2; j < len(c.Args); j++ {
		a, left := c.Args[j], len(c.Args)-j-1
		switch {
		case is(a, "ASC"):
			spec.Desc = false
		case is(a, "DESC"):
			spec.Desc = true
		case is(a, "ALPHA"):
			spec.Alpha = true
		case is(a, "LIMIT") && left >= 2:
			var ok bool
			if spec.Offset, ok = c.Int64(j + 1); !ok {
				return
			}
			if spec.Count, ok = c.Int64(j + 2); !ok {
				return
			}
			j += 2
		case !readonly && is(a, "STORE") && left >= 1:
			store, hasStore = c.Args[j+1], true
			j++
		case is(a, "BY") && left >= 1:
			spec.By = append([]byte{}, c.Args[j+1]...) // never nil: nil means no BY
			spec.NoSort = spec.NoSort || !engine.SortPatternHasStar(spec.By)
			j++
		case is(a, "GET") && left >= 1:
			spec.Gets = append(spec.Gets, c.Args[j+1])
			j++
		default:
			c.SyntaxError()
			return
		}
	}
	spec.Store = hasStore
	_, spec.Script = c.Conn.(*scriptConn)
	rows, err := c.DB.Sort(c.Args[1], &spec)
	if err != nil {
		c.Error(err)
		return
	}
	if !hasStore {
		c.W.Array(len(rows))
		for _, r := range rows {
			if r == nil {
				c.W.Null()
			} else {
				c.W.Bulk(r)
			}
		}
		return
	}
	if len(rows) > 0 {
		c.DB.SortStore(store, rows)
		c.DB.Notify(engine.NotifyList, "sortstore", store)
	} else if c.DB.SortStore(store, nil) {
		c.DB.Notify(engine.NotifyGeneric, "del", store)
	}
	c.W.Int(int64(len(rows)))
}
