package tests

import (
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Seed 001: a customer-service session closes after 10 idle minutes (here
// 300 ms). Every message on a session pushes its timer back with
// DELAY.TOUCH (DELAY.ADD on the first one); consumers pop the sessions that
// went idle, close them and acknowledge. The ACK is the commit point: a
// message that slips in between the pop and the ACK ends the lease, the ACK
// then answers 0 and the session stays open, to be closed when it next goes
// idle. So a session is closed exactly once, and only after 300 ms with no
// message.

const (
	s001Sessions  = 80
	s001Idle      = 300 // ms
	s001Consumers = 3
	s001Key       = "sessions"
)

type s001Session struct {
	mu         sync.Mutex
	id         string
	sent       []int64 // unix ms at which each accepted message was sent
	closed     bool
	closedAt   int64 // unix ms, after the ACK that closed it
	deliveries int   // pops that handed it to a consumer
	reopened   int   // deliveries whose ACK found it touched after it fired
	refused    int   // messages that found it already closed
}

// message is one customer message: it resets the idle timer of an open
// session. It reports false once the session is closed.
func (s *s001Session) message(c *redis.Client) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.refused++
		return false, nil
	}
	at := time.Now().UnixMilli()
	var n int64
	var err error
	if len(s.sent) == 0 {
		n, err = c.Do(ctx, "DELAY.ADD", s001Key, s.id, "IN", s001Idle, "NX").Int64()
	} else {
		n, err = c.Do(ctx, "DELAY.TOUCH", s001Key, s.id, s001Idle).Int64()
	}
	if err != nil {
		return false, err
	}
	if n != 1 {
		// Only the ACK that closes a session removes its timer, and it
		// does so under s.mu: an open session always has one.
		return false, fmt.Errorf("session %s is open but its timer is gone (message #%d answered %d)",
			s.id, len(s.sent)+1, n)
	}
	s.sent = append(s.sent, at)
	return true, nil
}

func TestSeed001SessionTimeout(t *testing.T) {
	srv := startServer(t)
	admin := goRedis(t, srv.Addr(), 2)
	sessions := map[string]*s001Session{}
	order := make([]*s001Session, s001Sessions)
	for i := range order {
		order[i] = &s001Session{id: fmt.Sprintf("sess-%03d", i)}
		sessions[order[i].id] = order[i]
	}
	var closed atomic.Int64
	errs := make(chan error, s001Sessions+s001Consumers+8)

	// Consumers, each on one connection so CLIENT UNBLOCK can end its wait.
	var stop atomic.Bool
	var consumers sync.WaitGroup
	ids := make([]int64, s001Consumers)
	for w := 0; w < s001Consumers; w++ {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2 + w%2, DisableIdentity: w%2 == 0,
			PoolSize: 1, ReadTimeout: 15 * time.Second})
		t.Cleanup(func() { c.Close() })
		id, err := c.ClientID(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids[w] = id
		consumers.Add(1)
		go func() {
			defer consumers.Done()
			for !stop.Load() {
				fired, err := delayPop(c, s001Key, "COUNT", 10, "BLOCK", 1000, "LEASE", 5000)
				if err == redis.Nil {
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				for _, f := range fired {
					s := sessions[f.member]
					if s == nil {
						errs <- fmt.Errorf("popped unknown session %s", f)
						return
					}
					if err := s001Close(c, s, &closed); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}

	// Customers: a third send one message and go quiet; the others chat
	// for a while with gaps well under the idle timeout, then go quiet.
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	var chatters sync.WaitGroup
	for i, s := range order {
		startIn := time.Duration(rng.Intn(100)) * time.Millisecond
		chatFor := time.Duration(0)
		if i%3 != 0 {
			chatFor = time.Duration(100+rng.Intn(600)) * time.Millisecond
		}
		gap := time.Duration(20+rng.Intn(60)) * time.Millisecond
		c := goRedis(t, srv.Addr(), 2+i%2)
		chatters.Add(1)
		go func() {
			defer chatters.Done()
			time.Sleep(startIn)
			end := time.Now().Add(chatFor)
			for {
				open, err := s.message(c)
				if err != nil {
					errs <- err
					return
				}
				if !open || time.Now().After(end) {
					return
				}
				time.Sleep(gap)
			}
		}()
	}
	chatters.Wait()
	waitFor(t, 10*time.Second, "every idle session to close", func() bool { return closed.Load() == s001Sessions })
	stop.Store(true)
	var stopped atomic.Bool
	go func() { consumers.Wait(); stopped.Store(true) }()
	waitFor(t, 10*time.Second, "the consumers to stop", func() bool {
		for _, id := range ids {
			admin.ClientUnblock(ctx, id)
		}
		return stopped.Load()
	})
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	longChats, reopened, refused, maxLate := 0, 0, 0, int64(0)
	for _, s := range order {
		if !s.closed || len(s.sent) == 0 {
			t.Errorf("session %s: closed %v after %d messages", s.id, s.closed, len(s.sent))
			continue
		}
		last := s.sent[len(s.sent)-1]
		if idle := s.closedAt - last; idle < s001Idle {
			t.Errorf("session %s closed %d ms after its last message, want >= %d", s.id, idle, s001Idle)
		} else {
			maxLate = max(maxLate, idle-s001Idle)
		}
		if s.deliveries != 1+s.reopened {
			t.Errorf("session %s delivered %d times, reopened %d times: a delivery to nobody's benefit",
				s.id, s.deliveries, s.reopened)
		}
		if last-s.sent[0] >= s001Idle {
			longChats++
		}
		reopened += s.reopened
		refused += s.refused
	}
	if longChats == 0 {
		t.Error("no session chatted for longer than the idle timeout: TOUCH was not exercised")
	}
	if n := admin.Exists(ctx, s001Key).Val(); n != 0 {
		t.Errorf("%s still exists after every session closed: %v", s001Key, admin.Do(ctx, "DELAY.RANGE", s001Key, "-inf", "+inf").Val())
	}
	t.Logf("%d sessions, %d chatted past the timeout, %d reopened by a late message, %d messages refused, "+
		"closes at most %d ms late", s001Sessions, longChats, reopened, refused, maxLate)
}

// s001Close closes a session a pop delivered, unless a message touched it
// after the timer fired (then the ACK finds no lease and answers 0).
func s001Close(c *redis.Client, s *s001Session, closed *atomic.Int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deliveries++
	if s.closed {
		return fmt.Errorf("session %s delivered again after it was closed", s.id)
	}
	n, err := c.Do(ctx, "DELAY.ACK", s001Key, s.id).Int64()
	if err != nil {
		return err
	}
	if n == 0 {
		s.reopened++
		return nil
	}
	s.closed, s.closedAt = true, time.Now().UnixMilli()
	closed.Add(1)
	return nil
}
