package console

import (
	"encoding/json"
	"io"
)

// routes registers every endpoint. Pages are static files (static.go);
// what they show comes from the JSON API below.
func (c *Console) routes() {
	c.mux.Handle("GET /api/overview", c.handler(c.overview))
	c.mux.Handle("GET /events", c.handler(c.events))
	c.mux.Handle("GET /metrics", c.metricsHandler())
	c.mux.Handle("GET /", c.staticHandler())
}

// jsonLine writes v as one line of JSON (an SSE data line).
func jsonLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
