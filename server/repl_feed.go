package server

// replFeed appends a command of database db to the replication stream.
// No replica can attach yet, so there is no stream to feed: Redis keeps no
// backlog until a replica comes. The master side replaces this.
func (s *Server) replFeed(db int, args [][]byte) {}
