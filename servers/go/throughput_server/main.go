// throughput study (seed 002): grpc-go server streaming a payload allocated before it serves.
package main

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	pb "perflab/servers/go/gen/datapb"
)

// The payload is a random block repeated: filling 10 GiB from crypto/rand would take far
// longer than the cell, and nothing on the path (no compression) can tell the difference.
const blockBytes = 1 << 20

type dataServer struct {
	pb.UnimplementedDataServiceServer
	payload []byte
	chunk   int
}

func (s *dataServer) GiveMeData(req *pb.DataRequest, stream grpc.ServerStreamingServer[pb.DataResponse]) error {
	end := len(s.payload)
	if limit := req.GetLimitBytes(); limit > 0 && limit < uint64(end) {
		end = int(limit)
	}
	for off := 0; off < end; off += s.chunk {
		stop := min(off+s.chunk, end)
		if err := stream.Send(&pb.DataResponse{Data: s.payload[off:stop]}); err != nil {
			return err
		}
	}
	return nil
}

// makePayload maps the payload's pages with MAP_POPULATE, so the kernel faults them in at
// once instead of one trap per page as the fill first touches them, as the Python server
// does: the same 4 KiB anonymous pages a make([]byte) of this size gets. At 10 GiB that is a
// few seconds less before READY back to back; on a VM that hands idle memory back to its
// host, the host's own faults after a pause outweigh it (26 s against 7 s on the reference VM).
func makePayload(size int) []byte {
	payload, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_POPULATE)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot map the payload:", err)
		os.Exit(1)
	}
	first := min(size, blockBytes)
	if _, err := rand.Read(payload[:first]); err != nil {
		panic(err)
	}
	for off := first; off < size; off += copy(payload[off:], payload[:first]) {
	}
	return payload
}

// serverCredentials: TLS presents server.pem; mTLS also demands a client certificate signed by ca.pem.
func serverCredentials(security, dir string) (credentials.TransportCredentials, error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key"))
	if err != nil {
		return nil, fmt.Errorf("server certificate in %s: %w", dir, err)
	}
	config := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if security == "mtls" {
		pem, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
		if err != nil {
			return nil, fmt.Errorf("CA certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("CA certificate: no PEM certificate in " + filepath.Join(dir, "ca.pem"))
		}
		config.ClientCAs = pool
		config.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return credentials.NewTLS(config), nil
}

func main() {
	host := flag.String("host", "", "address to listen on")
	port := flag.Int("port", 0, "port to listen on")
	size := flag.Int64("size", 0, "payload bytes, allocated before serving")
	chunk := flag.Int("chunk_bytes", 0, "bytes per streamed message")
	security := flag.String("security", "none", "none | tls | mtls")
	tlsDir := new(string)
	// The command passes {home}/tls; an empty --tls_dir from the matrix keeps it.
	flag.Func("tls_dir", "folder with ca.pem, server.pem, server.key", func(value string) error {
		if value != "" {
			*tlsDir = value
		}
		return nil
	})
	checksum := flag.Int("checksum", 0, "1: print SHA256 of the payload before READY (test mode)")
	flag.Parse()
	if *host == "" || *port <= 0 || *size <= 0 || *chunk <= 0 {
		fmt.Fprintln(os.Stderr, "usage: throughput_server_go --host H --port P --size N --chunk_bytes N [--security none|tls|mtls --tls_dir D]")
		os.Exit(2)
	}

	var options []grpc.ServerOption
	switch *security {
	case "none":
	case "tls", "mtls":
		creds, err := serverCredentials(*security, *tlsDir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cannot set up", *security+":", err)
			os.Exit(1)
		}
		options = append(options, grpc.Creds(creds))
	default:
		fmt.Fprintln(os.Stderr, "unknown --security", *security)
		os.Exit(2)
	}

	payload := makePayload(int(*size))
	if *checksum == 1 {
		sum := sha256.Sum256(payload)
		fmt.Println("SHA256", hex.EncodeToString(sum[:]))
	}

	listener, err := net.Listen("tcp", net.JoinHostPort(*host, fmt.Sprint(*port)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot listen:", err)
		os.Exit(1)
	}
	server := grpc.NewServer(options...)
	pb.RegisterDataServiceServer(server, &dataServer{payload: payload, chunk: *chunk})

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		// Stop, not GracefulStop: a stream of gigabytes would hold the exit for its whole length.
		server.Stop()
	}()

	fmt.Println("READY")
	if err := server.Serve(listener); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}
