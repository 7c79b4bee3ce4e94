// readall-go - read a whole file the four ways lab note 003 benchmarked, with Go's own
// standard library (io.ReadAll and os.ReadFile are the modern names of ioutil.ReadAll and
// ioutil.ReadFile).
//
// Usage: readall-go -m readall|readfile|readfull|fixed FILE
//
// I/O pattern on FILE by mode (every mode opens it once with os.Open or os.ReadFile):
//
//	readall   io.ReadAll(f): reads into a 512-byte buffer and grows it while it fills; the
//	          growth rule is the Go release's own (append's growth before Go 1.26,
//	          chunks of 256, 384, 576, ... bytes rounded up to the allocator's size classes
//	          from Go 1.26 on). Each read asks for all the free space, so a regular file
//	          costs one read per buffer step plus a final read returning 0.
//	readfile  os.ReadFile(FILE): fstat, then a buffer of size+1 bytes (at least 512): one
//	          read returning the whole file and one returning 0.
//	readfull  fstat, a buffer of exactly the size, io.ReadFull: one read (none for an empty
//	          file), no read at EOF.
//	fixed     the note's BenchmarkFixedSizeBuffer: 4096-byte reads until one returns 0,
//	          each appending the whole 4096-byte buffer (as the note's code does) to a slice
//	          that starts with capacity 4096.
//
// Output: one line "mode=M bytes=B sec=S alloc=A mallocs=N maxrss_kib=R go=V" where B is the
// length of the slice the call returned, S the seconds the call took (monotonic), A and N
// the bytes and objects the Go heap allocated during the call (runtime.MemStats TotalAlloc
// and Mallocs deltas: the note's B/op and allocs/op), R the process's peak resident set in
// KiB (getrusage) and V runtime.Version().
//
// Exit status: 0 on success, 1 on a runtime error, 2 on bad arguments.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"time"
)

const prog = "readall-go"

func usage() {
	fmt.Fprintf(os.Stderr, "usage: %s -m readall|readfile|readfull|fixed FILE\n", prog)
	os.Exit(2)
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "%s: %s: %v\n", prog, what, err)
	os.Exit(1)
}

func readAll(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func readFull(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data := make([]byte, fi.Size())
	_, err = io.ReadFull(f, data)
	return data, err
}

// The note's fixed-size loop, kept as written: it appends the whole buffer even after a
// short read, so its result can be longer than the file.
func readFixed(path string) ([]byte, error) {
	const bufsize = 4 * 1024
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, 0, bufsize)
	buf := make([]byte, bufsize)
	for {
		n, err := f.Read(buf)
		if n == 0 {
			break
		}
		if err != nil {
			return nil, err
		}
		data = append(data, buf...)
	}
	return data, nil
}

var modes = map[string]func(string) ([]byte, error){
	"readall":  readAll,
	"readfile": os.ReadFile,
	"readfull": readFull,
	"fixed":    readFixed,
}

func main() {
	mode := flag.String("m", "", "readall, readfile, readfull or fixed")
	flag.Usage = usage
	flag.CommandLine.SetOutput(io.Discard) // usage() says it in one line
	flag.Parse()
	read, ok := modes[*mode]
	if !ok || flag.NArg() != 1 {
		usage()
	}
	path := flag.Arg(0)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	data, err := read(path)
	sec := time.Since(start).Seconds()
	runtime.ReadMemStats(&after)
	if err != nil {
		fail("read "+path, err)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fail("getrusage", err)
	}
	fmt.Printf("mode=%s bytes=%d sec=%.9f alloc=%d mallocs=%d maxrss_kib=%d go=%s\n",
		*mode, len(data), sec, after.TotalAlloc-before.TotalAlloc,
		after.Mallocs-before.Mallocs, ru.Maxrss, runtime.Version())
}
