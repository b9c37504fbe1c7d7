package commands

import "github.com/revolver-db/revolver/engine"

// Family is one command family: the table its file declares and, for a
// native family, the INFO section it adds.
type Family struct {
	Commands []*Command
	Info     *InfoSection
}

// InfoSection is a native family's section of INFO (SPEC.md §5). INFO,
// INFO default, all and everything show it after Redis's own sections, and
// INFO <Name> alone.
type InfoSection struct {
	Name  string // lower case, as INFO takes it
	Title string // the "# Title" line
	// Fields adds the section's fields, under the engine lock. Prefix
	// their names with the family's (delay_keys), so that tools that
	// flatten INFO (redis_exporter) never see two fields of one name.
	Fields func(e *engine.Engine, add func(field string, value any))
}
