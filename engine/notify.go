package engine

// NotifyClass is a keyspace-notification class (notify-keyspace-events).
type NotifyClass uint32

// Classes, with Redis's bit values and letters.
const (
	NotifyKeyspace NotifyClass = 1 << 0  // K
	NotifyKeyevent NotifyClass = 1 << 1  // E
	NotifyGeneric  NotifyClass = 1 << 2  // g
	NotifyString   NotifyClass = 1 << 3  // $
	NotifyList     NotifyClass = 1 << 4  // l
	NotifySet      NotifyClass = 1 << 5  // s
	NotifyHash     NotifyClass = 1 << 6  // h
	NotifyZSet     NotifyClass = 1 << 7  // z
	NotifyExpired  NotifyClass = 1 << 8  // x
	NotifyEvicted  NotifyClass = 1 << 9  // e
	NotifyStream   NotifyClass = 1 << 10 // t
	NotifyKeyMiss  NotifyClass = 1 << 11 // m (not part of A)
	NotifyModule   NotifyClass = 1 << 13 // d
	NotifyNew      NotifyClass = 1 << 14 // n (not part of A)

	NotifyAll = NotifyGeneric | NotifyString | NotifyList | NotifySet | NotifyHash |
		NotifyZSet | NotifyExpired | NotifyEvicted | NotifyStream | NotifyModule
)

var notifyLetters = []struct {
	c     byte
	class NotifyClass
}{
	{'g', NotifyGeneric}, {'$', NotifyString}, {'l', NotifyList}, {'s', NotifySet},
	{'h', NotifyHash}, {'z', NotifyZSet}, {'x', NotifyExpired}, {'e', NotifyEvicted},
	{'t', NotifyStream}, {'d', NotifyModule}, {'n', NotifyNew},
}

// ParseNotifyClasses parses a notify-keyspace-events value.
func ParseNotifyClasses(s string) (NotifyClass, bool) {
	var f NotifyClass
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 'A':
			f |= NotifyAll
		case 'K':
			f |= NotifyKeyspace
		case 'E':
			f |= NotifyKeyevent
		case 'm':
			f |= NotifyKeyMiss
		default:
			found := false
			for _, l := range notifyLetters {
				if l.c == c {
					f |= l.class
					found = true
				}
			}
			if !found {
				return 0, false
			}
		}
	}
	return f, true
}

// String formats classes the way CONFIG GET shows them.
func (f NotifyClass) String() string {
	var b []byte
	if f&NotifyAll == NotifyAll {
		b = append(b, 'A')
	} else {
		for _, l := range notifyLetters {
			if f&l.class != 0 {
				b = append(b, l.c)
			}
		}
	}
	if f&NotifyKeyspace != 0 {
		b = append(b, 'K')
	}
	if f&NotifyKeyevent != 0 {
		b = append(b, 'E')
	}
	if f&NotifyKeyMiss != 0 {
		b = append(b, 'm')
	}
	return string(b)
}

// Notifier delivers keyspace events; the server's pub/sub hub implements it.
// It is called under the engine lock and must not block.
type Notifier interface {
	KeyspaceEvent(flags NotifyClass, event string, db int, key []byte)
}

// SetNotifyClasses changes the enabled classes (CONFIG SET
// notify-keyspace-events).
func (e *Engine) SetNotifyClasses(f NotifyClass) { e.notifyFlags.Store(uint32(f)) }

// NotifyClasses reports the enabled classes.
func (e *Engine) NotifyClasses() NotifyClass { return NotifyClass(e.notifyFlags.Load()) }

// notify publishes a keyspace event if its class is enabled.
func (e *Engine) notify(class NotifyClass, event string, db int, key []byte) {
	f := NotifyClass(e.notifyFlags.Load())
	if f&class == 0 || e.notifier == nil {
		return
	}
	e.notifier.KeyspaceEvent(f, event, db, key)
}
