// throughput study (seed 002): grpc-go client reading one server stream to its end.
//
// It warms up with a short stream on the same channel, then times --calls calls one after
// another, each asking for the whole payload, drops every message after counting its bytes
// (and, in test mode, hashing the first call's) and writes client.json: the throughput over
// all of them (their bytes over their seconds) and each call's seconds. A wrong byte count
// in any call fails the cell.
package main

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	pb "perflab/servers/go/gen/datapb"
)

type metric struct {
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
}

type result struct {
	Metrics        []metric  `json:"metrics"`
	Calls          int       `json:"calls"`
	CallSeconds    []float64 `json:"call_seconds"`
	Bytes          int64     `json:"bytes"`
	Messages       int64     `json:"messages"`
	Seconds        float64   `json:"seconds"`
	SHA256         string    `json:"sha256,omitempty"`
	Security       string    `json:"security"`
	WarmupBytes    int64     `json:"warmup_bytes"`
	MaxReceiveSize int       `json:"max_receive_bytes"`
}

// clientCredentials: trust ca.pem; under mTLS also present client.pem.
func clientCredentials(security, dir string) (credentials.TransportCredentials, error) {
	pem, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("CA certificate: no PEM certificate in " + filepath.Join(dir, "ca.pem"))
	}
	config := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if security == "mtls" {
		cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key"))
		if err != nil {
			return nil, fmt.Errorf("client certificate in %s: %w", dir, err)
		}
		config.Certificates = []tls.Certificate{cert}
	}
	return credentials.NewTLS(config), nil
}

// stream reads one call to its end; returns bytes and messages received.
func stream(ctx context.Context, client pb.DataServiceClient, limit uint64, sum hash.Hash) (int64, int64, error) {
	call, err := client.GiveMeData(ctx, &pb.DataRequest{LimitBytes: limit})
	if err != nil {
		return 0, 0, err
	}
	var received, messages int64
	for {
		msg, err := call.Recv()
		if errors.Is(err, io.EOF) {
			return received, messages, nil
		}
		if err != nil {
			return received, messages, err
		}
		received += int64(len(msg.GetData()))
		messages++
		if sum != nil {
			sum.Write(msg.GetData())
		}
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func main() {
	target := flag.String("target", "", "host:port of the server")
	out := flag.String("out", "", "where to write client.json")
	security := flag.String("security", "none", "none | tls | mtls")
	tlsDir := new(string)
	// The command passes {home}/tls; an empty --tls_dir from the matrix keeps it.
	flag.Func("tls_dir", "folder with ca.pem (and client.pem, client.key for mtls)", func(value string) error {
		if value != "" {
			*tlsDir = value
		}
		return nil
	})
	expect := flag.Int64("expect_bytes", 0, "bytes the measured call must deliver")
	warmup := flag.Int64("warmup_bytes", 0, "bytes of a discarded warm-up stream (0: none)")
	maxReceive := flag.Int("max_receive_bytes", 64<<20, "largest message accepted")
	timeout := flag.Float64("timeout_s", 600, "deadline of the whole run")
	checksum := flag.Int("checksum", 0, "1: SHA256 of the first timed call's bytes into client.json")
	calls := flag.Int("calls", 1, "timed calls, one after another, each for the whole payload")
	flag.Parse()
	if *target == "" || *out == "" || *expect <= 0 || *calls < 1 {
		fail("usage: throughput_client_go --target H:P --out F --expect_bytes N [--calls K>=1] [...]")
	}

	var creds credentials.TransportCredentials
	switch *security {
	case "none":
		creds = insecure.NewCredentials()
	case "tls", "mtls":
		var err error
		if creds, err = clientCredentials(*security, *tlsDir); err != nil {
			fail("cannot set up %s: %v", *security, err)
		}
	default:
		fail("unknown --security %s", *security)
	}
	conn, err := grpc.NewClient(*target, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(*maxReceive)))
	if err != nil {
		fail("cannot create a channel to %s: %v", *target, err)
	}
	defer conn.Close()
	client := pb.NewDataServiceClient(conn)
	// One deadline over warm-up and measurement: a bad certificate or a dead server ends
	// the run with an error instead of hanging.
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*timeout*float64(time.Second)))
	defer cancel()

	if *warmup > 0 {
		if _, _, err := stream(ctx, client, uint64(*warmup), nil); err != nil {
			fail("warm-up call failed: %v", err)
		}
	}
	var sum, digest hash.Hash
	if *checksum == 1 {
		digest = sha256.New()
		sum = digest
	}
	var received, messages int64
	var seconds float64
	callSeconds := make([]float64, 0, *calls)
	for call := 1; call <= *calls; call++ {
		start := time.Now()
		got, count, err := stream(ctx, client, 0, sum)
		took := time.Since(start).Seconds()
		if err != nil {
			fail("timed call %d of %d failed after %d bytes: %v", call, *calls, got, err)
		}
		if got != *expect {
			fail("byte count mismatch in timed call %d of %d: received %d bytes, expected %d", call, *calls, got, *expect)
		}
		received += got
		messages += count
		seconds += took
		callSeconds = append(callSeconds, took)
		// Only the first call is hashed: it is the payload; the rest are checked by count.
		sum = nil
	}
	res := result{
		Metrics: []metric{
			{"throughput", float64(received) / (1 << 30) / seconds, "GiB/s"},
			{"stream_seconds", seconds, "s"},
			{"bytes", float64(received), "B"},
			{"messages", float64(messages), "count"},
			{"calls", float64(*calls), "count"},
			// The warm-up stream's bytes: CPU of the whole process covers it too.
			{"warmup_bytes", float64(*warmup), "B"},
		},
		Calls: *calls, CallSeconds: callSeconds,
		Bytes: received, Messages: messages, Seconds: seconds, Security: *security,
		WarmupBytes: *warmup, MaxReceiveSize: *maxReceive,
	}
	if digest != nil {
		res.SHA256 = hex.EncodeToString(digest.Sum(nil))
	}
	raw, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(*out, raw, 0o644); err != nil {
		fail("cannot write %s: %v", *out, err)
	}
}
