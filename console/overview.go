package console

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// infoSections runs INFO with the given section names (none: INFO's
// default) and returns its fields by section, the section names lower
// case as INFO takes them ("server", "queue").
func infoSections(s *session, sections ...string) (map[string]map[string]string, error) {
	v, err := s.do(append([]string{"INFO"}, sections...)...)
	if err != nil {
		return nil, err
	}
	return parseInfo(v.Str), nil
}

// parseInfo reads INFO's text: "# Title" lines open sections, "name:value"
// lines are fields.
func parseInfo(txt string) map[string]map[string]string {
	out := map[string]map[string]string{}
	cur := map[string]string{}
	for line := range strings.SplitSeq(txt, "\r\n") {
		if line == "" {
			continue
		}
		if title, ok := strings.CutPrefix(line, "# "); ok {
			cur = map[string]string{}
			out[strings.ToLower(title)] = cur
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			cur[k] = v
		}
	}
	return out
}

// overviewSections are the INFO sections the overview shows.
var overviewSections = []string{"server", "clients", "memory", "persistence", "stats", "replication", "keyspace",
	"delay", "queue", "numpool", "room"}

// overview is GET /api/overview: the INFO sections the overview page
// shows, as {"sections": {"server": {...}, ...}, "time": unix ms}.
func (c *Console) overview(w http.ResponseWriter, r *http.Request, s *session) {
	info, err := infoSections(s, overviewSections...)
	if err != nil {
		c.refuse(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"sections": info, "time": time.Now().UnixMilli()})
}

// eventInterval is how often the event stream sends the overview.
const eventInterval = time.Second

// events is GET /events: server-sent events, an "overview" event (the
// same JSON as /api/overview) at once and then every second, until the
// browser goes away or the server closes the connection.
func (c *Console) events(w http.ResponseWriter, r *http.Request, s *session) {
	fl, ok := w.(http.Flusher)
	if !ok {
		httpError(w, http.StatusInternalServerError, "streaming unsupported")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	tick := time.NewTicker(eventInterval)
	defer tick.Stop()
	for {
		info, err := infoSections(s, overviewSections...)
		if err != nil {
			fmt.Fprintf(w, "event: error\ndata: %q\n\n", err.Error())
			fl.Flush()
			return
		}
		fmt.Fprint(w, "event: overview\ndata: ")
		if err := jsonLine(w, map[string]any{"sections": info, "time": time.Now().UnixMilli()}); err != nil {
			return
		}
		fmt.Fprint(w, "\n\n") // a blank line ends an event: browsers dispatch it only then
		fl.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}
