package server

// applyLatency follows latency-monitor-threshold, latency-tracking and
// latency-tracking-info-percentiles.
func (s *Server) applyLatency() {}
