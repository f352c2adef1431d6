// watch study (seed 004): the Go watch client. It opens C connections (the seed's 25
// client pods) and starts W watches on each at the same moment (the seed's 20 calls per
// pod), reads each folder to its end and checks the count of pairs. Per watch it records
// when it started, its first message and its end; client.json gets the summary and them all.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "perflab/servers/go/gen/streambenchpb"
)

// Options are the client's flags; the runner passes every matrix option as --key value.
type Options struct {
	Target        string
	Out           string
	Method        string // mono: Watch; separated: WatchSeparated
	Folder        string
	Pairs         int // pairs the folder holds: what each watch must receive
	Clients       int
	Watches       int // concurrent watches per client
	WarmupWatches int
	TimeoutS      float64
}

func parseOptions(args []string) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("watch_client", flag.ContinueOnError)
	fs.StringVar(&o.Target, "target", "", "host:port of the watch server")
	fs.StringVar(&o.Out, "out", "", "where to write client.json")
	fs.StringVar(&o.Method, "method", "mono", "mono (Watch) or separated (WatchSeparated)")
	fs.StringVar(&o.Folder, "folder", "small", "folder to watch")
	fs.IntVar(&o.Pairs, "pairs", 0, "pairs each watch must receive")
	fs.IntVar(&o.Clients, "clients", 1, "connections (the seed's client pods)")
	fs.IntVar(&o.Watches, "watches", 1, "concurrent watches per connection")
	fs.IntVar(&o.WarmupWatches, "warmup_watches", 1, "watches made one by one first, not recorded")
	fs.Float64Var(&o.TimeoutS, "timeout_s", 600, "deadline of every watch, seconds")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case o.Target == "" || o.Out == "":
		return o, fmt.Errorf("--target and --out are required")
	case o.Method != "mono" && o.Method != "separated":
		return o, fmt.Errorf("--method: %q is not mono or separated", o.Method)
	case o.Pairs <= 0 || o.Clients <= 0 || o.Watches <= 0 || o.WarmupWatches < 0 || o.TimeoutS <= 0:
		return o, fmt.Errorf("--pairs, --clients, --watches and --timeout_s must be positive, --warmup_watches >= 0")
	}
	return o, nil
}

// Watch is what one watch saw. Times are milliseconds since the burst started.
type Watch struct {
	Client  int     `json:"client"`
	Index   int     `json:"watch"`
	StartMs float64 `json:"start_ms"`
	FirstMs float64 `json:"first_ms"` // -1: no message came
	DoneMs  float64 `json:"done_ms"`
	Pairs   int     `json:"pairs"`
	Bytes   int     `json:"bytes"`
	Error   string  `json:"error,omitempty"`
}

// receiver reads one message of either method: the pairs it holds and its size.
type receiver func() (pairs []*pb.KV, part, parts uint32, size int, err error)

func open(ctx context.Context, client pb.StreamBenchClient, o Options) (receiver, error) {
	req := &pb.WatchRequest{Folder: o.Folder}
	if o.Method == "mono" {
		stream, err := client.Watch(ctx, req)
		if err != nil {
			return nil, err
		}
		return func() ([]*pb.KV, uint32, uint32, int, error) {
			msg, err := stream.Recv()
			if err != nil {
				return nil, 0, 0, 0, err
			}
			return msg.GetKv(), 0, 0, protoSize(msg), nil
		}, nil
	}
	stream, err := client.WatchSeparated(ctx, req)
	if err != nil {
		return nil, err
	}
	return func() ([]*pb.KV, uint32, uint32, int, error) {
		msg, err := stream.Recv()
		if err != nil {
			return nil, 0, 0, 0, err
		}
		var kv []*pb.KV
		if msg.GetKv() != nil {
			kv = []*pb.KV{msg.GetKv()}
		}
		return kv, msg.GetPart(), msg.GetParts(), protoSize(msg), nil
	}, nil
}

// watchOnce reads one folder to its end and checks it: the right count of pairs, each
// with a key, and for separated messages parts numbered 1..N of N in order.
func watchOnce(client pb.StreamBenchClient, o Options, t0 time.Time, w *Watch) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(o.TimeoutS*float64(time.Second)))
	defer cancel()
	w.StartMs, w.FirstMs = since(t0), -1
	defer func() { w.DoneMs = since(t0) }()
	recv, err := open(ctx, client, o)
	if err != nil {
		w.Error = err.Error()
		return
	}
	check := partChecker{}
	for {
		kv, part, parts, size, err := recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			w.Error = err.Error()
			return
		}
		if w.FirstMs < 0 {
			w.FirstMs = since(t0)
		}
		w.Pairs += len(kv)
		w.Bytes += size
		for _, pair := range kv {
			if pair.GetKey() == "" {
				w.Error = "a pair without a key"
				return
			}
		}
		if o.Method == "separated" {
			if err := check.next(part, parts, len(kv)); err != nil {
				w.Error = err.Error()
				return
			}
		}
	}
	if w.Pairs != o.Pairs {
		w.Error = fmt.Sprintf("received %d pairs, the folder holds %d", w.Pairs, o.Pairs)
	}
}

// partChecker checks that separated messages come as parts 1..N of N, one pair each.
type partChecker struct{ last, parts uint32 }

func (c *partChecker) next(part, parts uint32, pairs int) error {
	if pairs != 1 {
		return fmt.Errorf("part %d holds %d pairs, not 1", part, pairs)
	}
	if c.parts == 0 {
		c.parts = parts
	}
	if parts != c.parts || part != c.last+1 || part > parts {
		return fmt.Errorf("part %d of %d after part %d of %d", part, parts, c.last, c.parts)
	}
	c.last = part
	return nil
}

func since(t0 time.Time) float64 {
	return float64(time.Since(t0).Microseconds()) / 1000
}

// run makes the warm-up watches, then the burst of clients x watches; it returns every
// watch of the burst.
func run(o Options) ([]Watch, float64, error) {
	stubs := make([]pb.StreamBenchClient, o.Clients)
	for i := range stubs {
		conn, err := grpc.NewClient(o.Target,
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			// A mono message of a large folder is ~50 MB: far above the 4 MiB default.
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32)))
		if err != nil {
			return nil, 0, err
		}
		defer conn.Close()
		conn.Connect()
		stubs[i] = pb.NewStreamBenchClient(conn)
	}
	for i := 0; i < o.WarmupWatches; i++ {
		var w Watch
		watchOnce(stubs[i%o.Clients], o, time.Now(), &w)
		if w.Error != "" {
			return nil, 0, fmt.Errorf("warm-up watch failed: %s", w.Error)
		}
	}
	watches := make([]Watch, o.Clients*o.Watches)
	start := make(chan struct{})
	var wg sync.WaitGroup
	t0 := time.Now()
	for c := 0; c < o.Clients; c++ {
		for i := 0; i < o.Watches; i++ {
			w := &watches[c*o.Watches+i]
			w.Client, w.Index = c, i
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				watchOnce(stubs[w.Client], o, t0, w)
			}()
		}
	}
	t0 = time.Now()
	close(start)
	wg.Wait()
	return watches, time.Since(t0).Seconds(), nil
}

func main() {
	o, err := parseOptions(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	watches, servedS, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	report := makeReport(o, watches, servedS)
	data, err := json.MarshalIndent(report, "", " ")
	if err == nil {
		err = os.WriteFile(o.Out, data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if report.Failed > 0 {
		fmt.Fprintf(os.Stderr, "%d of %d watches failed; first: %s\n", report.Failed, len(watches), report.FirstError)
		os.Exit(1)
	}
}
