package main

import (
	"context"
	"fmt"
)

// durableSuite measures acknowledged writes under appendfsync always: with
// more clients, more writes share one fsync (group commit).
type durableSuite struct{}

func init() { register(durableSuite{}) }

func (durableSuite) Name() string { return "durable" }
func (durableSuite) About() string {
	return "SET and LPUSH with appendfsync always on both servers, 1, 16 and 64 clients, unpipelined"
}
func (durableSuite) Config(*Options) ServerConfig {
	return ServerConfig{Persistence: true, Fsync: "always"}
}

func (durableSuite) Run(ctx context.Context, env *Env) (*Result, error) {
	res := &Result{Views: throughputViews}
	var cases []tpCase
	for _, name := range []string{"SET", "LPUSH"} {
		w := workloadNamed(name)
		for _, clients := range []int{1, 16, 64} {
			cases = append(cases, tpCase{name: fmt.Sprintf("%s c%d", name, clients), work: w,
				clients: clients, pipeline: 1})
		}
	}
	res.Notes = append(res.Notes,
		"Both servers fsync before acknowledging each write: Revolver `--appendfsync always`, Redis "+
			"`--appendonly yes --appendfsync always` (--fsync and --clients do not apply to this suite).",
		"cN = N clients, one command in flight each. SET: `"+workloadNamed("SET").shape+"`; LPUSH: `"+
			workloadNamed("LPUSH").shape+"`.")
	return res, runThroughput(ctx, env, res, cases)
}

func workloadNamed(name string) *workload {
	for _, w := range coreWorkloads {
		if w.name == name {
			return w
		}
	}
	panic("no workload " + name)
}
