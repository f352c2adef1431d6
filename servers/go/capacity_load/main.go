// capacity study: an open-loop load generator for the hello service that times every call
// from its INTENDED send time (wrk2's correction for coordinated omission).
//
// One process warms up on its connections, then runs steps: each step offers one rate
// (constant or Poisson arrivals) for a settle period (discarded) and a measured period.
// A call's latency is end - intended send, so a server stall and a generator stall both
// show in the calls scheduled during them; the latency from the actual send is kept beside
// it only to show what a tool timing from its own send would report. Per 100 ms window it
// records calls scheduled, sent, completed, failed, p99 and the generator's own lag.
//
// Mode "rates" runs the listed rates; mode "search" looks for the knee: coarse steps up by
// a factor, then bisection until the bracket [held, not held) is within --bracket, every
// rate run --repeats times and judged on the majority. A step where the generator used
// more than --cpu_limit of its CPUs, or fell behind (lag in a measured window above
// --lag_limit_ms) by enough to explain the step's failure (see judge), is generator-bound
// and measures nothing of the server; a rate most of whose steps were is generator-bound:
// the search stops there, the knee is a lower bound.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "perflab/servers/go/gen/hellopb"
)

const window = 100 * time.Millisecond

type config struct {
	Target         string    `json:"target"`
	Mode           string    `json:"mode"`
	Rates          []float64 `json:"rates,omitempty"`
	Arrival        string    `json:"arrival"`
	Connections    int       `json:"connections"`
	WarmupS        float64   `json:"warmup_s"`
	SettleS        float64   `json:"settle_s"`
	StepS          float64   `json:"step_s"`
	MinCalls       int       `json:"min_calls"`
	RestS          float64   `json:"rest_s"`
	Repeats        int       `json:"repeats"`
	SearchStart    float64   `json:"search_start_rps"`
	SearchFactor   float64   `json:"search_factor"`
	SearchMax      float64   `json:"search_max_rps"`
	SearchMin      float64   `json:"search_min_rps"`
	Bracket        float64   `json:"bracket"`
	MaxRates       int       `json:"max_rates"`
	SLOms          float64   `json:"slo_ms"`
	AchievedWithin float64   `json:"achieved_within"`
	LagLimitMs     float64   `json:"lag_limit_ms"`
	CPULimit       float64   `json:"cpu_limit"`
	MaxInflight    int       `json:"max_inflight"`
	TimeoutS       float64   `json:"timeout_s"`
	Seed           int64     `json:"seed"`
	CPUs           int       `json:"cpus"`
	CallsCSV       string    `json:"calls_csv,omitempty"`
}

// call: one call's times in ns since the step's start; end < 0 until it returns.
type call struct {
	intended, dispatched, start, end int64
	failed                           bool
	code                             string
}

type percentiles struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	N    int64   `json:"n"`
}

type windowStats struct {
	T         float64 `json:"t"` // seconds since the step's start
	Settle    bool    `json:"settle"`
	Scheduled int     `json:"scheduled"`
	Sent      int     `json:"sent"`
	OK        int     `json:"ok"`
	Failed    int     `json:"failed"`
	P99ms     float64 `json:"p99_ms"` // of calls completed in the window, from intended send
	LagMs     float64 `json:"lag_ms"` // largest generator lag of calls sent in the window
}

type step struct {
	Rate             float64        `json:"offered_rps"`
	Repeat           int            `json:"repeat"`
	StartUnix        float64        `json:"start_unix"`
	MeasureStartUnix float64        `json:"measure_start_unix"`
	MeasureEndUnix   float64        `json:"measure_end_unix"`
	MeasureS         float64        `json:"measure_s"`
	Scheduled        int            `json:"scheduled"`
	Sent             int            `json:"sent"`
	OK               int            `json:"ok"`
	Failed           int            `json:"failed"`
	SentRps          float64        `json:"sent_rps"`
	AchievedRps      float64        `json:"achieved_rps"`
	Latency          percentiles    `json:"latency_ms"`
	LatencyFromSend  percentiles    `json:"latency_from_send_ms"`
	MaxLagMs         float64        `json:"max_lag_ms"`
	GeneratorCPU     float64        `json:"generator_cpu_fraction"`
	GeneratorBound   bool           `json:"generator_bound"`
	GeneratorWhy     string         `json:"generator_why"`
	Held             bool           `json:"held"`
	Why              string         `json:"why"`
	Errors           map[string]int `json:"errors"`
	Windows          []windowStats  `json:"windows"`
}

type rateVerdict struct {
	Rate           float64 `json:"offered_rps"`
	Held           bool    `json:"held"`
	GeneratorBound bool    `json:"generator_bound"`
	HeldRepeats    int     `json:"held_repeats"`
	Repeats        int     `json:"repeats"`
}

type knee struct {
	LowRps  float64 `json:"low_rps"`  // highest rate held (0: none)
	HighRps float64 `json:"high_rps"` // lowest rate not held (0: none found)
	Limit   string  `json:"limit"`    // server | generator | search_max | unplaced
	Why     string  `json:"why"`
}

type metric struct {
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
}

type report struct {
	Metrics []metric      `json:"metrics"`
	Config  config        `json:"config"`
	Knee    *knee         `json:"knee,omitempty"`
	Rates   []rateVerdict `json:"rates"`
	Steps   []step        `json:"steps"`
}

type generator struct {
	cfg     config
	clients []pb.GreeterClient
	rng     *rand.Rand
	calls   *os.File // --calls_csv, nil without it
}

// record appends a step's calls to --calls_csv: ms since the step's start.
func (g *generator) record(calls []call, rate float64, repeat int) {
	if g.calls == nil {
		return
	}
	ms := func(ns int64) string { return strconv.FormatFloat(float64(ns)/1e6, 'f', 3, 64) }
	for _, c := range calls {
		fmt.Fprintf(g.calls, "%g,%d,%s,%s,%s,%t\n", rate, repeat, ms(c.intended), ms(c.start), ms(c.end), c.failed)
	}
}

// schedule: the intended send times (ns from the step's start) of one step.
func (g *generator) schedule(rate float64, total time.Duration) []int64 {
	var out []int64
	gap := float64(time.Second) / rate
	for t := 0.0; t < float64(total); {
		out = append(out, int64(t))
		if g.cfg.Arrival == "poisson" {
			t += g.rng.ExpFloat64() * gap
		} else {
			t += gap
		}
	}
	return out
}

func cpuSeconds() float64 {
	var usage syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &usage) != nil {
		return math.NaN()
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano()).Seconds()
}

// run sends one step's schedule and waits for every call (each has a deadline).
func (g *generator) run(plan []int64) ([]call, time.Time) {
	calls := make([]call, len(plan))
	slots := make(chan struct{}, g.cfg.MaxInflight)
	timeout := time.Duration(g.cfg.TimeoutS * float64(time.Second))
	var wg sync.WaitGroup
	begin := time.Now()
	var blockedUntil int64 // the last time a wait for a free slot (the server's backlog) ended
	for i, at := range plan {
		if d := time.Duration(at) - time.Since(begin); d > 0 {
			time.Sleep(d)
		}
		select {
		case slots <- struct{}{}:
		default:
			slots <- struct{}{}
			blockedUntil = int64(time.Since(begin))
		}
		calls[i] = call{intended: at, dispatched: max(at, blockedUntil), end: -1}
		wg.Add(1)
		go func(c *call, client pb.GreeterClient) {
			defer wg.Done()
			defer func() { <-slots }()
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			c.start = int64(time.Since(begin))
			_, err := client.SayHello(ctx, &pb.HelloRequest{Name: "perflab"})
			c.end = int64(time.Since(begin))
			if err != nil {
				c.failed, c.code = true, status.Code(err).String()
			}
		}(&calls[i], g.clients[i%len(g.clients)])
	}
	wg.Wait()
	return calls, begin
}

func newHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, int64(10*time.Minute/time.Microsecond), 3) // µs, 3 digits
}

func summary(h *hdrhistogram.Histogram) percentiles {
	ms := func(q float64) float64 { return float64(h.ValueAtQuantile(q)) / 1000 }
	return percentiles{ms(50), ms(90), ms(99), ms(99.9), float64(h.Max()) / 1000, h.TotalCount()}
}

func (g *generator) step(rate float64, repeat int) step {
	measure := time.Duration(math.Max(g.cfg.StepS, float64(g.cfg.MinCalls)/rate) * float64(time.Second))
	settle := time.Duration(g.cfg.SettleS * float64(time.Second))
	cpu0 := cpuSeconds()
	calls, begin := g.run(g.schedule(rate, settle+measure))
	wall := time.Since(begin).Seconds()
	g.record(calls, rate, repeat)
	s := step{Rate: rate, Repeat: repeat, Errors: map[string]int{}}
	s.GeneratorCPU = (cpuSeconds() - cpu0) / wall / float64(g.cfg.CPUs)
	unix := func(ns int64) float64 { return float64(begin.UnixNano()+ns) / 1e9 }
	from, to := int64(settle), int64(settle+measure)
	s.StartUnix, s.MeasureStartUnix, s.MeasureEndUnix = unix(0), unix(from), unix(to)
	s.MeasureS = measure.Seconds()
	s.Windows = g.windows(calls, settle, settle+measure)
	fromIntended, fromSend := newHist(), newHist()
	for _, c := range calls {
		if c.start >= from && c.start < to {
			s.Sent++
		}
		if !c.failed && c.end >= from && c.end < to {
			s.OK++ // "achieved": completions inside the send window
		}
		if c.intended < from || c.intended >= to {
			continue
		}
		s.Scheduled++
		if c.failed {
			s.Failed++
			s.Errors[c.code]++
			continue
		}
		_ = fromIntended.RecordValue((c.end - c.intended) / 1000)
		_ = fromSend.RecordValue((c.end - c.start) / 1000)
	}
	s.SentRps, s.AchievedRps = float64(s.Sent)/s.MeasureS, float64(s.OK)/s.MeasureS
	s.Latency, s.LatencyFromSend = summary(fromIntended), summary(fromSend)
	for _, w := range s.Windows {
		if !w.Settle {
			s.MaxLagMs = math.Max(s.MaxLagMs, w.LagMs)
		}
	}
	g.judge(&s)
	return s
}

// windows: per 100 ms of the step; a call counts in the window of its send, completion or
// intended send as the field says.
func (g *generator) windows(calls []call, settle, total time.Duration) []windowStats {
	n := int((total + window - 1) / window)
	out := make([]windowStats, n)
	hists := make([]*hdrhistogram.Histogram, n)
	for i := range out {
		out[i].T = (time.Duration(i) * window).Seconds()
		out[i].Settle = time.Duration(i)*window < settle
		hists[i] = newHist()
	}
	at := func(ns int64) int { return min(int(ns/int64(window)), n-1) }
	for _, c := range calls {
		out[at(c.intended)].Scheduled++
		w := &out[at(c.start)]
		w.Sent++
		w.LagMs = math.Max(w.LagMs, float64(c.start-c.dispatched)/1e6)
		done := at(c.end)
		if c.failed {
			out[done].Failed++
		} else {
			out[done].OK++
			_ = hists[done].RecordValue((c.end - c.intended) / 1000)
		}
	}
	for i := range out {
		if hists[i].TotalCount() > 0 {
			out[i].P99ms = float64(hists[i].ValueAtQuantile(99)) / 1000
		}
	}
	return out
}

// judge: who was the limit of this step, and did the server hold it.
//
// A late send is not discarded by itself: every call is timed from its intended send, so a
// lag of L ms is already in the latency of the calls it delayed, and it can only make a step
// look worse. The calls it held back reach the server together, and a server that keeps up
// drains that burst within another L, so the generator adds at most 2L to any call and
// takes at most 2L of completions out of the window. A step whose generator lagged more
// than --lag_limit_ms is therefore generator-bound only when forgiving it 2L would change
// its verdict: a step that held with the lag counted held, and one that fails even with it
// forgiven failed for the server. That holds only while the generator still sent its
// schedule: one that lagged and sent less than it (waiting for the server's backlog is
// not lag) did not offer the load, and is bound whatever the verdict, as is one short of CPU.
func (g *generator) judge(s *step) {
	c := g.cfg
	why := g.serverWhy(s, 0)
	forgive := 2 * s.MaxLagMs
	switch {
	case s.GeneratorCPU > c.CPULimit:
		s.GeneratorBound = true
		s.GeneratorWhy = fmt.Sprintf("the generator used %.0f%% of its %d CPU(s) (limit %.0f%%)", 100*s.GeneratorCPU, c.CPUs, 100*c.CPULimit)
	case s.MaxLagMs > c.LagLimitMs && s.SentRps < (1-c.AchievedWithin)*s.Rate:
		s.GeneratorBound = true
		s.GeneratorWhy = fmt.Sprintf("the generator sent %.1f ms late in a 100 ms window (limit %g ms) and only %.0f of %.0f req/s", s.MaxLagMs, c.LagLimitMs, s.SentRps, s.Rate)
	case s.MaxLagMs > c.LagLimitMs && why != "" && g.serverWhy(s, forgive) == "":
		s.GeneratorBound = true
		s.GeneratorWhy = fmt.Sprintf("the generator sent %.1f ms late in a 100 ms window (limit %g ms), enough to explain %s", s.MaxLagMs, c.LagLimitMs, why)
	}
	switch {
	case s.GeneratorBound:
		s.Why = "generator-bound: " + s.GeneratorWhy
	case why != "":
		s.Why = why
		if s.MaxLagMs > c.LagLimitMs {
			s.Why += fmt.Sprintf(" (also with the generator's %.1f ms lag forgiven twice over)", s.MaxLagMs)
		}
	default:
		s.Held = true
		if s.MaxLagMs > c.LagLimitMs {
			s.Why = fmt.Sprintf("held with the generator's %.1f ms lag counted in its latency", s.MaxLagMs)
		}
	}
}

// serverWhy: why the step fails the server's criteria, "" when it holds them, with
// `forgiveMs` taken off every call's latency and its completions (see judge).
func (g *generator) serverWhy(s *step, forgiveMs float64) string {
	c := g.cfg
	achieved := s.AchievedRps + s.Rate*forgiveMs/1000/s.MeasureS
	switch {
	case s.Failed > 0:
		return fmt.Sprintf("%d of %d calls failed", s.Failed, s.Scheduled)
	case achieved < (1-c.AchievedWithin)*s.Rate:
		return fmt.Sprintf("achieved %.0f of %.0f req/s offered", s.AchievedRps, s.Rate)
	case s.Latency.P99-forgiveMs > c.SLOms:
		return fmt.Sprintf("p99 %.2f ms above the SLO %g ms", s.Latency.P99, c.SLOms)
	}
	return ""
}

// rate runs one rate's repeats. A step the generator could not keep measures nothing of the
// server: the rate is generator-bound when most of its steps were, and otherwise held when
// most of the others held.
func (g *generator) rate(r float64, rep *report) rateVerdict {
	v := rateVerdict{Rate: r, Repeats: g.cfg.Repeats}
	bound := 0
	for i := 1; i <= g.cfg.Repeats; i++ {
		s := g.step(r, i)
		rep.Steps = append(rep.Steps, s)
		if s.GeneratorBound {
			bound++
		}
		if s.Held {
			v.HeldRepeats++
		}
		time.Sleep(time.Duration(g.cfg.RestS * float64(time.Second)))
	}
	v.GeneratorBound = 2*bound >= v.Repeats
	v.Held = !v.GeneratorBound && 2*v.HeldRepeats > v.Repeats-bound
	rep.Rates = append(rep.Rates, v)
	return v
}

func (g *generator) search(rep *report) *knee {
	c := g.cfg
	k := &knee{}
	r := c.SearchStart
	// Coarse: up by the factor while the server holds; down from the start if it does not.
	for len(rep.Rates) < c.MaxRates {
		v := g.rate(r, rep)
		if v.GeneratorBound {
			k.Limit, k.Why = "generator", fmt.Sprintf("the generator could not keep %.0f req/s", r)
			return k
		}
		if v.Held {
			k.LowRps = r
			if k.HighRps > 0 || r*c.SearchFactor > c.SearchMax {
				break
			}
			r *= c.SearchFactor
		} else {
			k.HighRps = r
			if k.LowRps > 0 || r/c.SearchFactor < c.SearchMin {
				break
			}
			r /= c.SearchFactor
		}
	}
	if k.LowRps == 0 || k.HighRps == 0 {
		k.Limit = map[bool]string{true: "unplaced", false: "search_max"}[k.LowRps == 0]
		k.Why = "no rate held down to the lowest tried"
		if k.LowRps > 0 {
			k.Why = fmt.Sprintf("every rate held up to the search's highest, %.0f req/s", k.LowRps)
		}
		return k
	}
	for k.HighRps > (1+c.Bracket)*k.LowRps && len(rep.Rates) < c.MaxRates {
		mid := math.Round((k.LowRps + k.HighRps) / 2)
		v := g.rate(mid, rep)
		if v.GeneratorBound {
			k.Limit, k.Why = "generator", fmt.Sprintf("the generator could not keep %.0f req/s inside the bracket", mid)
			return k
		}
		if v.Held {
			k.LowRps = mid
		} else {
			k.HighRps = mid
		}
	}
	k.Limit = "server"
	k.Why = fmt.Sprintf("held %.0f req/s, not %.0f req/s", k.LowRps, k.HighRps)
	if k.HighRps > (1+c.Bracket)*k.LowRps {
		k.Why += fmt.Sprintf(" (the search stopped at %d rates, before the bracket was within %.0f%%)", c.MaxRates, 100*c.Bracket)
	}
	return k
}

func parseRates(text string) ([]float64, error) {
	var out []float64
	for _, part := range strings.Split(text, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		r, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || r <= 0 {
			return nil, fmt.Errorf("--rates: %q is not a positive rate", part)
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, errors.New("--rates: no rate given")
	}
	return out, nil
}

func flags() (config, string, error) {
	var c config
	var rates, out string
	flag.StringVar(&c.Target, "target", "", "host:port of the hello server")
	flag.StringVar(&out, "out", "", "where to write the JSON report")
	flag.StringVar(&c.Mode, "mode", "search", "search | rates")
	flag.StringVar(&rates, "rates", "", "mode rates: offered req/s, comma-separated")
	flag.StringVar(&c.Arrival, "arrival", "constant", "constant | poisson")
	flag.IntVar(&c.Connections, "connections", 4, "HTTP/2 connections, calls spread round-robin")
	flag.Float64Var(&c.WarmupS, "warmup_s", 1, "discarded seconds at the first rate before any step")
	flag.Float64Var(&c.SettleS, "settle_s", 0.3, "discarded seconds at the start of every step")
	flag.Float64Var(&c.StepS, "step_s", 1, "measured seconds per step, at least ...")
	flag.IntVar(&c.MinCalls, "min_calls", 1000, "... stretched to this many calls")
	flag.Float64Var(&c.RestS, "rest_s", 0.2, "idle seconds after every step")
	flag.IntVar(&c.Repeats, "repeats", 3, "steps per rate")
	flag.Float64Var(&c.SearchStart, "search_start_rps", 500, "search: the first rate")
	flag.Float64Var(&c.SearchFactor, "search_factor", 2, "search: coarse steps multiply by this")
	flag.Float64Var(&c.SearchMax, "search_max_rps", 64000, "search: the highest rate tried")
	flag.Float64Var(&c.SearchMin, "search_min_rps", 250, "search: the lowest rate tried (below the first)")
	flag.Float64Var(&c.Bracket, "bracket", 0.1, "search: bisect until high <= (1 + this) x low")
	flag.IntVar(&c.MaxRates, "max_rates", 14, "search: rates tried at most")
	flag.Float64Var(&c.SLOms, "slo_ms", 10, "a step holds with p99 (from intended send) at most this")
	flag.Float64Var(&c.AchievedWithin, "achieved_within", 0.02, "... and achieved at least (1 - this) x offered")
	flag.Float64Var(&c.LagLimitMs, "lag_limit_ms", 5, "generator-bound: a window's send lag above this, when it explains the step's failure")
	flag.Float64Var(&c.CPULimit, "cpu_limit", 0.9, "generator-bound: CPU above this share of its CPUs")
	flag.IntVar(&c.MaxInflight, "max_inflight", 20000, "calls in flight at most (then sends wait: the server's backlog)")
	flag.Float64Var(&c.TimeoutS, "timeout_s", 2, "deadline of every call")
	flag.Int64Var(&c.Seed, "seed", 1, "Poisson arrivals' seed")
	flag.StringVar(&c.CallsCSV, "calls_csv", "", "also write every call of every step here (tests)")
	flag.Parse()
	c.CPUs = runtime.NumCPU() // the CPUs this process may run on (its affinity)
	var err error
	switch {
	case c.Target == "" || out == "":
		err = errors.New("usage: capacity_load_go --target host:port --out file [options]")
	case c.Mode != "search" && c.Mode != "rates":
		err = fmt.Errorf("--mode: %q is neither search nor rates", c.Mode)
	case c.Arrival != "constant" && c.Arrival != "poisson":
		err = fmt.Errorf("--arrival: %q is neither constant nor poisson", c.Arrival)
	case c.Connections < 1 || c.Repeats < 1 || c.MaxInflight < 1 || c.MaxRates < 1:
		err = errors.New("--connections, --repeats, --max_inflight and --max_rates must be at least 1")
	case c.SearchFactor <= 1 || c.Bracket <= 0:
		err = errors.New("--search_factor must exceed 1 and --bracket 0")
	case c.Mode == "rates":
		c.Rates, err = parseRates(rates)
	}
	return c, out, err
}

func connect(c config) ([]pb.GreeterClient, func(), error) {
	var conns []*grpc.ClientConn
	closeAll := func() {
		for _, conn := range conns {
			_ = conn.Close()
		}
	}
	var clients []pb.GreeterClient
	for i := 0; i < c.Connections; i++ {
		// Each NewClient is its own HTTP/2 connection: calls spread over them round-robin.
		conn, err := grpc.NewClient(c.Target, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		conns = append(conns, conn)
		clients = append(clients, pb.NewGreeterClient(conn))
	}
	// Connect every connection now: no step pays for a handshake.
	for _, client := range clients {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := client.SayHello(ctx, &pb.HelloRequest{Name: "perflab"}, grpc.WaitForReady(true))
		cancel()
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("first call: %w", err)
		}
	}
	return clients, closeAll, nil
}

func metrics(rep *report) []metric {
	out := []metric{{"steps", float64(len(rep.Steps)), "count"}}
	bound := 0
	for _, s := range rep.Steps {
		if s.GeneratorBound {
			bound++
		}
	}
	out = append(out, metric{"generator_bound_steps", float64(bound), "count"})
	if rep.Knee != nil {
		out = append(out, metric{"knee_low_rps", rep.Knee.LowRps, "req/s"}, metric{"knee_high_rps", rep.Knee.HighRps, "req/s"})
	}
	return out
}

func main() {
	c, out, err := flags()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	clients, closeAll, err := connect(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "connect:", err)
		os.Exit(1)
	}
	defer closeAll()
	g := &generator{cfg: c, clients: clients, rng: rand.New(rand.NewSource(c.Seed))}
	if c.CallsCSV != "" {
		if g.calls, err = os.Create(c.CallsCSV); err != nil {
			fmt.Fprintln(os.Stderr, "--calls_csv:", err)
			os.Exit(1)
		}
		defer g.calls.Close()
		fmt.Fprintln(g.calls, "offered_rps,repeat,intended_ms,start_ms,end_ms,failed")
	}
	first := c.SearchStart
	if c.Mode == "rates" {
		first = c.Rates[0]
	}
	if c.WarmupS > 0 {
		g.run(g.schedule(first, time.Duration(c.WarmupS*float64(time.Second)))) // discarded
	}
	rep := &report{Config: c}
	if c.Mode == "search" {
		rep.Knee = g.search(rep)
	} else {
		for _, r := range c.Rates {
			g.rate(r, rep)
		}
	}
	sort.SliceStable(rep.Rates, func(i, j int) bool { return rep.Rates[i].Rate < rep.Rates[j].Rate })
	rep.Metrics = metrics(rep)
	text, err := json.MarshalIndent(rep, "", " ")
	if err == nil {
		err = os.WriteFile(out, text, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "write report:", err)
		os.Exit(1)
	}
}
