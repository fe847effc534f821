// A go-redis ClusterClient writer for tests/test_cluster_clients.py.
//
//	writer SEED_HOST:PORT N PREFIX RATE HOT
//
// Given one node's address only, the client finds the rest of the cluster by
// itself. Workers take indexes 0, 1, 2, ... from one counter, index i not
// before i/RATE seconds from the start. For index i one of them writes
// PREFIX:i (no hash tag: these keys spread over the slots) with value(i);
// when i%4 == 1 also {HOT}PREFIX:i (HOT: a hash tag whose slot the test
// moves, so that the slot holds many keys, and is written to, while it is
// migrated: ASK and ASKING); when i%25 == 0 it MSETs and MGETs a pair,
// {PREFIX:m<i>}a / b (i%50 == 0) or {HOT}PREFIX:m<i>a / b (TRYAGAIN while
// the slot is half moved). It reads back its own writes from a few indexes
// before. It goes on until it has taken at least N indexes AND its standard
// input is closed (the test closes it once the reshard is over), so every
// index below the final count was written exactly once. MOVED, ASK and
// TRYAGAIN are the client's to follow (generous redirect and retry limits);
// anything that still reaches the program is counted as an error and
// printed to stderr. The last line on stdout is a JSON object of counts; the
// exit status is 1 when any error or wrong read-back was counted.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	workers     = 4
	readLag     = 8  // each worker reads back its own write from this many writes before
	hotEvery    = 4  // a {HOT} key for index i when i%hotEvery == 1
	multiEvery  = 25 // a pair when i%multiEvery == 0: {HOT} ones when i%(2*multiEvery) != 0
	maxDuration = 240 * time.Second
	maxIndexes  = 2000000
)

// value is the value of keys PREFIX:i and {HOT}PREFIX:i; the test computes the same.
func value(prefix string, i int64) string {
	return fmt.Sprintf("%s=%d#%d", prefix, i, (i*i)%1000003)
}

func spreadKey(prefix string, i int64) string { return prefix + ":" + strconv.FormatInt(i, 10) }

func hotKey(hot, prefix string, i int64) string {
	return "{" + hot + "}" + prefix + ":" + strconv.FormatInt(i, 10)
}

type counts struct {
	Client      string `json:"client"`
	Keys        int64  `json:"keys"`
	WritesOK    int64  `json:"writes_ok"`
	ReadsOK     int64  `json:"reads_ok"`
	MultiOK     int64  `json:"multi_ok"`
	Errors      int64  `json:"errors"`
	Mismatches  int64  `json:"mismatches"`
	DeadlineHit bool   `json:"deadline_hit"`
}

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: writer HOST:PORT N PREFIX RATE HOT")
		os.Exit(2)
	}
	seed, prefix, hot := os.Args[1], os.Args[3], os.Args[5]
	n, err := strconv.ParseInt(os.Args[2], 10, 64)
	rate, err2 := strconv.ParseFloat(os.Args[4], 64)
	if err != nil || err2 != nil || n <= 0 || rate <= 0 {
		fmt.Fprintln(os.Stderr, "N and RATE must be positive numbers")
		os.Exit(2)
	}

	client := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:           []string{seed},
		MaxRedirects:    128, // ASK, MOVED and TRYAGAIN count
		MinRetryBackoff: 5 * time.Millisecond,
		MaxRetryBackoff: 200 * time.Millisecond, // a TRYAGAIN costs up to this: ~8 s of them
		DialTimeout:     5 * time.Second,
		ReadTimeout:     10 * time.Second,
		WriteTimeout:    10 * time.Second,
	})
	defer client.Close()

	var stopped atomic.Bool
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stopped.Store(true)
	}()

	ctx := context.Background()
	start := time.Now()
	deadline := start.Add(maxDuration)
	var next, writesOK, readsOK, multiOK, errs, mismatches atomic.Int64
	var deadlineHit atomic.Bool
	fail := func(what string, err error) {
		errs.Add(1)
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
	}

	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []int64
			for {
				if next.Load() >= n && stopped.Load() {
					return
				}
				if time.Now().After(deadline) || next.Load() >= maxIndexes {
					deadlineHit.Store(true)
					return
				}
				i := next.Add(1) - 1
				time.Sleep(time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))))
				set := func(key string) {
					if err := client.Set(ctx, key, value(prefix, i), 0).Err(); err != nil {
						fail("SET "+key, err)
					} else {
						writesOK.Add(1)
					}
				}
				set(spreadKey(prefix, i))
				if i%hotEvery == 1 {
					set(hotKey(hot, prefix, i))
				}
				mine = append(mine, i)
				if len(mine) > readLag {
					j := mine[len(mine)-1-readLag]
					keys := []string{spreadKey(prefix, j)}
					if j%hotEvery == 1 {
						keys = append(keys, hotKey(hot, prefix, j))
					}
					for _, k := range keys {
						got, err := client.Get(ctx, k).Result()
						switch {
						case err != nil:
							fail("GET "+k, err)
						case got != value(prefix, j):
							mismatches.Add(1)
							fmt.Fprintf(os.Stderr, "GET %s: %q, want %q\n", k, got, value(prefix, j))
						default:
							readsOK.Add(1)
						}
					}
				}
				if i%multiEvery == 0 {
					tag := fmt.Sprintf("{%s:m%d}", prefix, i)
					if i%(2*multiEvery) != 0 {
						tag = fmt.Sprintf("{%s}%s:m%d", hot, prefix, i)
					}
					a, b := fmt.Sprintf("a:%d", i), fmt.Sprintf("b:%d", i)
					if err := client.MSet(ctx, tag+"a", a, tag+"b", b).Err(); err != nil {
						fail("MSET "+tag, err)
						continue
					}
					got, err := client.MGet(ctx, tag+"a", tag+"b").Result()
					switch {
					case err != nil:
						fail("MGET "+tag, err)
					case len(got) != 2 || got[0] != a || got[1] != b:
						mismatches.Add(1)
						fmt.Fprintf(os.Stderr, "MGET %s: %v\n", tag, got)
					default:
						multiOK.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()

	out := counts{
		Client: "go-redis", Keys: next.Load(), WritesOK: writesOK.Load(), ReadsOK: readsOK.Load(),
		MultiOK: multiOK.Load(), Errors: errs.Load(), Mismatches: mismatches.Load(), DeadlineHit: deadlineHit.Load(),
	}
	line, _ := json.Marshal(out)
	fmt.Println(string(line))
	if out.Errors > 0 || out.Mismatches > 0 || out.DeadlineHit || out.Keys < n {
		os.Exit(1)
	}
}
