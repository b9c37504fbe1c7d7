package server

import (
	"github.com/revolver-db/revolver/commands"
)

// The ACL state: the default user (commands/acl_user.go), which requirepass
// sets and ACL SETUSER changes, and the ACL log of failed authentications.
// Both are read and written under the engine lock.
type aclState struct {
	user *commands.ACLUser
	log  []commands.ACLLogEntry // newest first
}

// DefaultUser implements the ACL server side.
func (s *Server) DefaultUser() *commands.ACLUser {
	if s.acl.user == nil {
		s.acl.user = commands.NewDefaultUser(s.cfg.RequirePass)
	}
	return s.acl.user
}

// SetDefaultUser implements the ACL server side.
func (s *Server) SetDefaultUser(u *commands.ACLUser) { s.acl.user = u }

// ACLLog implements the ACL server side.
func (s *Server) ACLLog() []commands.ACLLogEntry { return s.acl.log }

// ACLLogReset implements the ACL server side.
func (s *Server) ACLLogReset() { s.acl.log = nil }

// aclLogGrouping is how close in time a denial must follow a like one to
// count in its entry rather than start a new one, as in Redis.
const aclLogGroupingMs = 60000

// ACLLogAdd implements the ACL server side: a denial like a recent one
// (same reason, context, object and user) adds to its count.
func (s *Server) ACLLogAdd(e commands.ACLLogEntry) {
	for i := range s.acl.log {
		old := &s.acl.log[i]
		if old.Reason == e.Reason && old.Context == e.Context && old.Object == e.Object &&
			old.Username == e.Username && e.Time.Sub(old.Time).Milliseconds() < aclLogGroupingMs {
			old.Count++
			old.Time, old.ClientInfo = e.Time, e.ClientInfo
			return
		}
	}
	s.acl.log = append([]commands.ACLLogEntry{e}, s.acl.log...)
	if limit := s.cfg.extraInt("acllog-max-len"); int64(len(s.acl.log)) > limit {
		s.acl.log = s.acl.log[:limit]
	}
}

// InExec reports whether the client runs the commands of a transaction
// (the ACL log's "multi" context).
func (c *Client) InExec() bool { return c.inExec }
