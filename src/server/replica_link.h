// A replica's link to its primary (docs/replication.md, "The replica
// side"): one thread per link that connects, speaks Redis's handshake
// (PING, AUTH, REPLCONF, PSYNC), receives a full sync's snapshot into a
// file, then reads the stream and sends REPLCONF ACK every second. It never
// touches the keyspace: what it receives goes, in order, to worker 0 as
// events (a snapshot to load, a continuation, stream bytes, the link's end),
// and worker 0 applies them holding every shard (Worker::ServeMasterLink).
//
// Why a thread and blocking reads: the link is one socket with a strict
// sequence of steps and long waits (the primary's snapshot), which reads
// plainly as straight-line code with timeouts; the workers' loops stay as
// they are.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net/tls.h"

namespace peregrine {

class ReplicaLink {
 public:
  struct Settings {
    std::string host;
    int port = 0;
    std::string masteruser, masterauth;  // AUTH before the handshake when masterauth is set
    int listening_port = 0;              // REPLCONF listening-port (replica-announce-port, else port)
    std::string announce_ip;             // REPLCONF ip-address when set (replica-announce-ip)
    int timeout_s = 60;                  // repl-timeout
    // A socket already connected to the primary, used for one session and
    // no other (the fuzzer's; -1: connect to host:port, again and again).
    int connected_fd = -1;
    // FAILOVER's last step (this server was the primary): the first PSYNC
    // says FAILOVER, so that the target takes over (Redis's PSYNC ...
    // FAILOVER); if it refuses, or the link fails first, kRefused.
    bool failover = false;
    // tls-replication: the link is TLS, with these tls-* settings (the
    // primary's certificate checked against the CA).
    bool tls = false;
    TlsSettings tls_settings;
    // repl-diskless-load: 0 disabled (the snapshot to a file, then
    // loaded), 1 on-empty-db (loaded as it comes when this server has no
    // keys), 2 swapdb (loaded as it comes).
    int diskless_load = 0;
    // Counts what it reads from the primary (INFO total_net_repl_input_bytes).
    std::atomic<uint64_t>* bytes_in = nullptr;
  };
  // Redis's repl_state names as ROLE shows them.
  enum class State : uint8_t { kConnect, kConnecting, kHandshake, kTransfer, kConnected };
  static const char* StateName(State s);

  struct Event {
    enum class Kind : uint8_t {
      kFullSync,  // `data`: the snapshot's file, or `fd` (a pipe it comes through); `replid`, `offset`: +FULLRESYNC's
      kContinue,  // +CONTINUE; `replid`: the primary's ID when it named one
      kBytes,     // stream bytes, in order
      kDown,      // the link ended: a command cut short is dropped
      kRefused,   // a failover's PSYNC was refused, or never answered
      kAccepted,  // a failover's PSYNC was answered +FULLRESYNC (its snapshot follows)
    };
    Kind kind;
    std::string data, replid;
    uint64_t offset = 0;
    // A diskless load's pipe (the reading end, the loader's to close) and
    // the snapshot's size if the primary said it (else 0).
    int fd = -1;
    uint64_t size = 0;
  };

  // `replid` and `offset`: the history this server has (PSYNC asks to
  // continue it at offset + 1; an empty replid asks "? -1").
  // `wake`: wakes worker 0.
  ReplicaLink(Settings settings, std::string replid, uint64_t offset, std::function<void()> wake);
  ~ReplicaLink();  // Stop()
  ReplicaLink(const ReplicaLink&) = delete;
  ReplicaLink& operator=(const ReplicaLink&) = delete;

  void Start();
  // Closes the link and joins the thread (an unfinished snapshot's file
  // is removed).
  void Stop();

  // master_link_status:up (any thread).
  bool up() const { return up_.load(std::memory_order_relaxed); }
  const std::string& host() const { return settings_.host; }
  int port() const { return settings_.port; }

  // --- Worker 0 ---
  bool told() const { return told_.load(std::memory_order_acquire); }
  // The events since the last call, in order.
  std::vector<Event> TakeEvents();
  // After TakeEvents' events are applied: the history now (the next PSYNC
  // continues it), and whether a snapshot loaded (false drops the link).
  void Applied(const std::string& replid, uint64_t offset);
  void LoadDone(bool ok);
  // REPLCONF ACK <offset> now (REPLCONF GETACK), sent by the thread (it
  // sends one a second by itself too).
  void RequestAck();
  // The stream had an error: the link is dropped and made again.
  void Drop();
  // CONFIG SET of masterauth, masteruser, repl-timeout: for the next
  // connection (the timeout at once).
  void UpdateSettings(const std::string& masteruser, const std::string& masterauth, int timeout_s);
  // With an append-only file: the offset up to which it is durable, sent
  // as REPLCONF ACK's FACK (Redis 7.2, for WAITAOF); -1: none (no file).
  void SetFsynced(int64_t offset) { fsynced_.store(offset, std::memory_order_relaxed); }
  // Whether this server has no keys (repl-diskless-load on-empty-db loads
  // a snapshot as it comes only then), as worker 0 last saw it.
  void SetDatasetEmpty(bool empty) { dataset_empty_.store(empty, std::memory_order_relaxed); }
  void UpdateDisklessLoad(int mode) { diskless_load_.store(mode, std::memory_order_relaxed); }

  // The thread has ended (a link on connected_fd, after its session).
  bool finished() const { return finished_.load(std::memory_order_acquire); }

  // --- INFO replication, ROLE (any thread) ---
  struct Status {
    State state = State::kConnect;
    bool up = false;
    int64_t down_since_ms = 0;   // when the link went down (0: never up)
    int64_t last_io_ms = 0;      // the last bytes from the primary
    int64_t sync_total = -1;     // a snapshot's size (-1: unknown, an $EOF: transfer)
    int64_t sync_read = 0;
    uint64_t offset = 0;         // applied (slave_repl_offset)
    uint64_t read_offset = 0;    // received (slave_read_repl_offset)
    bool syncing = false;        // master_sync_in_progress
    // The connection while up: its socket and both ends' addresses (the
    // primary's client in CLIENT LIST).
    int fd = -1;
    std::string addr, laddr;
  };
  Status status();

 private:
  void Main();
  // One connection, from connect to its end. Returns when it ends.
  void Session();
  bool Handshake(std::string* psync_reply);
  bool ReceiveSnapshot(const std::string& replid, uint64_t offset);
  // The snapshot's bytes (`total` of them, or up to `mark`) from the socket
  // to `out`, in pieces; false if the link or `out` failed.
  bool ReadPayload(int64_t total, const std::string& mark, const std::function<bool(const char*, size_t)>& out);
  // Into a file for worker 0 to load after (`name`, fsynced).
  bool PayloadToFile(const char* name, int64_t total, const std::string& mark);
  // Into a pipe worker 0 loads from as it comes (its reading end in the
  // event pushed first).
  bool PayloadToPipe(const std::string& replid, uint64_t offset, int64_t total, const std::string& mark);
  // Waits for worker 0's load, with Redis's newline a second to the
  // primary meanwhile.
  bool WaitLoaded();
  void Stream();
  // Socket helpers, with the timeout (false: error, timeout or stop).
  bool Connect();
  // The socket's reads and writes, through TLS when the link has it; the
  // poll events a would-block wants.
  ssize_t IoRead(char* buf, size_t n);
  ssize_t IoWrite(const char* buf, size_t n);
  short WaitEvents(bool reading) const;
  bool Buffered() const { return tls_ != nullptr && tls_->HasPending(); }
  bool SendAll(const std::string& bytes);
  bool ReadMore();
  bool ReadLine(std::string* line);
  bool Command(const std::vector<std::string>& args, std::string* reply);
  void Push(Event ev);
  void SendAck();
  void WakeThread();
  void SetState(State s);
  void CloseSocket();
  bool Sleep(int ms);

  Settings settings_;
  std::function<void()> wake_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> told_{false};
  std::atomic<bool> up_{false};
  std::atomic<bool> finished_{false};
  std::atomic<bool> ack_wanted_{false};
  std::atomic<int> timeout_s_{60};
  std::atomic<int64_t> fsynced_{-1};
  std::atomic<bool> dataset_empty_{true};
  std::atomic<int> diskless_load_{0};
  int wake_fd_ = -1;  // wakes the thread's poll (Stop, Drop, RequestAck)
  std::atomic<int> fd_{-1};
  std::string in_;  // (the thread's) received and not yet handed on
  std::string temp_file_;
  std::unique_ptr<TlsContext> tls_ctx_;  // (the thread's)
  std::unique_ptr<TlsSession> tls_;

  std::mutex mu_;  // everything below
  std::condition_variable cv_;
  std::vector<Event> events_;
  bool applying_ = false;  // worker 0 has events in hand
  int load_result_ = -1;   // -1: not yet; 0 failed; 1 loaded
  std::string replid_;
  uint64_t offset_ = 0;    // applied
  bool drop_ = false;
  Status status_;
  std::mutex write_mu_;  // the socket's writes (the thread's and SendAck's)
};

}  // namespace peregrine
