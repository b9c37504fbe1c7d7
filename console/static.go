package console

import (
	"embed"
	"io/fs"
	"net/http"
)

// The web console's pages, styles and scripts, built into the binary: it
// needs no CDN and works offline.
//
//go:embed static
var staticFiles embed.FS

// staticHandler serves the console's files. They hold nothing secret, but
// like every endpoint they are served only to an authenticated request.
func (c *Console) staticHandler() http.Handler {
	sub, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic(err) // the embedded tree always has it
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := c.open(r)
		if err != nil {
			c.refuse(w, err)
			return
		}
		s.close()
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
		files.ServeHTTP(w, r)
	})
}
